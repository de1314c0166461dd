package grade

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"knobs/field"
	"knobs/ordered"
	"knobs/preset"
)

// JudgeSpec is an LLM judge: a preset that reads an answer and scores it.
// The experiment runner fills the preset with JudgeValues, asks for
// JudgeSchema as its response_format where the provider takes one, and
// reads the answer with ReadAnswer.
type JudgeSpec struct {
	Type    string `json:"type"` // "judge"
	Name    string `json:"name,omitempty"`
	Preset  string `json:"preset"`            // the preset's id or name
	Label   string `json:"label,omitempty"`   // run the version this label points at
	Version int    `json:"version,omitempty"` // or this version; neither: as a run of the preset would
	// Scale is the judge's score scale: 1 for 0 to 1 (the default), 5
	// for 1 to 5, 10 for 1 to 10.
	Scale int `json:"scale,omitempty"`
	// PassAt is the score, scaled to [0, 1], at which an answer passes.
	PassAt float64 `json:"pass_at"`
}

// MaxJudgeAnswer bounds the judge answer ReadAnswer reads, in bytes.
const MaxJudgeAnswer = 256 << 10

// maxJudgeReason bounds the judge's reason kept in a grade, in
// characters.
const maxJudgeReason = 1000

var judgeKeys = []string{"type", "name", "preset", "label", "version", "scale", "pass_at"}

// ParseJudge reads a judge grader. Its error is a field.Errors keyed by
// setting.
func ParseJudge(raw json.RawMessage) (JudgeSpec, error) {
	keys, fe := decodeObject(raw)
	if fe != nil {
		return JudgeSpec{}, fe
	}
	var in struct {
		JudgeSpec
		PassAt *float64 `json:"pass_at"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			want := "a string"
			switch te.Field {
			case "version", "scale":
				want = "a whole number"
			case "pass_at":
				want = "a number"
			}
			return JudgeSpec{}, field.Errors{te.Field: fmt.Sprintf("%s must be %s, not %s.", te.Field, want, te.Value)}
		}
		return JudgeSpec{}, field.Errors{"grader": "The grader is not valid JSON: " + err.Error()}
	}
	j := in.JudgeSpec
	fe = field.Errors{}
	if j.Type != "judge" {
		fe.Add("type", fmt.Sprintf(`A judge grader has "type":"judge", not %q.`, j.Type))
	}
	for _, k := range keys {
		if !slices.Contains(judgeKeys, k) {
			fe.Add(k, fmt.Sprintf("The judge grader has no setting %q; it takes %s.", k, strings.Join(judgeKeys[1:], ", ")))
		}
	}
	if utf8.RuneCountInString(j.Name) > MaxNameLength {
		fe.Add("name", fmt.Sprintf("A grader's name is at most %d characters.", MaxNameLength))
	}
	j.Preset = strings.TrimSpace(j.Preset)
	switch {
	case j.Preset == "":
		fe.Add("preset", "Name the judge's preset, by id or name.")
	case utf8.RuneCountInString(j.Preset) > 100:
		fe.Add("preset", "A preset's id or name is at most 100 characters.")
	}
	if j.Label != "" {
		name, msg := preset.LabelName(j.Label)
		if msg != "" {
			fe.Add("label", msg)
		}
		j.Label = name
	}
	switch {
	case j.Version < 0:
		fe.Add("version", "version is 1 or more.")
	case j.Version > 0 && j.Label != "":
		fe.Add("version", "Give a label or a version, not both.")
	}
	switch j.Scale {
	case 0:
		j.Scale = 1
	case 1, 5, 10:
	default:
		fe.Add("scale", fmt.Sprintf("scale is 1 (scores 0 to 1), 5 (1 to 5) or 10 (1 to 10), not %d.", j.Scale))
	}
	j.PassAt = 0.5
	if in.PassAt != nil {
		if *in.PassAt < 0 || *in.PassAt > 1 {
			fe.Add("pass_at", "pass_at is between 0 and 1: the score, scaled to 0 to 1, at which an answer passes.")
		}
		j.PassAt = *in.PassAt
	}
	if !fe.Empty() {
		return JudgeSpec{}, fe
	}
	return j, nil
}

// JudgeSchema is the response_format a judge is asked for: an object
// with a reason and a score. The reason comes first so that a model
// writing in order gives its reasons before its number.
func JudgeSchema() json.RawMessage {
	return json.RawMessage(`{"type":"json_schema","json_schema":{"name":"judge_verdict","strict":true,"schema":{"type":"object","properties":{"reason":{"type":"string"},"score":{"type":"number"}},"required":["reason","score"],"additionalProperties":false}}}`)
}

// JudgeValues are the values a judge's preset is filled with: the row's
// variables, then input (the prompt the variant sent, as text), output
// (the answer) and expected (the row's expected answer, left out when the
// row has none, so that a judge preset using {{expected}} reports it
// missing instead of reading an empty string). Knobs' three names win
// over row variables of the same names.
func JudgeValues(input string, in Input) map[string]string {
	v := maps.Clone(in.Vars)
	if v == nil {
		v = map[string]string{}
	}
	delete(v, "expected")
	v["input"] = input
	v["output"] = in.Output
	if in.Expected != nil {
		v["expected"] = *in.Expected
	}
	return v
}

// ParseJudgeAnswer reads a judge's answer on the default scale (0 to 1,
// or the scale the answer declares) passing at 0.5; see
// JudgeSpec.ReadAnswer.
func ParseJudgeAnswer(text string) (Grade, error) {
	return JudgeSpec{Scale: 1, PassAt: 0.5}.ReadAnswer(text)
}

// ReadAnswer reads a judge's answer: a JSON object {"score", "reason"},
// possibly in a ```json fence or after some prose (the first "{" starts
// it). The answer may say "scale" (1, 5 or 10) when the judge's spec
// leaves it to the default. The score is scaled to [0, 1]. An answer
// without a readable score, or with one outside the scale, is a grading
// error: never a silent 0.
func (j JudgeSpec) ReadAnswer(text string) (Grade, error) {
	if len(text) > MaxJudgeAnswer {
		return Grade{}, fmt.Errorf("the judge's answer is over %d KiB, more than a verdict needs", MaxJudgeAnswer>>10)
	}
	body, _ := unfence(text)
	i := strings.IndexByte(body, '{')
	if i < 0 {
		return Grade{}, fmt.Errorf("the judge's answer has no JSON object: %s", quoted(strings.TrimSpace(text)))
	}
	body = body[i:]
	if ordered.Depth([]byte(body)) > ordered.MaxDepth {
		return Grade{}, errors.New("the judge's answer is JSON " + (&ordered.DepthError{}).Error())
	}
	var a struct {
		Score  json.RawMessage `json:"score"`
		Reason json.RawMessage `json:"reason"`
		Scale  json.RawMessage `json:"scale"`
	}
	// The decoder reads the first object and ignores prose after it.
	if err := json.NewDecoder(strings.NewReader(body)).Decode(&a); err != nil {
		return Grade{}, fmt.Errorf("the judge's answer is not a readable JSON object: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	var score float64
	if len(a.Score) == 0 || string(a.Score) == "null" {
		return Grade{}, errors.New(`the judge's answer has no "score"`)
	}
	if err := json.Unmarshal(a.Score, &score); err != nil {
		return Grade{}, fmt.Errorf(`the judge's "score" is %s, not a number`, clip(string(a.Score), 40))
	}
	var reason string
	if len(a.Reason) > 0 && string(a.Reason) != "null" && json.Unmarshal(a.Reason, &reason) != nil {
		return Grade{}, fmt.Errorf(`the judge's "reason" is %s, not text`, clip(string(a.Reason), 40))
	}
	scale := j.Scale
	if scale == 0 {
		scale = 1
	}
	if len(a.Scale) > 0 && string(a.Scale) != "null" {
		var s float64
		if json.Unmarshal(a.Scale, &s) != nil || (s != 1 && s != 5 && s != 10) {
			return Grade{}, fmt.Errorf(`the judge's "scale" is %s: Knobs reads 1, 5 or 10`, clip(string(a.Scale), 40))
		}
		if j.Scale > 1 && int(s) != j.Scale {
			return Grade{}, fmt.Errorf("the judge answered on a scale of %g, and its grader says %d", s, j.Scale)
		}
		scale = int(s)
	}
	lo, hi := 1.0, float64(scale)
	if scale == 1 {
		lo = 0
	}
	if score < lo || score > hi {
		msg := fmt.Sprintf("the judge's score %g is outside its scale, %g to %g", score, lo, hi)
		if scale == 1 && score > 1 && score <= 10 {
			msg += `: if the judge scores 1 to 5 or 1 to 10, set "scale" on the grader`
		}
		return Grade{}, errors.New(msg)
	}
	norm := (score - lo) / (hi - lo)
	reason = strings.TrimSpace(reason)
	if reason == "" {
		reason = "(the judge gave no reason)"
	}
	shown := fmt.Sprintf("%g", score)
	if scale > 1 {
		shown = fmt.Sprintf("%g/%d", score, scale)
	}
	return Grade{Pass: norm >= j.PassAt, Score: norm, Reason: "judge " + shown + ": " + clip(reason, maxJudgeReason)}, nil
}
