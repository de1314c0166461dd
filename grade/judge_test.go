package grade

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"knobs/field"
	"knobs/llm"
)

func TestParseJudgeAnswer(t *testing.T) {
	cases := []struct {
		name   string
		spec   JudgeSpec
		answer string
		pass   bool
		score  float64
		reason string
		err    string
	}{
		{"plain", JudgeSpec{}, `{"reason":"Correct and polite.","score":0.9}`, true, 0.9, "judge 0.9: Correct and polite.", ""},
		{"low", JudgeSpec{}, `{"reason":"Wrong city.","score":0.1}`, false, 0.1, "Wrong city.", ""},
		{"at the bar", JudgeSpec{}, `{"reason":"ok","score":0.5}`, true, 0.5, "", ""},
		{"fenced", JudgeSpec{}, "```json\n{\"score\": 1, \"reason\": \"exact\"}\n```", true, 1, "judge 1: exact", ""},
		{"prose in the fence", JudgeSpec{}, "```json\nVerdict: {\"score\": 0.2, \"reason\": \"off topic\"}\n```", false, 0.2, "judge 0.2: off topic", ""},
		{"prose first", JudgeSpec{}, "Let me think. The answer names Paris.\n{\"score\": 0.75, \"reason\": \"names Paris\"} Hope that helps {", true, 0.75, "names Paris", ""},
		{"no reason", JudgeSpec{}, `{"score":0}`, false, 0, "(the judge gave no reason)", ""},
		{"scale 5", JudgeSpec{Scale: 5, PassAt: 0.5}, `{"score":4,"reason":"good"}`, true, 0.75, "judge 4/5: good", ""},
		{"scale 5 low", JudgeSpec{Scale: 5, PassAt: 0.5}, `{"score":2,"reason":"weak"}`, false, 0.25, "judge 2/5", ""},
		{"scale 10", JudgeSpec{Scale: 10, PassAt: 0.8}, `{"score":10,"reason":"perfect"}`, true, 1, "judge 10/10", ""},
		{"declared scale", JudgeSpec{}, `{"score":3,"scale":5,"reason":"fair"}`, true, 0.5, "judge 3/5", ""},
		{"unreadable", JudgeSpec{}, "I think it is good.", false, 0, "", `no JSON object: "I think it is good."`},
		{"broken JSON", JudgeSpec{}, `{"score": 0.5, "reason": "x"`, false, 0, "", "not a readable JSON object"},
		{"empty", JudgeSpec{}, "", false, 0, "", "no JSON object"},
		{"no score", JudgeSpec{}, `{"reason":"fine"}`, false, 0, "", `has no "score"`},
		{"null score", JudgeSpec{}, `{"score":null,"reason":"fine"}`, false, 0, "", `has no "score"`},
		{"score as text", JudgeSpec{}, `{"score":"high","reason":"fine"}`, false, 0, "", `"score" is "high", not a number`},
		{"reason not text", JudgeSpec{}, `{"score":1,"reason":["a"]}`, false, 0, "", `"reason" is ["a"], not text`},
		{"over 1", JudgeSpec{}, `{"score":4,"reason":"good"}`, false, 0, "", `score 4 is outside its scale, 0 to 1: if the judge scores 1 to 5 or 1 to 10, set "scale"`},
		{"negative", JudgeSpec{}, `{"score":-0.1,"reason":"bad"}`, false, 0, "", "outside its scale, 0 to 1"},
		{"over 5", JudgeSpec{Scale: 5, PassAt: 0.5}, `{"score":6,"reason":"x"}`, false, 0, "", "score 6 is outside its scale, 1 to 5"},
		{"zero on 1 to 5", JudgeSpec{Scale: 5, PassAt: 0.5}, `{"score":0,"reason":"x"}`, false, 0, "", "outside its scale, 1 to 5"},
		{"scale disagrees", JudgeSpec{Scale: 5, PassAt: 0.5}, `{"score":6,"scale":10,"reason":"x"}`, false, 0, "", "scale of 10, and its grader says 5"},
		{"scale unknown", JudgeSpec{}, `{"score":6,"scale":7,"reason":"x"}`, false, 0, "", `"scale" is 7`},
		{"too deep", JudgeSpec{}, `{"score":1,"reason":` + strings.Repeat("[", 70) + `}`, false, 0, "", "nested deeper"},
		{"too long", JudgeSpec{}, `{"score":1,"reason":"` + strings.Repeat("x", MaxJudgeAnswer) + `"}`, false, 0, "", "over 256 KiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var g Grade
			var err error
			if c.spec == (JudgeSpec{}) {
				g, err = ParseJudgeAnswer(c.answer)
			} else {
				g, err = c.spec.ReadAnswer(c.answer)
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error = %v (grade %+v), want one containing %q", err, g, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.Pass != c.pass || g.Score != c.score || !strings.Contains(g.Reason, c.reason) {
				t.Errorf("grade = %+v, want pass %v score %v reason containing %q", g, c.pass, c.score, c.reason)
			}
		})
	}
}

func TestParseJudge(t *testing.T) {
	j, err := ParseJudge(json.RawMessage(`{"type":"judge","preset":" tone judge ","label":"Production","scale":5}`))
	if err != nil {
		t.Fatal(err)
	}
	want := JudgeSpec{Type: "judge", Preset: "tone judge", Label: "production", Scale: 5, PassAt: 0.5}
	if j != want {
		t.Errorf("ParseJudge = %+v, want %+v", j, want)
	}
	j, err = ParseJudge(json.RawMessage(`{"type":"judge","preset":"12","version":3,"pass_at":0}`))
	if err != nil || j.Version != 3 || j.PassAt != 0 || j.Scale != 1 {
		t.Errorf("ParseJudge = %+v, %v", j, err)
	}
	bad := []struct{ name, spec, key, msg string }{
		{"no preset", `{"type":"judge"}`, "preset", "Name the judge's preset"},
		{"long preset", `{"type":"judge","preset":"` + strings.Repeat("p", 101) + `"}`, "preset", "at most 100"},
		{"bad label", `{"type":"judge","preset":"p","label":"my label"}`, "label", "A label is 1 to 32"},
		{"label and version", `{"type":"judge","preset":"p","label":"prod","version":2}`, "version", "not both"},
		{"negative version", `{"type":"judge","preset":"p","version":-2}`, "version", "1 or more"},
		{"scale", `{"type":"judge","preset":"p","scale":7}`, "scale", "not 7"},
		{"pass_at", `{"type":"judge","preset":"p","pass_at":3}`, "pass_at", "between 0 and 1"},
		{"pass_at type", `{"type":"judge","preset":"p","pass_at":"half"}`, "pass_at", "must be a number, not string"},
		{"unknown key", `{"type":"judge","preset":"p","model":"x"}`, "model", `no setting "model"`},
		{"wrong type", `{"type":"exact","preset":"p"}`, "type", `"type":"judge"`},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseJudge(json.RawMessage(c.spec))
			var fe field.Errors
			if !errors.As(err, &fe) || !strings.Contains(fe[c.key], c.msg) {
				t.Errorf("ParseJudge error %v; want %q on %q", err, c.msg, c.key)
			}
		})
	}
}

// The schema a judge is asked for is one Knobs itself accepts as a
// response_format, and a judge answer that follows it is read.
func TestJudgeSchema(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":` + string(JudgeSchema()) + `}`
	for _, d := range []llm.Dialect{llm.DialectOpenAI, llm.DialectCerebras} {
		if fe := llm.Validate(llm.RunSpec{Endpoint: llm.EndpointChat, Body: json.RawMessage(body)}, d, llm.Model{}); fe != nil {
			t.Errorf("%s refuses the judge schema: %v", d, fe)
		}
	}
	answer := `{"reason":"names Paris","score":1}`
	if c := llm.CheckOutput(json.RawMessage(body), answer); c == nil || !c.Valid {
		t.Fatalf("CheckOutput = %+v", c)
	}
	if c := llm.CheckOutput(json.RawMessage(body), `{"score":"high"}`); c == nil || c.Valid {
		t.Errorf("CheckOutput accepts a verdict without reason: %+v", c)
	}
	if g, err := ParseJudgeAnswer(answer); err != nil || !g.Pass {
		t.Errorf("ParseJudgeAnswer = %+v, %v", g, err)
	}
}

func TestJudgeValues(t *testing.T) {
	in := Input{Output: "Paris", Expected: str("Paris"), Vars: map[string]string{"country": "France", "output": "row's own"}}
	v := JudgeValues("What is the capital of France?", in)
	want := map[string]string{"country": "France", "output": "Paris", "input": "What is the capital of France?", "expected": "Paris"}
	if len(v) != len(want) {
		t.Fatalf("JudgeValues = %v", v)
	}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("%s = %q, want %q", k, v[k], w)
		}
	}
	if in.Vars["output"] != "row's own" {
		t.Error("JudgeValues changed the row's variables")
	}
	v = JudgeValues("q", Input{Output: "a", Vars: map[string]string{"expected": "sneaky"}})
	if _, ok := v["expected"]; ok {
		t.Errorf("a row without an expected answer gives the judge one: %v", v)
	}
}
