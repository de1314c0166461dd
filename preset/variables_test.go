package preset_test

import (
	"encoding/json"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"knobs/llm"
	"knobs/preset"
)

func chat(body string) llm.RunSpec {
	return llm.RunSpec{Provider: "sim", Endpoint: llm.EndpointChat, Body: json.RawMessage(body)}
}

func completion(body string) llm.RunSpec {
	return llm.RunSpec{Provider: "sim", Endpoint: llm.EndpointCompletion, Body: json.RawMessage(body)}
}

func TestVariables(t *testing.T) {
	long := strings.Repeat("v", 64)
	for _, tt := range []struct {
		name string
		spec llm.RunSpec
		want []string
	}{
		{"none", chat(`{"model":"m","messages":[{"role":"user","content":"plain"}]}`), nil},
		{"order of first appearance", chat(`{"messages":[
			{"role":"system","content":"You are {{persona}}. {{ tone }} please."},
			{"role":"user","content":[{"type":"text","text":"About {{topic}} and {{persona}}"},{"type":"image_url","image_url":{"url":"https://x/{{img}}.png"}}]},
			{"role":"assistant","content":"{{\ttopic\t}} noted", "reasoning":"{{hidden}}"}]}`),
			[]string{"persona", "tone", "topic"}},
		{"names", chat(`{"messages":[{"role":"user","content":"{{1x}} {{a-b}} {{_ok}} {{A9}} {{` + long + `}} {{` + long + `v}} {{ }} {{x y}} {x} {{{z}}}"}]}`),
			[]string{"_ok", "A9", long, "z"}},
		{"not in other fields", chat(`{"model":"{{model}}","messages":[{"role":"user","content":"{{q}}","name":"{{n}}"}],"stop":["{{s}}"],
			"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"description":"{{d}}"}}},"tools":[{"type":"function","function":{"name":"f","description":"{{t}}"}}]}`),
			[]string{"q"}},
		{"prompt string", completion(`{"model":"m","prompt":"Translate {{text}} to {{lang}}"}`), []string{"text", "lang"}},
		{"prompt array", completion(`{"model":"m","prompt":["{{a}}", "{{b}} {{a}}"]}`), []string{"a", "b"}},
		{"prompt token ids", completion(`{"model":"m","prompt":[1,2,3]}`), nil},
		{"not JSON", chat(`{"messages":`), nil},
		{"messages not an array", chat(`{"messages":"{{x}}"}`), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := preset.Variables(tt.spec); !slices.Equal(got, tt.want) {
				t.Errorf("Variables = %q, want %q", got, tt.want)
			}
		})
	}
}

// noLimit is a cap on the filled body that no test body reaches.
const noLimit = 16 << 20

func TestFill(t *testing.T) {
	tricky := "He said \"stop\"\nthen \\left</script>\t{{other}} ünïcode"
	for _, tt := range []struct {
		name    string
		spec    llm.RunSpec
		values  map[string]string
		body    string // the body expected, compact
		missing []string
	}{
		{"quotes, newlines, backslashes stay valid JSON",
			chat(`{"model":"m","messages":[{"role":"user","content":"Quote: {{q}}!","name":"u"}],"temperature":0.5}`),
			map[string]string{"q": tricky},
			`{"model":"m","messages":[{"role":"user","content":"Quote: He said \"stop\"\nthen \\left</script>\t{{other}} ünïcode!","name":"u"}],"temperature":0.5}`,
			nil},
		{"text parts and other fields untouched",
			chat(`{"messages":[{"role":"user","content":[{"type":"text","text":"{{ a }}+{{b}}"},{"type":"image_url","image_url":{"url":"{{a}}"}}]}],"stop":["{{a}}"],"max_tokens":5,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"description":"{{a}}"}}}}`),
			map[string]string{"a": "1", "b": "2"},
			`{"messages":[{"role":"user","content":[{"type":"text","text":"1+2"},{"type":"image_url","image_url":{"url":"{{a}}"}}]}],"stop":["{{a}}"],"max_tokens":5,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"description":"{{a}}"}}}}`,
			nil},
		{"missing names reported and left in place",
			chat(`{"messages":[{"role":"system","content":"{{z}} {{a}}"},{"role":"user","content":"{{y}} {{z}} {{a}}"}]}`),
			map[string]string{"a": "A"},
			`{"messages":[{"role":"system","content":"{{z}} A"},{"role":"user","content":"{{y}} {{z}} A"}]}`,
			[]string{"z", "y"}},
		{"an empty value is a value",
			completion(`{"model":"m","prompt":"[{{x}}]"}`), map[string]string{"x": ""}, `{"model":"m","prompt":"[]"}`, nil},
		{"prompt array",
			completion(`{"prompt":["{{x}}",7,"b"],"model":"m"}`), map[string]string{"x": "a\"b"}, `{"prompt":["a\"b",7,"b"],"model":"m"}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, missing, err := preset.Fill(tt.spec, tt.values, noLimit)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(got.Body) {
				t.Fatalf("Fill made invalid JSON: %s", got.Body)
			}
			if string(got.Body) != tt.body {
				t.Errorf("body:\n got %s\nwant %s", got.Body, tt.body)
			}
			if !slices.Equal(missing, tt.missing) {
				t.Errorf("missing = %q, want %q", missing, tt.missing)
			}
			if got.Provider != tt.spec.Provider || got.Endpoint != tt.spec.Endpoint {
				t.Errorf("Fill changed the provider or endpoint: %+v", got)
			}
		})
	}

	// The value arrives as written, whatever it holds.
	got, _, err := preset.Fill(chat(`{"messages":[{"role":"user","content":"{{q}}"}]}`), map[string]string{"q": tricky}, noLimit)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct{ Content string }
	}
	if err := json.Unmarshal(got.Body, &body); err != nil || body.Messages[0].Content != tricky {
		t.Errorf("content after Fill: %q %v", body.Messages[0].Content, err)
	}

	// Without placeholders the body comes back byte for byte.
	pretty := chat("{\n  \"messages\": [ {\"role\": \"user\", \"content\": \"hi\"} ],\n  \"top_p\": 1.0\n}")
	got, missing, err := preset.Fill(pretty, map[string]string{"x": "1"}, noLimit)
	if err != nil || string(got.Body) != string(pretty.Body) || missing != nil {
		t.Errorf("Fill of a body without placeholders: %s %q %v", got.Body, missing, err)
	}

	if _, _, err := preset.Fill(chat(`{"messages":`), nil, noLimit); err == nil {
		t.Error("Fill of a body that is not JSON did not fail")
	}
	if _, _, err := preset.Fill(chat(`[1]`), nil, noLimit); err == nil {
		t.Error("Fill of a body that is not an object did not fail")
	}
}

func TestFillRefusesABodyPastTheLimitBeforeBuildingIt(t *testing.T) {
	// 3,000 placeholders of a 1 MiB value: 3 GB if it were built.
	body := chat(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("{{a}}", 3000) + `"}]}`)
	big := strings.Repeat("x", 1<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := preset.Fill(body, map[string]string{"a": big}, noLimit)
	runtime.ReadMemStats(&after)
	var tl *preset.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != noLimit || tl.Size < 3000<<20 {
		t.Fatalf("Fill = %v, want a TooLargeError of about 3 GB against the limit", err)
	}
	if !strings.Contains(err.Error(), "16 MiB") {
		t.Errorf("message %q does not name the limit", err)
	}
	// The size is worked out, not built.
	if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
		t.Errorf("refusing took %d MiB of allocations", n>>20)
	}

	// The size counts the value as JSON writes it: a quote or a newline
	// takes two bytes, a control character six.
	for _, tt := range []struct {
		value string
		fits  bool
	}{
		{strings.Repeat("a", 100), true},
		{strings.Repeat("\n", 50), true},
		{strings.Repeat("\x01", 100), false},
		{strings.Repeat("\"", 101), false},
	} {
		spec := chat(`{"messages":[{"role":"user","content":"{{v}}"}]}`)
		limit := len(spec.Body) - len("{{v}}") + 200
		got, _, err := preset.Fill(spec, map[string]string{"v": tt.value}, limit)
		if tt.fits && (err != nil || len(got.Body) > limit) {
			t.Errorf("value %q: %v, %d bytes; want it filled within %d", tt.value, err, len(got.Body), limit)
		}
		if !tt.fits && err == nil {
			t.Errorf("value %q: filled into %d bytes, past the limit %d", tt.value, len(got.Body), limit)
		}
	}
}
