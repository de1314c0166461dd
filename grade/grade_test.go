package grade

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"knobs/field"
)

func str(s string) *string { return &s }

type gradeCase struct {
	name   string
	spec   string
	in     Input
	pass   bool
	score  float64
	reason string // a part of the reason
	err    string // a part of the grading error; "" when the grader runs
}

func runGrades(t *testing.T, cases []gradeCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := Parse(json.RawMessage(c.spec))
			if err != nil {
				t.Fatalf("Parse(%s): %v", c.spec, err)
			}
			got, err := g.Grade(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("grading error = %v, want one containing %q (grade %+v)", err, c.err, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("grading error: %v", err)
			}
			if got.Pass != c.pass || got.Score != c.score || !strings.Contains(got.Reason, c.reason) {
				t.Errorf("grade = %+v, want pass %v, score %v, reason containing %q", got, c.pass, c.score, c.reason)
			}
		})
	}
}

func TestExact(t *testing.T) {
	runGrades(t, []gradeCase{
		{"value equal", `{"type":"exact","value":"Paris"}`, Input{Output: "Paris"}, true, 1, `equals "Paris"`, ""},
		{"value differs", `{"type":"exact","value":"Paris"}`, Input{Output: "Parrot"}, false, 0, `at character 4: "rot" where it has "is"`, ""},
		{"case differs", `{"type":"exact","value":"Paris"}`, Input{Output: "paris"}, false, 0, "at character 1", ""},
		{"ignore_case", `{"type":"exact","value":"Paris","ignore_case":true}`, Input{Output: "PARIS"}, true, 1, "equals", ""},
		{"spaces kept", `{"type":"exact","value":"Paris"}`, Input{Output: " Paris\n"}, false, 0, "character 1", ""},
		{"trim_space", `{"type":"exact","value":"Paris","trim_space":true}`, Input{Output: " Paris\n"}, true, 1, "equals", ""},
		{"trim_space keeps inner", `{"type":"exact","value":"New York","trim_space":true}`, Input{Output: "New  York"}, false, 0, "character 5", ""},
		{"collapse_space", `{"type":"exact","value":"New York","collapse_space":true}`, Input{Output: "  New \n\t York "}, true, 1, "equals", ""},
		{"shorter answer", `{"type":"exact","value":"Paris"}`, Input{Output: "Par"}, false, 0, `"(the end)" where it has "is"`, ""},
		{"row expected", `{"type":"exact"}`, Input{Output: "42", Expected: str("42")}, true, 1, "equals the expected answer", ""},
		{"row expected differs", `{"type":"exact"}`, Input{Output: "41", Expected: str("42")}, false, 0, "differs from the expected answer", ""},
		{"no expected", `{"type":"exact"}`, Input{Output: "42"}, false, 0, "", "no expected answer"},
		{"template", `{"type":"exact","value":"{{city}}, {{ country }}"}`, Input{Output: "Paris, France", Vars: map[string]string{"city": "Paris", "country": "France"}}, true, 1, `equals "Paris, France"`, ""},
		{"template expected", `{"type":"exact","value":"Answer: {{expected}}"}`, Input{Output: "Answer: 4", Expected: str("4")}, true, 1, "equals", ""},
		{"template missing var", `{"type":"exact","value":"{{city}}"}`, Input{Output: "Paris"}, false, 0, "", "{{city}}, and this row has no variable city"},
		{"template missing expected", `{"type":"exact","value":"{{expected}}"}`, Input{Output: "Paris"}, false, 0, "", "{{expected}}, and this row has no expected answer"},
		{"values are not templates", `{"type":"exact","value":"{{a}}"}`, Input{Output: "{{b}}", Vars: map[string]string{"a": "{{b}}", "b": "x"}}, true, 1, "equals", ""},
	})
}

func TestContains(t *testing.T) {
	runGrades(t, []gradeCase{
		{"all found", `{"type":"contains","terms":["Paris","France"]}`, Input{Output: "Paris is in France."}, true, 1, "2 of 2 terms found", ""},
		{"all, one missing", `{"type":"contains","terms":["Paris","France","Seine"]}`, Input{Output: "Paris is in France."}, false, 2.0 / 3, `2 of 3 terms found; missing: "Seine"`, ""},
		{"any, one found", `{"type":"contains","terms":["Paris","Lyon"],"mode":"any"}`, Input{Output: "Paris"}, true, 0.5, `missing: "Lyon"`, ""},
		{"any, none found", `{"type":"contains","terms":["Paris","Lyon"],"mode":"any"}`, Input{Output: "Rome"}, false, 0, "0 of 2 terms found", ""},
		{"case matters", `{"type":"contains","terms":["paris"]}`, Input{Output: "PARIS"}, false, 0, "missing", ""},
		{"ignore_case", `{"type":"contains","terms":["paris"],"ignore_case":true}`, Input{Output: "PARIS"}, true, 1, "1 of 1", ""},
		{"many missing", `{"type":"contains","terms":["a1","a2","a3","a4","a5"]}`, Input{Output: "none"}, false, 0, "and 2 more", ""},
		{"template", `{"type":"contains","terms":["{{expected}}"]}`, Input{Output: "The answer is 4.", Expected: str("4")}, true, 1, "1 of 1", ""},
		{"template empty", `{"type":"contains","terms":["{{expected}}"]}`, Input{Output: "x", Expected: str("")}, false, 0, "", "term 1 is empty"},
		{"not_contains clean", `{"type":"not_contains","terms":["As an AI","sorry"],"ignore_case":true}`, Input{Output: "Paris."}, true, 1, "2 of 2 terms absent", ""},
		{"not_contains hit", `{"type":"not_contains","terms":["As an AI","sorry"],"ignore_case":true}`, Input{Output: "Sorry, as an AI I cannot"}, false, 0, `present: "As an AI", "sorry"`, ""},
		{"not_contains half", `{"type":"not_contains","terms":["As an AI","sorry"]}`, Input{Output: "sorry"}, false, 0.5, `present: "sorry"`, ""},
		{"not_contains any", `{"type":"not_contains","terms":["As an AI","sorry"],"mode":"any"}`, Input{Output: "sorry"}, true, 0.5, "1 of 2 terms absent", ""},
	})
}

func TestRegex(t *testing.T) {
	runGrades(t, []gradeCase{
		{"match", `{"type":"regex","pattern":"\\d{4}-\\d{2}-\\d{2}"}`, Input{Output: "Due 2026-11-30."}, true, 1, `matches /\d{4}-\d{2}-\d{2}/ at "2026-11-30"`, ""},
		{"no match", `{"type":"regex","pattern":"^\\d+$"}`, Input{Output: "42 apples"}, false, 0, `does not match /^\d+$/`, ""},
		{"ignore_case", `{"type":"regex","pattern":"^yes$","ignore_case":true}`, Input{Output: "YES"}, true, 1, "matches", ""},
		{"must_not_match clean", `{"type":"regex","pattern":"(?i)as an ai","must_not_match":true}`, Input{Output: "Paris."}, true, 1, "does not match", ""},
		{"must_not_match hit", `{"type":"regex","pattern":"(?i)as an ai","must_not_match":true}`, Input{Output: "As an AI, I"}, false, 0, `matches /(?i)as an ai/ at "As an AI", which it must not`, ""},
		{"template quoted", `{"type":"regex","pattern":"^{{expected}}$"}`, Input{Output: "a.b", Expected: str("a.b")}, true, 1, "matches", ""},
		{"template quoted no wildcard", `{"type":"regex","pattern":"^{{expected}}$"}`, Input{Output: "axb", Expected: str("a.b")}, false, 0, "does not match", ""},
		{"template missing", `{"type":"regex","pattern":"{{name}}"}`, Input{Output: "x"}, false, 0, "", "no variable name"},
		{"no catastrophic backtracking", `{"type":"regex","pattern":"^(a+)+$"}`, Input{Output: strings.Repeat("a", 50000) + "!"}, false, 0, "does not match", ""},
	})
}

func TestLengthLatencyCost(t *testing.T) {
	runGrades(t, []gradeCase{
		{"chars within", `{"type":"length","min":2,"max":5}`, Input{Output: "héllo"}, true, 1, "5 characters, within 2 to 5", ""},
		{"chars over", `{"type":"length","max":4}`, Input{Output: "héllo"}, false, 0, "5 characters, over the maximum of 4", ""},
		{"chars under", `{"type":"length","min":6}`, Input{Output: "héllo"}, false, 0, "5 characters, under the minimum of 6", ""},
		{"words", `{"type":"length","max":3,"unit":"words"}`, Input{Output: " one  two\nthree "}, true, 1, "3 words, at most 3", ""},
		{"words over", `{"type":"length","max":2,"unit":"words"}`, Input{Output: "one two three"}, false, 0, "3 words, over", ""},
		{"latency within", `{"type":"latency","max_ms":1000}`, Input{LatencyMs: 999.6}, true, 1, "took 1000 ms, within 1000 ms", ""},
		{"latency over", `{"type":"latency","max_ms":1000}`, Input{LatencyMs: 1500}, false, 0, "took 1500 ms, over the 1000 ms bound", ""},
		{"cost within", `{"type":"cost","max_usd":0.01}`, Input{CostUSD: 0.0042, CostKnown: true}, true, 1, "cost $0.0042, within $0.01", ""},
		{"cost over", `{"type":"cost","max_usd":0.01}`, Input{CostUSD: 0.5, CostKnown: true}, false, 0, "cost $0.50, over the $0.01 bound", ""},
		{"cost zero known", `{"type":"cost","max_usd":0}`, Input{CostUSD: 0, CostKnown: true}, true, 1, "cost $0.00", ""},
		{"cost unknown", `{"type":"cost","max_usd":0.01}`, Input{CostUSD: 0}, false, 0, "", "cost of this run is not known"},
	})
}

func TestJSON(t *testing.T) {
	fenced := "Here:\n```json\n{\"a\":1}\n```"
	runGrades(t, []gradeCase{
		{"object", `{"type":"json"}`, Input{Output: ` {"a": [1, 2]} `}, true, 1, "valid JSON object", ""},
		{"number", `{"type":"json"}`, Input{Output: `3.5`}, true, 1, "valid JSON number", ""},
		{"broken", `{"type":"json"}`, Input{Output: `{"a":}`}, false, 0, "not valid JSON: invalid character '}'", ""},
		{"trailing", `{"type":"json"}`, Input{Output: `{"a":1} {"b":2}`}, false, 0, "more text after the JSON value", ""},
		{"empty", `{"type":"json"}`, Input{Output: "  "}, false, 0, "the answer is empty", ""},
		{"fence refused", `{"type":"json"}`, Input{Output: "```json\n{\"a\":1}\n```"}, false, 0, "strip_fence would accept", ""},
		{"fence stripped", `{"type":"json","strip_fence":true}`, Input{Output: "```json\n{\"a\":1}\n```\n"}, true, 1, "valid JSON object (after removing a ```json fence)", ""},
		{"bare fence stripped", `{"type":"json","strip_fence":true}`, Input{Output: "```\n[1]\n```"}, true, 1, "valid JSON array (after removing", ""},
		{"prose and fence", `{"type":"json","strip_fence":true}`, Input{Output: fenced}, false, 0, "not valid JSON", ""},
		{"other language fence", `{"type":"json","strip_fence":true}`, Input{Output: "```python\n{}\n```"}, false, 0, "not valid JSON", ""},
		{"too deep", `{"type":"json"}`, Input{Output: strings.Repeat("[", 100) + strings.Repeat("]", 100)}, false, 0, "nested deeper than 64 levels", ""},
	})
}

const personSchema = `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}},"required":["name","age"],"additionalProperties":false}`

func TestJSONSchema(t *testing.T) {
	rf := json.RawMessage(`{"type":"json_schema","json_schema":{"name":"person","schema":` + personSchema + `}}`)
	given := `{"type":"json_schema","schema":` + personSchema + `}`
	fromRF := `{"type":"json_schema","schema":"response_format"}`
	runGrades(t, []gradeCase{
		{"given, matches", given, Input{Output: `{"name":"Ada","age":36}`}, true, 1, "valid JSON, matches the schema", ""},
		{"given, missing field", given, Input{Output: `{"name":"Ada"}`}, false, 0, "does not match the schema", ""},
		{"given, wrong type", given, Input{Output: `{"name":"Ada","age":-1}`}, false, 0, "minimum", ""},
		{"given, not JSON", given, Input{Output: `Ada, 36`}, false, 0, "not valid JSON", ""},
		{"given, fenced refused", given, Input{Output: "```json\n{\"name\":\"Ada\",\"age\":36}\n```"}, false, 0, "strip_fence would accept", ""},
		{"given, fenced stripped", `{"type":"json_schema","strip_fence":true,"schema":` + personSchema + `}`, Input{Output: "```json\n{\"name\":\"Ada\",\"age\":36}\n```"}, true, 1, "after removing a ```json fence", ""},
		{"response_format, matches", fromRF, Input{Output: `{"name":"Ada","age":36}`, ResponseFormat: rf}, true, 1, "matches the schema", ""},
		{"response_format, extra field", fromRF, Input{Output: `{"name":"Ada","age":36,"x":1}`, ResponseFormat: rf}, false, 0, "additional properties", ""},
		{"response_format, none", fromRF, Input{Output: `{}`}, false, 0, "", "this variant sets no response_format"},
		{"response_format, json_object", fromRF, Input{Output: `{}`, ResponseFormat: json.RawMessage(`{"type":"json_object"}`)}, false, 0, "", `(type "json_object") has no JSON Schema`},
		{"response_format, bad schema", fromRF, Input{Output: `{}`, ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"strin"}}}`)}, false, 0, "", "the variant's response_format cannot be checked against: not a valid JSON Schema"},
	})
}

func TestJSONSchemaRemembersFormats(t *testing.T) {
	g, err := Parse(json.RawMessage(`{"type":"json_schema","schema":"response_format"}`))
	if err != nil {
		t.Fatal(err)
	}
	bad := json.RawMessage(`{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"strin"}}}`)
	for range 2 {
		if _, err := g.Grade(Input{Output: "{}", ResponseFormat: bad}); err == nil || !strings.Contains(err.Error(), "not a valid JSON Schema") {
			t.Fatalf("grading error = %v", err)
		}
	}
	// More formats than it remembers still get checked.
	for i := range maxCheckedFormats + 4 {
		rf := json.RawMessage(`{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","maxProperties":` + string(rune('0'+i%10)) + `,"title":"` + strings.Repeat("x", i) + `"}}}`)
		gr, err := g.Grade(Input{Output: `{"a":1}`, ResponseFormat: rf})
		if err != nil {
			t.Fatal(err)
		}
		if want := i%10 >= 1; gr.Pass != want {
			t.Errorf("format %d: pass %v, want %v (%s)", i, gr.Pass, want, gr.Reason)
		}
	}
}

func TestJSONPathEquals(t *testing.T) {
	doc := `{"items":[{"name":"apple","n":1.0,"tags":["red"]}],"a.b":{"c":true},"empty":null}`
	in := Input{Output: doc}
	runGrades(t, []gradeCase{
		{"string", `{"type":"json_path_equals","path":"$.items[0].name","value":"apple"}`, in, true, 1, `$.items[0].name is "apple"`, ""},
		{"string differs", `{"type":"json_path_equals","path":"$.items[0].name","value":"pear"}`, in, false, 0, `$.items[0].name is "apple", not "pear"`, ""},
		{"number by value", `{"type":"json_path_equals","path":"$.items[0].n","value":1}`, in, true, 1, "is 1.0", ""},
		{"number as string differs", `{"type":"json_path_equals","path":"$.items[0].n","value":"1"}`, in, false, 0, `not "1"`, ""},
		{"array", `{"type":"json_path_equals","path":"$.items[0].tags","value":["red"]}`, in, true, 1, `is ["red"]`, ""},
		{"object", `{"type":"json_path_equals","path":"$[\"a.b\"]","value":{"c":true}}`, in, true, 1, `$["a.b"] is {"c":true}`, ""},
		{"null", `{"type":"json_path_equals","path":"$.empty","value":null}`, in, true, 1, "$.empty is null", ""},
		{"whole", `{"type":"json_path_equals","path":"$","value":[1,2]}`, Input{Output: "[1, 2.0]"}, true, 1, "$ is [1,2.0]", ""},
		{"no key", `{"type":"json_path_equals","path":"$.items[0].color","value":"red"}`, in, false, 0, `no $.items[0].color: $.items[0] has no key "color"`, ""},
		{"index out", `{"type":"json_path_equals","path":"$.items[3]","value":1}`, in, false, 0, "no $.items[3]: $.items has 1 items", ""},
		{"not an array", `{"type":"json_path_equals","path":"$.items[0].name[0]","value":1}`, in, false, 0, "$.items[0].name is a string, not an array", ""},
		{"not an object", `{"type":"json_path_equals","path":"$.items.name","value":1}`, in, false, 0, "$.items is an array, not an object", ""},
		{"not JSON fails", `{"type":"json_path_equals","path":"$.a","value":1}`, Input{Output: "The answer is 1"}, false, 0, "not valid JSON", ""},
		{"fenced", `{"type":"json_path_equals","path":"$.a","value":1,"strip_fence":true}`, Input{Output: "```json\n{\"a\":1}\n```"}, true, 1, "(after removing a ```json fence)", ""},
		{"template", `{"type":"json_path_equals","path":"$.items[0].name","value":"{{fruit}}"}`, Input{Output: doc, Vars: map[string]string{"fruit": "apple"}}, true, 1, "is \"apple\"", ""},
		{"template missing", `{"type":"json_path_equals","path":"$.a","value":"{{expected}}"}`, Input{Output: `{"a":"x"}`}, false, 0, "", "no expected answer"},
	})
}

func TestParsePath(t *testing.T) {
	cases := []struct {
		path, want, msg string
	}{
		{"$", "$", ""},
		{"$.a.b[0]", "$.a.b[0]", ""},
		{`$["a b"][12].c`, `$["a b"][12].c`, ""},
		{`$["x]\"y"]`, `$["x]\"y"]`, ""},
		{"a.b", "", "starts with $"},
		{"$.", "", "a key after the dot"},
		{"$..a", "", "a key after the dot"},
		{"$[", "", "[ without ]"},
		{"$[-1]", "", "whole number 0 or more"},
		{"$[a]", "", "whole number 0 or more"},
		{`$["a]`, "", `written ["key"]`},
		{"$a", "", "expected . or ["},
		{"$" + strings.Repeat(".a", 32), "$" + strings.Repeat(".a", 32), ""},
		{"$" + strings.Repeat(".a", 33), "", "at most 32 steps"},
		{"$." + strings.Repeat("a", 1000), "", "at most 1000 characters"},
	}
	for _, c := range cases {
		steps, msg := parsePath(c.path)
		if c.msg != "" {
			if !strings.Contains(msg, c.msg) {
				t.Errorf("parsePath(%q) message %q, want %q", c.path, msg, c.msg)
			}
			continue
		}
		if msg != "" || pathString(steps) != c.want {
			t.Errorf("parsePath(%q) = %q, %q; want %q", c.path, pathString(steps), msg, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, spec, key, msg string
	}{
		{"not an object", `["exact"]`, "grader", "is a JSON object"},
		{"not JSON", `{"type":`, "grader", "is a JSON object"},
		{"too large", `{"type":"exact","value":"` + strings.Repeat("x", MaxSpecSize) + `"}`, "grader", "at most 128 KiB"},
		{"no type", `{"value":"x"}`, "type", "Say which grader"},
		{"type not a string", `{"type":3}`, "type", "type must be a string, not number"},
		{"unknown type", `{"type":"fuzzy"}`, "type", `no grader "fuzzy"`},
		{"judge", `{"type":"judge","preset":"p"}`, "type", "ParseJudge"},
		{"setting of another type", `{"type":"regex","pattern":"x","terms":["a"]}`, "terms", `no setting "terms"; it takes pattern, ignore_case, must_not_match`},
		{"key case", `{"type":"exact","Value":"x"}`, "Value", `no setting "Value"`},
		{"name too long", `{"type":"json","name":"` + strings.Repeat("n", 65) + `"}`, "name", "at most 64 characters"},
		{"bool not bool", `{"type":"exact","ignore_case":"yes"}`, "ignore_case", "must be true or false, not string"},
		{"exact value number", `{"type":"exact","value":4}`, "value", "value must be a string"},
		{"terms missing", `{"type":"contains"}`, "terms", "Give the terms"},
		{"terms not strings", `{"type":"contains","terms":[1]}`, "terms", "must be a list of strings"},
		{"terms empty term", `{"type":"contains","terms":["a",""]}`, "terms", "Term 2 is empty"},
		{"terms too many", `{"type":"contains","terms":[` + strings.Repeat(`"a",`, 100) + `"a"]}`, "terms", "At most 100 terms, not 101"},
		{"term too long", `{"type":"not_contains","terms":["` + strings.Repeat("a", 1001) + `"]}`, "terms", "Term 1 is over 1000 characters"},
		{"bad mode", `{"type":"contains","terms":["a"],"mode":"some"}`, "mode", `"all" or "any", not "some"`},
		{"regex missing", `{"type":"regex"}`, "pattern", "Give the regular expression"},
		{"regex too long", `{"type":"regex","pattern":"` + strings.Repeat("a", 1001) + `"}`, "pattern", "at most 1000 characters"},
		{"regex bad", `{"type":"regex","pattern":"(a"}`, "pattern", "missing closing ): `(a`"},
		{"regex lookahead", `{"type":"regex","pattern":"a(?=b)"}`, "pattern", "no lookaround"},
		{"schema missing", `{"type":"json_schema"}`, "schema", "Give the JSON Schema"},
		{"schema other word", `{"type":"json_schema","schema":"mine"}`, "schema", `not "mine"`},
		{"schema array", `{"type":"json_schema","schema":[1]}`, "schema", "is a JSON Schema object"},
		{"schema invalid", `{"type":"json_schema","schema":{"type":"strin"}}`, "schema", "not a valid JSON Schema"},
		{"schema external ref", `{"type":"json_schema","schema":{"$ref":"https://example.com/s.json"}}`, "schema", "Knobs does not load"},
		{"schema too large", `{"type":"json_schema","schema":{"title":"` + strings.Repeat("x", MaxSchemaSize) + `"}}`, "schema", "at most 64 KiB"},
		{"path missing", `{"type":"json_path_equals","value":1}`, "path", "Give the path"},
		{"path bad", `{"type":"json_path_equals","path":"a","value":1}`, "path", "starts with $"},
		{"path value missing", `{"type":"json_path_equals","path":"$.a"}`, "value", "Give the JSON value"},
		{"path value too deep", `{"type":"json_path_equals","path":"$.a","value":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, "value", "nested deeper"},
		{"length nothing", `{"type":"length"}`, "max", "Give min, max or both"},
		{"length negative", `{"type":"length","min":-1}`, "min", "cannot be negative"},
		{"length crossed", `{"type":"length","min":5,"max":2}`, "max", "max (2) is below min (5)"},
		{"length unit", `{"type":"length","max":2,"unit":"tokens"}`, "unit", `"chars" or "words", not "tokens"`},
		{"length fraction", `{"type":"length","max":2.5}`, "max", "must be a whole number"},
		{"latency missing", `{"type":"latency"}`, "max_ms", "Give max_ms"},
		{"latency zero", `{"type":"latency","max_ms":0}`, "max_ms", "above 0"},
		{"cost negative", `{"type":"cost","max_usd":-1}`, "max_usd", "0 or more"},
		{"cost string", `{"type":"cost","max_usd":"1"}`, "max_usd", "must be a number, not string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := Parse(json.RawMessage(c.spec))
			var fe field.Errors
			if !errors.As(err, &fe) {
				t.Fatalf("Parse = %v, %v; want field errors", g, err)
			}
			if !strings.Contains(fe[c.key], c.msg) {
				t.Errorf("errors %v; want %q on %q", fe, c.msg, c.key)
			}
		})
	}
}

func TestTypeOf(t *testing.T) {
	if got := TypeOf(json.RawMessage(`{"type":"judge","preset":"p"}`)); got != "judge" {
		t.Errorf("TypeOf = %q", got)
	}
	if got := TypeOf(json.RawMessage(`[1]`)); got != "" {
		t.Errorf("TypeOf = %q", got)
	}
}

func TestNameOf(t *testing.T) {
	cases := map[string]string{
		`{"type":"contains","terms":["a"]}`:                   "contains",
		`{"type":"contains","name":" polite ","terms":["a"]}`: "polite",
		`not json`: "",
	}
	for raw, want := range cases {
		if got := NameOf(json.RawMessage(raw)); got != want {
			t.Errorf("NameOf(%s) = %q, want %q", raw, got, want)
		}
	}
}

// The runner grades cells in parallel with one grader per experiment;
// run under -race this checks that nothing in a grader is written
// without its lock.
func TestGradersShared(t *testing.T) {
	specs := []string{
		`{"type":"json_schema","schema":"response_format"}`,
		`{"type":"json_schema","schema":` + personSchema + `}`,
		`{"type":"regex","pattern":"^{{expected}}$"}`,
		`{"type":"contains","terms":["{{expected}}"],"ignore_case":true}`,
		`{"type":"json_path_equals","path":"$.name","value":"{{expected}}"}`,
	}
	formats := []json.RawMessage{
		json.RawMessage(`{"type":"json_schema","json_schema":{"name":"p","schema":` + personSchema + `}}`),
		json.RawMessage(`{"type":"json_schema","json_schema":{"name":"q","schema":{"type":"object"}}}`),
	}
	for _, spec := range specs {
		g, err := Parse(json.RawMessage(spec))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Go(func() {
				gr, err := g.Grade(Input{Output: `{"name":"Ada","age":36}`, Expected: str("Ada"), ResponseFormat: formats[i%2]})
				// Every grader passes this answer but the regex, which wants
				// the whole answer to be "Ada".
				wantPass := !strings.HasPrefix(spec, `{"type":"regex"`)
				if err == nil && gr.Pass != wantPass {
					err = fmt.Errorf("%s: grade %+v", spec, gr)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	}
}
