package sim

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"knobs/llm"
)

// clients are the real Cerebras-format client with the simulator as its
// upstream: in process (the product's "sim" provider) and over HTTP.
func clients(t *testing.T, opts Options, key string) map[string]*llm.Client {
	t.Helper()
	srv := httptest.NewServer(NewHandler(opts))
	t.Cleanup(srv.Close)
	inproc := NewConfig(opts)
	inproc.Key = key
	over := llm.ProviderConfig{ID: "sim-http", Name: "Simulator over HTTP", Dialect: llm.DialectSim, BaseURL: srv.URL, Key: key, HTTPClient: srv.Client()}
	return map[string]*llm.Client{"transport": llm.NewClient(inproc), "http": llm.NewClient(over)}
}

// collected is what a run's events add up to, by kind.
type collected struct {
	content, reasoning map[int]string
	kinds              []llm.EventKind
	calls              []llm.ToolCall
	logprobs           []llm.TokenLogprob
	finish             map[int]string
	usage              *llm.Usage
	timeInfo           *llm.TimeInfo
	response           *llm.Response
	err                *llm.Error
	sawDone            bool
}

func runSpec(t *testing.T, c *llm.Client, endpoint llm.Endpoint, body string) collected {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	s := c.Stream(ctx, llm.RunSpec{Provider: "sim", Endpoint: endpoint, Body: json.RawMessage(body)})
	defer s.Close()
	out := collected{content: map[int]string{}, reasoning: map[int]string{}, finish: map[int]string{}}
	for s.Next() {
		ev := s.Event()
		if ev.Kind == llm.EventResponse {
			out.response = ev.Response
			continue
		}
		if len(out.kinds) == 0 || out.kinds[len(out.kinds)-1] != ev.Kind {
			out.kinds = append(out.kinds, ev.Kind)
		}
		switch ev.Kind {
		case llm.EventDelta:
			out.content[ev.Choice] += ev.Text
		case llm.EventReasoning:
			out.reasoning[ev.Choice] += ev.Text
		case llm.EventLogprobs:
			out.logprobs = append(out.logprobs, ev.Logprobs...)
		case llm.EventFinish:
			out.finish[ev.Choice] = ev.FinishReason
		case llm.EventUsage:
			out.usage = ev.Usage
		case llm.EventTimeInfo:
			out.timeInfo = ev.TimeInfo
		}
	}
	out.calls = s.ToolCalls(0)
	out.err = s.Err()
	out.sawDone = s.SawDone()
	return out
}

func TestRealClientAgainstTheSimulator(t *testing.T) {
	weather := `{"type":"object","properties":{"location":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]}},"required":["location","unit"],"additionalProperties":false}`
	for name, c := range clients(t, fast, "") {
		t.Run(name, func(t *testing.T) {
			got := runSpec(t, c, llm.EndpointChat, chatBody("sim-fast", prompt, map[string]any{"seed": 1}))
			if got.err != nil || !got.sawDone || !strings.Contains(got.content[0], "Knobs simulator") || got.finish[0] != "stop" {
				t.Fatalf("chat: err %v done %v finish %q content %q", got.err, got.sawDone, got.finish[0], first(got.content[0]))
			}
			if got.usage == nil || got.usage.CompletionTokens == 0 || got.timeInfo == nil || got.timeInfo.TotalTime <= 0 {
				t.Errorf("chat: usage %+v time_info %+v", got.usage, got.timeInfo)
			}
			// The client saw what the handler said, unchanged.
			direct := targets(t, fast)[1].chat(t, chatBody("sim-fast", prompt, map[string]any{"seed": 1}))
			if got.content[0] != direct.content[0] {
				t.Errorf("chat: client content differs from the wire")
			}

			got = runSpec(t, c, llm.EndpointCompletion, `{"model":"sim-fast","prompt":"The lighthouse keeper","max_tokens":40,"seed":2}`)
			if got.err != nil || got.usage == nil || got.usage.CompletionTokens != 40 || got.finish[0] != "length" || got.content[0] == "" {
				t.Errorf("completion: %+v", got)
			}

			got = runSpec(t, c, llm.EndpointChat, chatBody("sim-reasoning", prompt, map[string]any{"seed": 1, "reasoning_effort": "low"}))
			if got.err != nil || got.reasoning[0] == "" || got.content[0] == "" || got.usage.ReasoningTokens == 0 {
				t.Errorf("reasoning: err %v, reasoning %q, usage %+v", got.err, first(got.reasoning[0]), got.usage)
			}
			if len(got.kinds) < 2 || got.kinds[0] != llm.EventReasoning {
				t.Errorf("reasoning: event kinds %v, want reasoning first", got.kinds)
			}

			tools := []map[string]any{{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": json.RawMessage(weather)}}}
			got = runSpec(t, c, llm.EndpointChat, chatBody("sim-fast", "Weather in Lisbon? Use get_weather.", map[string]any{"seed": 1, "tools": tools}))
			if got.err != nil || len(got.calls) != 1 || got.calls[0].Name != "get_weather" || got.finish[0] != "tool_calls" {
				t.Fatalf("tools: err %v calls %+v finish %q", got.err, got.calls, got.finish[0])
			}
			if err := validate(t, validator(t, weather), got.calls[0].Arguments); err != nil {
				t.Errorf("tools: arguments %s: %v", got.calls[0].Arguments, err)
			}

			got = runSpec(t, c, llm.EndpointChat, chatBody("sim-fast", prompt, map[string]any{"seed": 1, "logprobs": true, "top_logprobs": 2, "max_tokens": 30}))
			if got.err != nil || len(got.logprobs) != 30 || len(got.logprobs[0].Top) != 2 {
				t.Errorf("logprobs: err %v, %d entries", got.err, len(got.logprobs))
			}

			got = runSpec(t, c, llm.EndpointChat, chatBody("sim-flaky", prompt, map[string]any{"seed": 1}))
			if got.err == nil || got.err.Kind != llm.ErrStream || !strings.Contains(got.err.Message, "sim-flaky") || got.content[0] == "" {
				t.Errorf("flaky: err %+v, content %q", got.err, first(got.content[0]))
			}

			got = runSpec(t, c, llm.EndpointChat, `{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"store":true}`)
			if got.err == nil || got.err.Kind != llm.ErrValidation || got.err.Status != 422 {
				t.Errorf("unknown field: %+v", got.err)
			}

			got = runSpec(t, c, llm.EndpointChat, `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`)
			if got.err == nil || got.err.Kind != llm.ErrUnknownModel {
				t.Errorf("unknown model: %+v", got.err)
			}
		})
	}
}

func TestRealClientBadKey(t *testing.T) {
	opts := fast
	opts.APIKey = "right"
	for name, c := range clients(t, opts, "wrong") {
		got := runSpec(t, c, llm.EndpointChat, chatBody("sim-fast", "hi", nil))
		if got.err == nil || got.err.Kind != llm.ErrBadKey || got.err.Status != 401 || got.err.Message != "Wrong API Key" {
			t.Errorf("%s: %+v", name, got.err)
		}
	}
	for name, c := range clients(t, opts, "right") {
		if got := runSpec(t, c, llm.EndpointChat, chatBody("sim-fast", "hi", map[string]any{"max_tokens": 5})); got.err != nil {
			t.Errorf("%s: right key: %v", name, got.err)
		}
	}
}

func TestRealClientModels(t *testing.T) {
	for name, c := range clients(t, fast, "") {
		ms, err := c.Models(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ids := map[string]bool{}
		for _, m := range ms {
			ids[m.ID] = true
		}
		for _, m := range Models() {
			if !ids[m.ID] {
				t.Errorf("%s: client's model list %v lacks %s", name, ids, m.ID)
			}
		}
	}
}

func TestConfig(t *testing.T) {
	c := Config()
	if c.ID != "sim" || c.Name != "Simulator" || c.Dialect != llm.DialectSim || c.BaseURL != "http://sim.knobs.invalid" || c.HTTPClient == nil || c.Key != "" {
		t.Errorf("Config() = %+v", c)
	}
}

// TestMaxTokensZeroScoresThePrompt: max_tokens 0 with echo and logprobs
// (seed 000 allows it) answers the prompt with a logprob per token, the
// first one none, and generates nothing (issue 12, item 2).
func TestMaxTokensZeroScoresThePrompt(t *testing.T) {
	for name, c := range clients(t, fast, "") {
		for _, stream := range []string{"", `,"stream":false`} {
			t.Run(name+stream, func(t *testing.T) {
				got := runSpec(t, c, llm.EndpointCompletion, `{"model":"sim-fast","prompt":"The sky is blue","max_tokens":0,"echo":true,"logprobs":2`+stream+`}`)
				if got.err != nil || got.content[0] != "The sky is blue" || got.finish[0] != "length" {
					t.Fatalf("err %v content %q finish %q", got.err, got.content[0], got.finish[0])
				}
				var toks []string
				for _, lp := range got.logprobs {
					toks = append(toks, lp.Token)
				}
				if strings.Join(toks, "") != "The sky is blue" || len(toks) < 3 {
					t.Fatalf("logprob tokens = %q", toks)
				}
				if !got.logprobs[0].NoLogprob || got.logprobs[1].NoLogprob || got.logprobs[1].Logprob >= 0 {
					t.Fatalf("first two logprobs = %+v %+v: want none for the first, a real one after", got.logprobs[0], got.logprobs[1])
				}
				if got.usage == nil || got.usage.CompletionTokens != 0 {
					t.Fatalf("usage = %+v", got.usage)
				}
			})
		}
	}
}
