package grade

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"knobs/field"
)

// Limits of a grader's settings.
const (
	MaxSpecSize    = 128 << 10 // a grader's JSON, in bytes
	MaxSchemaSize  = 64 << 10  // a json_schema grader's schema, in bytes
	MaxValueSize   = 64 << 10  // an exact or json_path_equals value, in bytes
	MaxTerms       = 100       // terms of contains and not_contains
	MaxTermLength  = 1000      // characters of one term
	MaxPatternLen  = 1000      // characters of a regex pattern
	MaxPathLength  = 1000      // characters of a JSON path
	MaxPathSteps   = 32        // steps of a JSON path
	MaxNameLength  = 64        // characters of a grader's name
	maxFilledBytes = 1 << 20   // a value once its templates are filled in
)

// Input is what a grader reads of one cell: the answer, the row and the
// run.
type Input struct {
	Output    string
	Expected  *string           // the row's expected answer; nil when it has none
	Vars      map[string]string // the row's variables
	LatencyMs float64
	CostUSD   float64
	CostKnown bool // false when the model's price is not known
	// ResponseFormat is the variant's response_format, for the
	// json_schema grader with "schema":"response_format".
	ResponseFormat json.RawMessage
}

// Grade is a grader's verdict on one cell.
type Grade struct {
	Pass   bool    `json:"pass"`
	Score  float64 `json:"score"`  // in [0, 1]
	Reason string  `json:"reason"` // why, in a few words, for the grid
}

// Grader grades a cell. Its error is a grading error: the grader could
// not run on this cell (no expected answer, unknown cost). Its text is
// for the user. A Grader is safe for use by several goroutines at once.
type Grader interface {
	Grade(Input) (Grade, error)
}

// Spec is a grader as a user writes it in JSON. Which fields a type
// takes is listed in the package documentation; Parse refuses the others.
type Spec struct {
	Type          string          `json:"type"`
	Name          string          `json:"name,omitempty"`
	Value         json.RawMessage `json:"value,omitempty"`
	IgnoreCase    bool            `json:"ignore_case,omitempty"`
	TrimSpace     bool            `json:"trim_space,omitempty"`
	CollapseSpace bool            `json:"collapse_space,omitempty"`
	Terms         []string        `json:"terms,omitempty"`
	Mode          string          `json:"mode,omitempty"`
	Pattern       string          `json:"pattern,omitempty"`
	MustNotMatch  bool            `json:"must_not_match,omitempty"`
	StripFence    bool            `json:"strip_fence,omitempty"`
	Schema        json.RawMessage `json:"schema,omitempty"`
	Path          string          `json:"path,omitempty"`
	Min           *int            `json:"min,omitempty"`
	Max           *int            `json:"max,omitempty"`
	Unit          string          `json:"unit,omitempty"`
	MaxMs         *float64        `json:"max_ms,omitempty"`
	MaxUSD        *float64        `json:"max_usd,omitempty"`
}

// settings lists the keys each type takes besides "type" and "name".
var settings = map[string][]string{
	"exact":            {"value", "ignore_case", "trim_space", "collapse_space"},
	"contains":         {"terms", "mode", "ignore_case"},
	"not_contains":     {"terms", "mode", "ignore_case"},
	"regex":            {"pattern", "ignore_case", "must_not_match"},
	"json":             {"strip_fence"},
	"json_schema":      {"schema", "strip_fence"},
	"json_path_equals": {"path", "value", "strip_fence"},
	"length":           {"min", "max", "unit"},
	"latency":          {"max_ms"},
	"cost":             {"max_usd"},
}

// Types lists the grader types Parse reads, and "judge".
var Types = []string{"exact", "contains", "not_contains", "regex", "json", "json_schema", "json_path_equals", "length", "latency", "cost", "judge"}

// TypeOf returns the "type" of a grader's JSON, or "" when it has none:
// a caller sends "judge" to ParseJudge and the rest to Parse.
func TypeOf(raw json.RawMessage) string {
	var s struct {
		Type string `json:"type"`
	}
	if len(raw) > MaxSpecSize || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s.Type
}

// NameOf is what the grid calls a grader: its "name", else its type.
func NameOf(raw json.RawMessage) string {
	var s struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if len(raw) > MaxSpecSize || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	if n := strings.TrimSpace(s.Name); n != "" {
		return clip(n, MaxNameLength)
	}
	return s.Type
}

// Parse reads a grader. Its error is a field.Errors naming each setting
// that is wrong, keyed by the setting's name.
func Parse(raw json.RawMessage) (Grader, error) {
	keys, fe := decodeObject(raw)
	if fe != nil {
		return nil, fe
	}
	var s Spec
	if fe := decodeSpec(raw, &s); fe != nil {
		return nil, fe
	}
	fe = field.Errors{}
	allowed, ok := settings[s.Type]
	switch {
	case s.Type == "":
		fe.Add("type", "Say which grader: "+strings.Join(Types, ", ")+".")
		return nil, fe
	case s.Type == "judge":
		fe.Add("type", "A judge grader calls a preset: it is read by ParseJudge, not Parse.")
		return nil, fe
	case !ok:
		fe.Add("type", fmt.Sprintf("Knobs has no grader %q: use one of %s.", s.Type, strings.Join(Types, ", ")))
		return nil, fe
	}
	for _, k := range keys {
		if k != "type" && k != "name" && !slices.Contains(allowed, k) {
			fe.Add(k, fmt.Sprintf("The %s grader has no setting %q; it takes %s.", s.Type, k, strings.Join(allowed, ", ")))
		}
	}
	if utf8.RuneCountInString(s.Name) > MaxNameLength {
		fe.Add("name", fmt.Sprintf("A grader's name is at most %d characters.", MaxNameLength))
	}
	has := func(k string) bool { return slices.Contains(keys, k) }
	var g Grader
	switch s.Type {
	case "exact":
		g = parseExact(s, fe)
	case "contains", "not_contains":
		g = parseContains(s, fe)
	case "regex":
		g = parseRegex(s, fe)
	case "json":
		g = jsonGrader{strip: s.StripFence}
	case "json_schema":
		g = parseSchema(s, has("schema"), fe)
	case "json_path_equals":
		g = parsePathEquals(s, has("value"), fe)
	case "length":
		g = parseLength(s, fe)
	case "latency":
		g = parseLatency(s, fe)
	case "cost":
		g = parseCost(s, fe)
	}
	if !fe.Empty() {
		return nil, fe
	}
	return g, nil
}

// decodeObject checks that raw is one JSON object of bounded size and
// returns its keys in order.
func decodeObject(raw json.RawMessage) ([]string, field.Errors) {
	if len(raw) > MaxSpecSize {
		return nil, field.Errors{"grader": fmt.Sprintf("A grader is at most %d KiB of JSON.", MaxSpecSize>>10)}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, field.Errors{"grader": `A grader is a JSON object such as {"type":"contains","terms":["yes"]}.`}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, nil
}

// decodeSpec reads raw into s, naming the setting whose JSON type is
// wrong.
func decodeSpec(raw json.RawMessage, s *Spec) field.Errors {
	err := json.Unmarshal(raw, s)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		key, _, _ := strings.Cut(te.Field, ".")
		return field.Errors{key: fmt.Sprintf("%s must be %s, not %s.", key, wantType(key), te.Value)}
	}
	return field.Errors{"grader": "The grader is not valid JSON: " + err.Error()}
}

func wantType(key string) string {
	switch key {
	case "ignore_case", "trim_space", "collapse_space", "must_not_match", "strip_fence":
		return "true or false"
	case "terms":
		return "a list of strings"
	case "min", "max":
		return "a whole number"
	case "max_ms", "max_usd":
		return "a number"
	}
	return "a string"
}

// placeholder is {{name}}, spaces or tabs allowed inside the braces, as
// in a preset's prompt.
var placeholder = regexp.MustCompile(`\{\{[ \t]*([A-Za-z_][A-Za-z0-9_]{0,63})[ \t]*\}\}`)

// fill replaces the placeholders of s with the row's values, each passed
// through quote first. A placeholder the row has no value for is a
// grading error.
func fill(s string, in Input, quote func(string) string) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	var b strings.Builder
	last := 0
	for _, m := range placeholder.FindAllStringSubmatchIndex(s, -1) {
		name := s[m[2]:m[3]]
		var v string
		switch val, ok := in.Vars[name]; {
		case name == "expected" && in.Expected == nil:
			return "", errors.New("the grader uses {{expected}}, and this row has no expected answer")
		case name == "expected":
			v = *in.Expected
		case !ok:
			return "", fmt.Errorf("the grader uses {{%s}}, and this row has no variable %s", name, name)
		default:
			v = val
		}
		if quote != nil {
			v = quote(v)
		}
		if b.Len()+m[0]-last+len(v) > maxFilledBytes {
			return "", fmt.Errorf("the grader's value is over %d MiB once the row's values are filled in", maxFilledBytes>>20)
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(v)
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// clip shortens s for a reason: at most n characters, with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// quoted is s clipped and quoted for a reason.
func quoted(s string) string { return fmt.Sprintf("%q", clip(s, 60)) }

func passFail(pass bool, reason string) Grade {
	g := Grade{Pass: pass, Reason: reason}
	if pass {
		g.Score = 1
	}
	return g
}

// compact returns raw without insignificant spaces, for messages.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
