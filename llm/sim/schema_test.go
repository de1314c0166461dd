package sim

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemas covers the keywords the generator walks.
var schemas = map[string]string{
	"object with required": `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0,"maximum":130},"email":{"type":"string","format":"email"}},"required":["name","age","email"],"additionalProperties":false}`,
	"array bounds":         `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","minLength":3,"maxLength":12},"minItems":4,"maxItems":6,"uniqueItems":true}},"required":["tags"]}`,
	"enum and const":       `{"type":"object","properties":{"unit":{"enum":["celsius","fahrenheit"]},"kind":{"const":"weather"},"level":{"type":"integer","enum":[1,2,3]}},"required":["unit","kind","level"]}`,
	"formats": `{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"day":{"type":"string","format":"date"},"at":{"type":"string","format":"time"},"id":{"type":"string","format":"uuid"},
		"site":{"type":"string","format":"uri"},"host":{"type":"string","format":"hostname"},"ip":{"type":"string","format":"ipv4"},"ip6":{"type":"string","format":"ipv6"},"dur":{"type":"string","format":"duration"}},
		"required":["when","day","at","id","site","host","ip","ip6","dur"]}`,
	"number ranges":   `{"type":"object","properties":{"p":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},"q":{"type":"number","multipleOf":0.25,"minimum":1,"maximum":3},"r":{"type":"integer","multipleOf":5,"minimum":12},"s":{"type":"integer","maximum":-40}},"required":["p","q","r","s"]}`,
	"pattern":         `{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}-\\d{4}$"},"hex":{"type":"string","pattern":"^#[0-9a-f]{6}$"}},"required":["code","hex"]}`,
	"anyOf and oneOf": `{"type":"object","properties":{"v":{"anyOf":[{"type":"null"},{"type":"string","minLength":2}]},"w":{"oneOf":[{"type":"integer","minimum":10},{"type":"string","maxLength":3}]}},"required":["v","w"]}`,
	"refs to defs": `{"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}},
		"type":"object","properties":{"path":{"type":"array","items":{"$ref":"#/$defs/point"},"minItems":2}},"required":["path"]}`,
	"recursive tree": `{"$defs":{"node":{"type":"object","properties":{"label":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["label","children"]}},"$ref":"#/$defs/node"}`,
	"allOf":          `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"boolean"}},"required":["b"]}]}`,
	"type list":      `{"type":"object","properties":{"maybe":{"type":["string","null"]},"n":{"type":["integer","null"],"minimum":3}},"required":["maybe","n"]}`,
	"draft-07 defs":  `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"c":{"type":"string","enum":["red","green"]}},"type":"object","properties":{"colors":{"type":"array","items":{"$ref":"#/definitions/c"},"minItems":1}},"required":["colors"]}`,
	"min properties": `{"type":"object","minProperties":3,"additionalProperties":{"type":"integer"}}`,
	"prefixItems":    `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false,"minItems":2}`,
	"contains":       `{"type":"array","items":{"type":"integer"},"contains":{"const":7},"minItems":2}`,
	"top-level array": `{"type":"array","items":{"type":"object","properties":{"title":{"type":"string"},"year":{"type":"integer","minimum":1900,"maximum":2026},"rating":{"type":"number","minimum":0,"maximum":10}},"required":["title","year","rating"]},
		"minItems":3,"maxItems":3}`,
	"strict OpenAI style": `{"type":"object","properties":{"steps":{"type":"array","items":{"type":"object","properties":{"explanation":{"type":"string"},"output":{"type":"string"}},"required":["explanation","output"],"additionalProperties":false}},"final_answer":{"type":"string"}},"required":["steps","final_answer"],"additionalProperties":false}`,
}

// validator compiles a schema with format assertions on, stricter than
// the simulator needs to be.
func validator(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("s.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func validate(t *testing.T, sch *jsonschema.Schema, text string) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

func TestJSONSchemaOutputValidates(t *testing.T) {
	tg := targets(t, fast)[1]
	for name, schema := range schemas {
		sch := validator(t, schema)
		seen := map[string]bool{}
		for _, temp := range []float64{0, 0.7, 1.3} {
			for seed := range 4 {
				body := chatBody("sim-fast", "Give me data about Lisbon trams", map[string]any{
					"seed": seed, "temperature": temp,
					"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "x", "strict": true, "schema": json.RawMessage(schema)}},
				})
				// Streamed once; the rest whole, which says the same and is quicker.
				var content string
				if seed == 0 {
					content = tg.chat(t, body).content[0]
				} else {
					var r chatResponse
					mustDecode(t, string(tg.post(t, "/v1/chat/completions", body).body), &r)
					content = *r.Choices[0].Message.Content
				}
				if err := validate(t, sch, content); err != nil {
					t.Fatalf("%s (temperature %v, seed %d): %v\n%s", name, temp, seed, err, content)
				}
				seen[content] = true
			}
		}
		if len(seen) < 2 && name != "enum and const" && name != "min properties" && name != "contains" {
			t.Logf("%s: only %d distinct instances", name, len(seen))
		}
	}
}

func TestJSONObjectOutput(t *testing.T) {
	tg := targets(t, fast)[0]
	for seed := range 3 {
		s := tg.chat(t, chatBody("sim-fast", prompt, map[string]any{"seed": seed, "response_format": map[string]string{"type": "json_object"}}))
		var obj map[string]any
		if err := json.Unmarshal([]byte(s.content[0]), &obj); err != nil || obj["note"] == nil {
			t.Errorf("json_object: %v: %s", err, s.content[0])
		}
	}
}

func TestToolCalls(t *testing.T) {
	weather := `{"type":"object","properties":{"location":{"type":"string","description":"City name"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["location","unit"],"additionalProperties":false}`
	search := `{"type":"object","properties":{"query":{"type":"string","minLength":3},"limit":{"type":"integer","minimum":1,"maximum":20},"filters":{"type":"array","items":{"type":"string"}}},"required":["query"]}`
	tools := []map[string]any{
		{"type": "function", "function": map[string]any{"name": "get_weather", "description": "Current weather", "parameters": json.RawMessage(weather)}},
		{"type": "function", "function": map[string]any{"name": "search_docs", "parameters": json.RawMessage(search)}},
	}
	params := map[string]string{"get_weather": weather, "search_docs": search}
	tests := []struct {
		name   string
		prompt string
		choice any
		want   []string // tool names called; nil for a text answer
	}{
		{"auto, tool named", "What is the weather in Lisbon? Use get_weather.", nil, []string{"get_weather"}},
		{"auto, name in words", "Can you search docs for the retry policy?", "auto", []string{"search_docs"}},
		{"auto, asks for a tool", "Please call a tool to find this out.", "auto", []string{"get_weather"}},
		{"auto, two tools named", "Call get_weather for Oslo and search_docs for umbrellas.", "auto", []string{"get_weather", "search_docs"}},
		{"auto, plain question", "Tell me about trams in Lisbon.", "auto", nil},
		{"required", "Tell me about trams in Lisbon.", "required", []string{"get_weather"}},
		{"named", "Tell me about trams in Lisbon.", map[string]any{"type": "function", "function": map[string]string{"name": "search_docs"}}, []string{"search_docs"}},
		{"none", "Use get_weather for Lisbon.", "none", nil},
	}
	for _, tg := range targets(t, fast) {
		for _, tt := range tests {
			extra := map[string]any{"seed": 3, "tools": tools}
			if tt.choice != nil {
				extra["tool_choice"] = tt.choice
			}
			body := chatBody("sim-fast", tt.prompt, extra)
			s := tg.chat(t, body)
			var got []string
			for _, c := range s.calls[0] {
				got = append(got, c.Function.Name)
				if !callID.MatchString(c.ID) || c.Type != "function" {
					t.Errorf("%s %s: call %+v", tg.name, tt.name, c)
				}
				if err := validate(t, validator(t, params[c.Function.Name]), c.Function.Arguments); err != nil {
					t.Errorf("%s %s: arguments %s: %v", tg.name, tt.name, c.Function.Arguments, err)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("%s %s: called %v, want %v", tg.name, tt.name, got, tt.want)
				continue
			}
			if tt.want == nil {
				if s.finish[0] != "stop" || s.content[0] == "" {
					t.Errorf("%s %s: finish %q content %q", tg.name, tt.name, s.finish[0], first(s.content[0]))
				}
				continue
			}
			if s.finish[0] != "tool_calls" || s.content[0] != "" || s.fragments[0] < 2*len(tt.want) {
				t.Errorf("%s %s: finish %q, content %q, %d argument fragments", tg.name, tt.name, s.finish[0], s.content[0], s.fragments[0])
			}
			// Not streamed: the same calls, whole.
			var r chatResponse
			mustDecode(t, string(tg.post(t, "/v1/chat/completions", body).body), &r)
			m := r.Choices[0].Message
			if m.Content != nil || len(m.ToolCalls) != len(got) || m.ToolCalls[0].Function.Arguments != s.calls[0][0].Function.Arguments || r.Choices[0].FinishReason != "tool_calls" {
				t.Errorf("%s %s: non-streamed %+v", tg.name, tt.name, r.Choices[0])
			}
		}
	}
	// After the tool answered, "auto" answers in words.
	body := mustJSON(map[string]any{"model": "sim-fast", "seed": 1, "tools": tools, "messages": []map[string]any{
		{"role": "user", "content": "What is the weather in Lisbon? Use get_weather."},
		{"role": "assistant", "tool_calls": []map[string]any{{"id": "call_1", "type": "function", "function": map[string]string{"name": "get_weather", "arguments": `{"location":"Lisbon","unit":"celsius"}`}}}},
		{"role": "tool", "tool_call_id": "call_1", "content": `{"temperature": 21, "sky": "sunny"}`},
	}})
	s := targets(t, fast)[1].chat(t, body)
	if len(s.calls[0]) != 0 || s.finish[0] != "stop" || !strings.Contains(s.content[0], "tool") {
		t.Errorf("after a tool result: calls %v, finish %q, content %q", s.calls[0], s.finish[0], first(s.content[0]))
	}
}

// hostile are schemas a user can send that once took the server down:
// $refs that lead back to themselves overflowed the stack, and min*
// keywords in the millions built gigabytes before max_tokens applied.
var hostile = map[string]string{
	"anyOf refers to itself":        `{"anyOf":[{"$ref":"#/anyOf/0"}]}`,
	"oneOf refers to itself":        `{"oneOf":[{"$ref":"#/oneOf/0"}]}`,
	"allOf through a def":           `{"$defs":{"a":{"$ref":"#/$defs/a"}},"allOf":[{"$ref":"#/$defs/a"}]}`,
	"two defs refer to each other":  `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"anyOf":[{"$ref":"#/$defs/a"}]}`,
	"root refers to itself":         `{"$ref":"#"}`,
	"three required self refs":      `{"type":"object","properties":{"a":{"$ref":"#"},"b":{"$ref":"#"},"c":{"$ref":"#"}},"required":["a","b","c"]}`,
	"allOf of the root, twice":      `{"type":"object","properties":{"x":{"type":"string"}},"required":["x"],"allOf":[{"$ref":"#"},{"$ref":"#"}]}`,
	"minItems in the millions":      `{"type":"array","minItems":5000000,"items":{"type":"integer"}}`,
	"minProperties in the millions": `{"type":"object","minProperties":3000000}`,
	"minLength in the millions":     `{"type":"object","properties":{"s":{"type":"string","minLength":3000000}},"required":["s"]}`,
	"minContains in the millions":   `{"type":"array","contains":{"type":"integer"},"minContains":4000000}`,
	"nested huge arrays":            `{"type":"array","minItems":1000,"items":{"type":"array","minItems":1000,"items":{"type":"array","minItems":1000}}}`,
}

func TestHostileSchemasEndWithinTheTokenBudget(t *testing.T) {
	const maxTokens = 200
	tg := targets(t, fast)[0]
	for name, schema := range hostile {
		for _, as := range []string{"response_format", "tool"} {
			extra := map[string]any{"seed": 1, "max_tokens": maxTokens,
				"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "x", "schema": json.RawMessage(schema)}}}
			if as == "tool" {
				delete(extra, "response_format")
				extra["tools"] = []map[string]any{{"type": "function", "function": map[string]any{"name": "f", "parameters": json.RawMessage(schema)}}}
				extra["tool_choice"] = "required"
			}
			a := tg.post(t, "/v1/chat/completions", chatBody("sim-fast", "Give me data", extra))
			if a.status != 200 {
				t.Errorf("%s as %s: status %d: %s", name, as, a.status, a.body)
				continue
			}
			var r chatResponse
			mustDecode(t, string(a.body), &r)
			out := ""
			if m := r.Choices[0].Message; m.Content != nil {
				out = *m.Content
			} else if len(m.ToolCalls) > 0 {
				out = m.ToolCalls[0].Function.Arguments
			}
			// A few bytes per token at most; the whole answer stays small.
			if len(out) > 16*maxTokens || len(a.body) > 64<<10 {
				t.Errorf("%s as %s: %d bytes of output, %d of answer, for %d tokens", name, as, len(out), len(a.body), maxTokens)
			}
			if strings.HasPrefix(name, "min") && r.Choices[0].FinishReason != "length" {
				t.Errorf("%s as %s: finish_reason %q, want length", name, as, r.Choices[0].FinishReason)
			}
			if r.Usage.CompletionTokens > maxTokens {
				t.Errorf("%s as %s: %d completion tokens, past max_tokens %d", name, as, r.Usage.CompletionTokens, maxTokens)
			}
		}
	}
}

func TestSchemaNestedTooDeepIsA400(t *testing.T) {
	deep := strings.Repeat(`{"type":"array","items":`, 100) + `{"type":"integer"}` + strings.Repeat("}", 100)
	for _, tg := range targets(t, fast) {
		for _, extra := range []map[string]any{
			{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "x", "schema": json.RawMessage(deep)}}},
			{"tools": []map[string]any{{"type": "function", "function": map[string]any{"name": "f", "parameters": json.RawMessage(deep)}}}},
		} {
			a := tg.post(t, "/v1/chat/completions", chatBody("sim-fast", "Give me data", extra))
			if a.status != 400 || !strings.Contains(string(a.body), "nested deeper than 64 levels") {
				t.Errorf("%s: %d %s, want 400 naming the depth", tg.name, a.status, a.body)
			}
		}
	}
}
