package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSeedRangesAreTheRangesAccepted: issue 12 items 2, 3 and 4 on the
// validation side. Each case refused or passed the wrong way before.
func TestSeedRangesAreTheRangesAccepted(t *testing.T) {
	compl := func(extra string) RunSpec {
		return RunSpec{Endpoint: EndpointCompletion, Body: json.RawMessage(`{"model":"m","prompt":"The sky is"` + extra + `}`)}
	}
	chat := func(extra string) RunSpec {
		return RunSpec{Endpoint: EndpointChat, Body: json.RawMessage(`{"model":"m","messages":[{"role":"user","content":"hi"}]` + extra + `}`)}
	}
	for _, tt := range []struct {
		name  string
		d     Dialect
		spec  RunSpec
		field string // "" when the spec must pass
		says  string
	}{
		{"max_tokens 0 scores a prompt on Cerebras completions", DialectCerebras, compl(`,"max_tokens":0,"echo":true,"logprobs":5`), "", ""},
		{"and on the simulator", DialectSim, compl(`,"max_tokens":0,"echo":true,"logprobs":1`), "", ""},
		{"max_completion_tokens 0 on chat is still refused", DialectCerebras, chat(`,"max_completion_tokens":0`), "max_completion_tokens", "at least 1"},
		{"xAI seed is int32", DialectXAI, compl(`,"seed":2147483648`), "seed", "between -2147483648 and 2147483647"},
		{"xAI seed int32 low end passes", DialectXAI, compl(`,"seed":-2147483648`), "", ""},
		{"xAI n is int32", DialectXAI, compl(`,"n":2147483648`), "n", "2147483647"},
		{"xAI max_tokens is int32", DialectXAI, compl(`,"max_tokens":3000000000`), "max_tokens", "2147483647"},
		{"best_of above 1 streamed says how", DialectCerebras, compl(`,"best_of":3`), "best_of", "stream to false"},
		{"best_of above 1 without streaming passes", DialectCerebras, compl(`,"best_of":3,"stream":false`), "", ""},
		{"stream false is a user's choice", DialectCerebras, chat(`,"stream":false`), "", ""},
		{"stream must be a boolean", DialectCerebras, chat(`,"stream":"no"`), "stream", "true or false"},
		{"stream_options without a stream", DialectOpenAI, chat(`,"stream":false,"stream_options":{"include_usage":true}`), "stream_options", "streamed answer only"},
		{"an array prompt of strings", DialectXAI, RunSpec{Endpoint: EndpointCompletion, Body: json.RawMessage(`{"model":"m","prompt":["a","b"]}`)}, "", ""},
		{"an array prompt of token-id arrays", DialectCerebras, RunSpec{Endpoint: EndpointCompletion, Body: json.RawMessage(`{"model":"m","prompt":[[1,2],[3]]}`)}, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(tt.spec, tt.d, Model{})
			if tt.field == "" {
				if !errs.Empty() {
					t.Fatalf("refused: %v", errs)
				}
				return
			}
			if msg := errs[tt.field]; !strings.Contains(msg, tt.says) {
				t.Fatalf("error at %q = %q, want it to say %q (all: %v)", tt.field, msg, tt.says, errs)
			}
		})
	}
}

// TestPlaceholderDefaultsComeFromTheEndpointsSeed: seed 002 gives no
// defaults for chat; seed 000 does for completions.
func TestPlaceholderDefaultsComeFromTheEndpointsSeed(t *testing.T) {
	for _, name := range []string{"temperature", "top_p", "n", "frequency_penalty", "presence_penalty"} {
		if p, _ := FindParam(DialectCerebras, EndpointChat, name); p.Default != nil {
			t.Errorf("chat %s has default %v; seed 002 gives none", name, p.Default)
		}
		if p, _ := FindParam(DialectCerebras, EndpointCompletion, name); p.Default == nil {
			t.Errorf("completion %s has no default; seed 000 gives one", name)
		}
	}
}

// TestDeprecatedFieldsNameTheirReplacement: item 5.
func TestDeprecatedFieldsNameTheirReplacement(t *testing.T) {
	for _, tt := range []struct {
		e    Endpoint
		name string
		repl string
	}{{EndpointChat, "max_tokens", "max_completion_tokens"}, {EndpointCompletion, "reasoning_format", "chat"}} {
		p, _ := FindParam(DialectCerebras, tt.e, tt.name)
		if !p.Deprecated || !strings.Contains(p.Replacement, tt.repl) {
			t.Errorf("%s %s: deprecated %v, replacement %q", tt.e, tt.name, p.Deprecated, p.Replacement)
		}
	}
}

// TestCustomProvidersGetTheOpenAIParameterSet: item 12. Cerebras
// extensions are not offered to an OpenAI-compatible server; they still
// pass as extra body.
func TestCustomProvidersGetTheOpenAIParameterSet(t *testing.T) {
	for _, e := range []Endpoint{EndpointChat, EndpointCompletion} {
		for _, name := range []string{"reasoning_format", "clear_thinking", "disable_reasoning", "min_tokens", "model_parameters", "grammar_root", "return_raw_tokens"} {
			if _, ok := FindParam(DialectOpenAI, e, name); ok {
				t.Errorf("%s %s is offered to an OpenAI-compatible server", e, name)
			}
		}
	}
	// OpenAI's own chat API has these (openai-python's create signature).
	for _, name := range []string{"service_tier", "prompt_cache_key", "prediction", "reasoning_effort", "max_completion_tokens"} {
		if _, ok := FindParam(DialectOpenAI, EndpointChat, name); !ok {
			t.Errorf("chat %s, an OpenAI parameter, is missing", name)
		}
	}
	spec := RunSpec{Endpoint: EndpointChat, Body: json.RawMessage(`{"model":"m","messages":[{"role":"user","content":"hi"}],"clear_thinking":true}`)}
	if errs := Validate(spec, DialectOpenAI, Model{}); !errs.Empty() {
		t.Errorf("an extension through extra body was refused: %v", errs)
	}
}
