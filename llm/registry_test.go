package llm

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

// The request fields of the providers' API specifications (the OpenAPI
// documents of Cerebras, xAI and OpenAI's legacy completions), written out
// here from them. "stream" is left out: the client sets it, it is no panel
// control.
var (
	// 002: Cerebras POST /v1/chat/completions, ChatCompletionRequest.
	seedCerebrasChat = []string{
		"clear_thinking", "disable_reasoning", "frequency_penalty", "logit_bias", "logprobs",
		"max_completion_tokens", "max_tokens", "messages", "min_completion_tokens", "min_tokens",
		"model", "model_parameters", "n", "parallel_tool_calls", "prediction", "presence_penalty",
		"prompt_cache_key", "reasoning_effort", "reasoning_format", "response_format", "seed",
		"service_tier", "stop", "stream", "stream_options", "temperature", "tool_choice", "tools",
		"top_logprobs", "top_p", "user",
	}
	// 000: Cerebras POST /v1/completions, CompletionRequest.
	seedCerebrasCompletion = []string{
		"best_of", "echo", "frequency_penalty", "grammar_root", "logit_bias", "logprobs",
		"max_tokens", "min_tokens", "model", "n", "presence_penalty", "prompt", "prompt_cache_key",
		"reasoning_format", "return_raw_tokens", "seed", "stop", "stream", "stream_options", "suffix",
		"temperature", "top_p", "user",
	}
	// 001: xAI POST /v1/completions, SampleRequest.
	seedXAICompletion = []string{
		"best_of", "echo", "frequency_penalty", "logit_bias", "logprobs", "max_tokens", "model",
		"n", "presence_penalty", "prompt", "seed", "stop", "stream", "stream_options", "suffix",
		"temperature", "top_p", "user",
	}
	// The fields the xAI seed marks "(Unsupported)".
	seedXAICompletionUnsupported = []string{"best_of", "frequency_penalty", "logit_bias", "suffix"}
)

func paramNames(ps []Param, keep func(Param) bool) []string {
	var out []string
	for _, p := range ps {
		if keep == nil || keep(p) {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}

func isSupported(p Param) bool { return p.Supported }

func TestRegistrySeedFields(t *testing.T) {
	tests := []struct {
		d    Dialect
		e    Endpoint
		seed []string
	}{
		{DialectCerebras, EndpointChat, seedCerebrasChat},
		{DialectCerebras, EndpointCompletion, seedCerebrasCompletion},
		{DialectSim, EndpointChat, seedCerebrasChat},
		{DialectSim, EndpointCompletion, seedCerebrasCompletion},
	}
	for _, tt := range tests {
		got := paramNames(Params(tt.d, tt.e), nil)
		want := slices.Sorted(slices.Values(tt.seed))
		if !slices.Equal(got, want) {
			t.Errorf("Params(%s, %s) = %v\nwant the seed's %v", tt.d, tt.e, got, want)
		}
	}

	// xAI completions: every field of the xAI seed is listed, and what xAI
	// is said to support is exactly the seed less its "(Unsupported)" ones.
	xai := Params(DialectXAI, EndpointCompletion)
	all := paramNames(xai, nil)
	for _, f := range seedXAICompletion {
		if !slices.Contains(all, f) {
			t.Errorf("Params(xai, completion) lacks the seed field %s", f)
		}
	}
	var want []string
	for _, f := range seedXAICompletion {
		if !slices.Contains(seedXAICompletionUnsupported, f) {
			want = append(want, f)
		}
	}
	sort.Strings(want)
	if got := paramNames(xai, isSupported); !slices.Equal(got, want) {
		t.Errorf("xAI completion supported = %v\nwant %v", got, want)
	}
}

func TestRegistrySeedTypes(t *testing.T) {
	tests := []struct {
		d    Dialect
		e    Endpoint
		name string
		want ParamType
	}{
		{DialectCerebras, EndpointChat, "logprobs", TypeBoolean},
		{DialectCerebras, EndpointCompletion, "logprobs", TypeInteger},
		{DialectXAI, EndpointCompletion, "logprobs", TypeBoolean},
		{DialectXAI, EndpointChat, "logprobs", TypeBoolean},
		{DialectOpenAI, EndpointCompletion, "logprobs", TypeInteger},
		{DialectCerebras, EndpointChat, "stop", TypeStringOrArray},
		{DialectXAI, EndpointCompletion, "stop", TypeStringArray},
		{DialectCerebras, EndpointChat, "messages", TypeMessages},
		{DialectCerebras, EndpointCompletion, "prompt", TypePrompt},
		{DialectCerebras, EndpointChat, "tool_choice", TypeEnumOrObject},
		{DialectCerebras, EndpointChat, "tools", TypeArray},
		{DialectCerebras, EndpointChat, "response_format", TypeObject},
		{DialectCerebras, EndpointChat, "reasoning_effort", TypeEnum},
		{DialectCerebras, EndpointChat, "seed", TypeInteger},
		{DialectCerebras, EndpointChat, "temperature", TypeNumber},
	}
	for _, tt := range tests {
		p, ok := FindParam(tt.d, tt.e, tt.name)
		if !ok || p.Type != tt.want {
			t.Errorf("%s %s %s: type %q (found %v), want %q", tt.d, tt.e, tt.name, p.Type, ok, tt.want)
		}
	}
}

func TestRegistryRanges(t *testing.T) {
	tests := []struct {
		d        Dialect
		e        Endpoint
		name     string
		min, max *float64
	}{
		{DialectCerebras, EndpointChat, "temperature", bound(0), bound(2)},
		{DialectXAI, EndpointCompletion, "temperature", bound(0), bound(2)},
		{DialectCerebras, EndpointChat, "top_p", bound(0), bound(1)},
		{DialectCerebras, EndpointChat, "frequency_penalty", bound(-2), bound(2)},
		{DialectCerebras, EndpointChat, "presence_penalty", bound(-2), bound(2)},
		{DialectCerebras, EndpointChat, "logit_bias", bound(-100), bound(100)},
		{DialectCerebras, EndpointChat, "top_logprobs", bound(0), bound(20)},
		{DialectXAI, EndpointChat, "top_logprobs", bound(0), bound(8)},
		{DialectCerebras, EndpointChat, "n", bound(1), nil},
		{DialectCerebras, EndpointChat, "max_completion_tokens", bound(-1), nil},
		{DialectSim, EndpointChat, "max_tokens", bound(-1), nil},
		{DialectXAI, EndpointChat, "max_completion_tokens", bound(1), nil},
		{DialectOpenAI, EndpointChat, "max_tokens", bound(1), nil},
		{DialectCerebras, EndpointChat, "min_completion_tokens", bound(-1), nil},
		{DialectCerebras, EndpointCompletion, "max_tokens", bound(-1), nil},
		{DialectCerebras, EndpointCompletion, "min_tokens", bound(-1), nil},
		{DialectXAI, EndpointCompletion, "max_tokens", bound(1), bound(maxInt32)},
		{DialectCerebras, EndpointCompletion, "best_of", bound(0), bound(20)},
		{DialectCerebras, EndpointCompletion, "logprobs", bound(0), bound(20)},
		{DialectXAI, EndpointCompletion, "logprobs", nil, nil},
	}
	eq := func(a, b *float64) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }
	for _, tt := range tests {
		p, _ := FindParam(tt.d, tt.e, tt.name)
		if !eq(p.Min, tt.min) || !eq(p.Max, tt.max) {
			t.Errorf("%s %s %s: range %v..%v, want %v..%v", tt.d, tt.e, tt.name, derefNum(p.Min), derefNum(p.Max), derefNum(tt.min), derefNum(tt.max))
		}
	}
	if p, _ := FindParam(DialectCerebras, EndpointChat, "stop"); p.MaxItems != 4 {
		t.Errorf("stop MaxItems = %d, want 4", p.MaxItems)
	}
	if p, _ := FindParam(DialectCerebras, EndpointCompletion, "prompt_cache_key"); p.MaxLength != 1024 {
		t.Errorf("prompt_cache_key MaxLength = %d, want 1024", p.MaxLength)
	}
}

func derefNum(p *float64) any {
	if p == nil {
		return "-"
	}
	return *p
}

func TestRegistryDefaultsAndEnums(t *testing.T) {
	defaults := []struct {
		d    Dialect
		e    Endpoint
		name string
		want any
	}{
		{DialectCerebras, EndpointCompletion, "temperature", 1.0},
		{DialectCerebras, EndpointCompletion, "top_p", 1.0},
		{DialectCerebras, EndpointCompletion, "n", 1},
		{DialectCerebras, EndpointCompletion, "best_of", 1},
		{DialectCerebras, EndpointCompletion, "echo", false},
		{DialectCerebras, EndpointCompletion, "presence_penalty", 0.0},
		{DialectCerebras, EndpointCompletion, "seed", nil},
		{DialectXAI, EndpointCompletion, "temperature", 1.0},
		{DialectXAI, EndpointCompletion, "n", nil},
	}
	for _, tt := range defaults {
		if p, _ := FindParam(tt.d, tt.e, tt.name); p.Default != tt.want {
			t.Errorf("%s %s %s default = %v, want %v", tt.d, tt.e, tt.name, p.Default, tt.want)
		}
	}
	enums := []struct {
		d    Dialect
		e    Endpoint
		name string
		want []string
	}{
		{DialectCerebras, EndpointChat, "reasoning_effort", []string{"none", "low", "medium", "high"}},
		{DialectCerebras, EndpointChat, "reasoning_format", []string{"none", "parsed", "text_parsed", "raw", "hidden"}},
		{DialectCerebras, EndpointCompletion, "reasoning_format", []string{"none", "parsed", "text_parsed", "raw", "hidden"}},
		{DialectCerebras, EndpointChat, "service_tier", []string{"auto", "default", "flex", "priority"}},
		{DialectCerebras, EndpointChat, "tool_choice", []string{"none", "auto", "required"}},
	}
	for _, tt := range enums {
		if p, _ := FindParam(tt.d, tt.e, tt.name); !slices.Equal(p.Enum, tt.want) {
			t.Errorf("%s %s %s enum = %v, want %v", tt.d, tt.e, tt.name, p.Enum, tt.want)
		}
	}
	if p, _ := FindParam(DialectCerebras, EndpointCompletion, "reasoning_format"); !p.Deprecated {
		t.Error("completion reasoning_format is deprecated in the seed")
	}
}

func TestRegistryParamsWellFormed(t *testing.T) {
	groupOrder := []Group{GroupModel, GroupInput, GroupSampling, GroupLength, GroupPenalties,
		GroupReasoning, GroupOutput, GroupLogprobs, GroupTools, GroupAdvanced}
	for _, d := range []Dialect{DialectCerebras, DialectXAI, DialectOpenAI, DialectSim} {
		for _, e := range []Endpoint{EndpointChat, EndpointCompletion} {
			seen := map[string]bool{}
			last := -1
			for _, p := range Params(d, e) {
				where := string(d) + " " + string(e) + " " + p.Name
				if p.Name == "" || p.Type == "" || p.Doc == "" || seen[p.Name] {
					t.Errorf("%s: missing name, type or doc, or listed twice", where)
				}
				seen[p.Name] = true
				g := slices.Index(groupOrder, p.Group)
				if g < 0 || g < last {
					t.Errorf("%s: group %q out of display order", where, p.Group)
				}
				last = g
				if !p.Supported && p.Reason == "" {
					t.Errorf("%s: unsupported without a reason", where)
				}
				if (p.Type == TypeEnum || p.Type == TypeEnumOrObject) && len(p.Enum) == 0 {
					t.Errorf("%s: enum without values", where)
				}
				if strings.Contains(p.Doc, "\n") {
					t.Errorf("%s: doc is more than one line", where)
				}
			}
			first := Params(d, e)[0]
			if first.Name != "model" || !first.Required {
				t.Errorf("%s %s: model is not the first, required parameter", d, e)
			}
		}
	}
	if Params("nope", EndpointChat) != nil || Params(DialectCerebras, "embeddings") != nil {
		t.Error("Params of an unknown dialect or endpoint is not nil")
	}
}

func TestRegistryParamsNotShared(t *testing.T) {
	p, _ := FindParam(DialectCerebras, EndpointChat, "reasoning_effort")
	p.Enum[0] = "changed"
	if q, _ := FindParam(DialectCerebras, EndpointChat, "reasoning_effort"); q.Enum[0] == "changed" {
		t.Fatal("Params shares its enum slices between calls")
	}
	p, _ = FindParam(DialectCerebras, EndpointChat, "temperature")
	*p.Max = 100
	if q, _ := FindParam(DialectCerebras, EndpointChat, "temperature"); *q.Max != 2 {
		t.Fatal("Params shares its bounds between calls")
	}
}

func TestRegistrySupport(t *testing.T) {
	m := func(id string) Model { return Model{ID: id} }
	tests := []struct {
		d      Dialect
		e      Endpoint
		model  Model
		name   string
		ok     bool
		reason string // a part of the reason, when !ok
	}{
		// Per dialect, whatever the model.
		{DialectCerebras, EndpointCompletion, m("gpt-oss-120b"), "suffix", false, "Cerebras does not support suffix"},
		{DialectSim, EndpointCompletion, m("sim-fast"), "suffix", false, "does not support suffix"},
		{DialectOpenAI, EndpointCompletion, m("x"), "suffix", true, ""},
		{DialectXAI, EndpointCompletion, m("grok-3"), "best_of", false, "xAI does not support best_of"},
		{DialectXAI, EndpointCompletion, m("grok-3"), "frequency_penalty", false, "xAI does not support frequency_penalty"},
		{DialectXAI, EndpointCompletion, m("grok-3"), "logit_bias", false, "xAI does not support logit_bias"},
		{DialectXAI, EndpointCompletion, m("grok-3"), "suffix", false, "xAI does not support suffix"},
		{DialectXAI, EndpointCompletion, m("grok-3"), "echo", true, ""},
		{DialectXAI, EndpointChat, m("grok-3"), "min_tokens", false, "xAI's chat API has no min_tokens"},
		{DialectXAI, EndpointChat, m("grok-3"), "logit_bias", true, ""},
		{DialectCerebras, EndpointChat, m("gpt-oss-120b"), "clear_thinking", true, ""},
		{DialectOpenAI, EndpointChat, m("x"), "min_tokens", true, ""},

		// Fields the registry does not list.
		{DialectCerebras, EndpointChat, m("gpt-oss-120b"), "store", false, "would answer 422"},
		{DialectSim, EndpointChat, m("sim-fast"), "store", false, "would answer 422"},
		{DialectOpenAI, EndpointChat, m("x"), "store", true, ""},
		{DialectXAI, EndpointChat, m("grok-3"), "search_parameters", true, ""},
		{DialectCerebras, EndpointChat, m("gpt-oss-120b"), "echo", false, "text completion parameter"},
		{DialectCerebras, EndpointCompletion, m("gpt-oss-120b"), "tools", false, "chat parameter"},
		{DialectOpenAI, EndpointCompletion, m("x"), "messages", false, "takes a prompt"},
		{DialectOpenAI, EndpointChat, m("x"), "prompt", false, "takes messages"},

		// Per model.
		{DialectXAI, EndpointChat, m("grok-4"), "presence_penalty", false, "xAI reasoning models"},
		{DialectXAI, EndpointChat, m("grok-4-0709"), "frequency_penalty", false, "xAI reasoning models"},
		{DialectXAI, EndpointChat, m("grok-code-fast-1"), "stop", false, "xAI reasoning models"},
		{DialectXAI, EndpointChat, m("grok-4-1-fast-non-reasoning"), "presence_penalty", true, ""},
		{DialectXAI, EndpointChat, m("grok-4-1-fast-non-reasoning"), "stop", true, ""},
		{DialectXAI, EndpointCompletion, m("grok-3"), "presence_penalty", false, "grok-3 does not support presence_penalty"},
		{DialectXAI, EndpointCompletion, m("grok-3-latest"), "presence_penalty", false, "grok-3 does not support presence_penalty"},
		{DialectXAI, EndpointChat, m("grok-3"), "reasoning_effort", false, "not a reasoning model"},
		{DialectXAI, EndpointChat, m("grok-4"), "reasoning_effort", false, "rejects reasoning_effort"},
		{DialectXAI, EndpointChat, m("grok-3-mini"), "reasoning_effort", true, ""},
		{DialectCerebras, EndpointChat, m("gpt-oss-120b"), "reasoning_effort", true, ""},
		{DialectCerebras, EndpointChat, m("llama3.1-8b"), "reasoning_effort", false, "llama3.1-8b is not a reasoning model"},
		{DialectCerebras, EndpointChat, m("llama3.1-8b"), "disable_reasoning", false, "not a reasoning model"},
		{DialectSim, EndpointChat, m("sim-fast"), "reasoning_effort", false, "not a reasoning model"},
		{DialectSim, EndpointChat, m("sim-reasoning"), "reasoning_effort", true, ""},
		// An unknown model gets the benefit of the doubt.
		{DialectCerebras, EndpointChat, m("brand-new-model"), "reasoning_effort", true, ""},
		{DialectXAI, EndpointChat, m("grok-9"), "presence_penalty", true, ""},
		// What the caller knows of a model counts.
		{DialectXAI, EndpointChat, Model{ID: "grok-9", Reasoning: true}, "presence_penalty", false, "xAI reasoning models"},
		{DialectOpenAI, EndpointChat, Model{ID: "o9", Reasoning: true, ReasoningEfforts: []string{}}, "reasoning_effort", false, "rejects reasoning_effort"},
	}
	if ok, _ := Support("nope", EndpointChat, Model{}, "temperature"); ok {
		t.Error("Support of an unknown dialect is ok")
	}
	for d, want := range map[Dialect]bool{DialectCerebras: false, DialectSim: false, DialectXAI: true, DialectOpenAI: true, "nope": false} {
		if got := ExtraFieldsAllowed(d); got != want {
			t.Errorf("ExtraFieldsAllowed(%s) = %v, want %v", d, got, want)
		}
	}
	for _, tt := range tests {
		ok, reason := Support(tt.d, tt.e, tt.model, tt.name)
		if ok != tt.ok || (!ok && !strings.Contains(reason, tt.reason)) || (!ok && reason == "") {
			t.Errorf("Support(%s, %s, %s, %s) = %v %q, want %v %q", tt.d, tt.e, tt.model.ID, tt.name, ok, reason, tt.ok, tt.reason)
		}
	}
}
