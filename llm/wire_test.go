package llm

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func jsonNames(v any) []string {
	var names []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// TestWireRequestFields checks the request types against the request
// fields the seeds list.
func TestWireRequestFields(t *testing.T) {
	chat := []string{ // seed 002
		"clear_thinking", "disable_reasoning", "frequency_penalty", "logit_bias", "logprobs",
		"max_completion_tokens", "max_tokens", "messages", "min_completion_tokens", "min_tokens",
		"model", "model_parameters", "n", "parallel_tool_calls", "prediction", "presence_penalty",
		"prompt_cache_key", "reasoning_effort", "reasoning_format", "response_format", "seed",
		"service_tier", "stop", "stream", "stream_options", "temperature", "tool_choice", "tools",
		"top_logprobs", "top_p", "user",
	}
	completion := []string{ // seeds 000 and 001
		"best_of", "echo", "frequency_penalty", "grammar_root", "logit_bias", "logprobs", "max_tokens",
		"min_tokens", "model", "n", "presence_penalty", "prompt", "prompt_cache_key", "reasoning_format",
		"return_raw_tokens", "seed", "stop", "stream", "stream_options", "suffix", "temperature", "top_p", "user",
	}
	for _, tt := range []struct {
		name string
		v    any
		want []string
	}{{"ChatRequest", ChatRequest{}, chat}, {"CompletionRequest", CompletionRequest{}, completion}} {
		got := jsonNames(tt.v)
		slices.Sort(got)
		want := slices.Clone(tt.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s fields\n got %v\nwant %v", tt.name, got, want)
		}
	}
}

// TestWireRequestRoundTrip: a body read into the request type and written
// back keeps exactly the fields that were set.
func TestWireRequestRoundTrip(t *testing.T) {
	in := `{"model":"gpt-oss-120b","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x","reasoning":"r","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":"42","tool_call_id":"c"}],"temperature":0,"stop":["a"],"tool_choice":"auto","response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object"},"strict":true}}}`
	var r ChatRequest
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var a, b map[string]any
	json.Unmarshal([]byte(in), &a)
	json.Unmarshal(out, &b)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip\n got %s\nwant %s", out, in)
	}
}

func TestWireErrorChunk(t *testing.T) {
	var c Chunk
	if err := json.Unmarshal([]byte(`{"error":{"code":"x","id":"i","message":"m","param":"p","type":"t"},"status_code":500}`), &c); err != nil {
		t.Fatal(err)
	}
	var e ChunkError
	if err := json.Unmarshal(c.Error, &e); err != nil || c.StatusCode != 500 || e.Message != "m" || string(e.Code) != `"x"` || e.Param != "p" {
		t.Fatalf("chunk %+v error %+v %v", c, e, err)
	}
}
