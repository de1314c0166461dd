package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"knobs/llm"
)

const prompt = "Explain how garbage collection works in Go, briefly."

func TestStreamFormatMatchesSeed(t *testing.T) {
	for _, tg := range targets(t, fast) {
		t.Run(tg.name, func(t *testing.T) {
			a := tg.post(t, "/v1/chat/completions", chatBody("sim-fast", prompt, map[string]any{"stream": true, "seed": 7}))
			if a.status != 200 || a.header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
				t.Fatalf("status %d, content type %q", a.status, a.header.Get("Content-Type"))
			}
			lines := dataLines(t, a.body)
			if lines[len(lines)-1] != "[DONE]" {
				t.Fatalf("last event %q, want [DONE]", lines[len(lines)-1])
			}
			first := `{"id":"chatcmpl-`
			for i, l := range lines[:len(lines)-1] {
				if !strings.HasPrefix(l, first) {
					t.Fatalf("chunk %d does not start like a Cerebras chunk: %s", i, l)
				}
				if !strings.Contains(l, `"object":"chat.completion.chunk"`) || !strings.Contains(l, `"model":"sim-fast"`) || !strings.Contains(l, `"system_fingerprint":"fp_`) {
					t.Fatalf("chunk %d lacks the chunk fields: %s", i, l)
				}
				hasUsage := strings.Contains(l, `"usage":`)
				if last := i == len(lines)-2; hasUsage != last || strings.Contains(l, `"time_info":`) != last {
					t.Fatalf("chunk %d: usage/time_info %v, want only on the last chunk: %s", i, hasUsage, l)
				}
			}
			if !strings.Contains(lines[0], `"delta":{"role":"assistant"}`) {
				t.Errorf("first chunk %s: want the role delta", lines[0])
			}
			s := readChat(t, a.body)
			ids := map[string]bool{}
			for _, c := range s.chunks {
				ids[c.ID] = true
			}
			if len(ids) != 1 {
				t.Errorf("chunk ids %v: want one id for the whole stream", ids)
			}
			if s.finish[0] != "stop" || s.usage.CompletionTokens == 0 || s.usage.TotalTokens != s.usage.PromptTokens+s.usage.CompletionTokens {
				t.Errorf("finish %q usage %+v", s.finish[0], s.usage)
			}
			ti := s.timeInfo
			if ti.TotalTime <= 0 || ti.CompletionTime <= 0 || ti.TotalTime < ti.QueueTime+ti.PromptTime+ti.CompletionTime-1e-9 {
				t.Errorf("time_info %+v", ti)
			}
		})
	}
}

func TestIncludeUsageSendsUsageChunkWithEmptyChoices(t *testing.T) {
	for _, tg := range targets(t, fast) {
		for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
			body := `{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":5}`
			if path == "/v1/completions" {
				body = `{"model":"sim-fast","prompt":"Once upon a time","stream":true,"stream_options":{"include_usage":true},"max_tokens":5}`
			}
			lines := dataLines(t, tg.post(t, path, body).body)
			usage := lines[len(lines)-2]
			if !strings.Contains(usage, `"choices":[]`) || !strings.Contains(usage, `"usage":{"prompt_tokens":`) || !strings.Contains(usage, `"time_info":{`) {
				t.Errorf("%s %s: usage chunk %s", tg.name, path, usage)
			}
			for _, l := range lines[:len(lines)-2] {
				if strings.Contains(l, `"usage"`) {
					t.Errorf("%s %s: usage before the usage chunk: %s", tg.name, path, l)
				}
			}
		}
	}
}

func TestNonStreamedChatIsTheSeedsResponseObject(t *testing.T) {
	for _, tg := range targets(t, fast) {
		body := chatBody("sim-fast", prompt, map[string]any{"seed": 3})
		a := tg.post(t, "/v1/chat/completions", body)
		if a.status != 200 || a.header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: status %d %s", tg.name, a.status, a.body)
		}
		var r chatResponse
		mustDecode(t, string(a.body), &r)
		var keys map[string]json.RawMessage
		_ = json.Unmarshal(a.body, &keys)
		for _, k := range []string{"id", "choices", "created", "model", "system_fingerprint", "object", "time_info", "usage"} {
			if _, ok := keys[k]; !ok {
				t.Errorf("%s: response lacks %q", tg.name, k)
			}
		}
		if r.Object != "chat.completion" || len(r.Choices) != 1 || r.Choices[0].Message.Role != "assistant" || r.Choices[0].FinishReason != "stop" {
			t.Fatalf("%s: %s", tg.name, a.body)
		}
		// The same request streamed says the same thing.
		s := tg.chat(t, body)
		if got := *r.Choices[0].Message.Content; got != s.content[0] {
			t.Errorf("%s: non-streamed content differs from streamed:\n%s\n---\n%s", tg.name, got, s.content[0])
		}
		if r.Usage.CompletionTokens != s.usage.CompletionTokens {
			t.Errorf("%s: usage %d vs streamed %d", tg.name, r.Usage.CompletionTokens, s.usage.CompletionTokens)
		}
	}
}

func TestNonStreamedCompletion(t *testing.T) {
	tg := targets(t, fast)[0]
	a := tg.post(t, "/v1/completions", `{"model":"sim-fast","prompt":"Michael Jordan was born in","max_tokens":30,"seed":1,"echo":true}`)
	var r completionChunk
	mustDecode(t, string(a.body), &r)
	if a.status != 200 || r.Object != "text_completion" || len(r.Choices) != 1 || r.Choices[0].FinishReason != "length" || r.Usage == nil || r.TimeInfo == nil {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
	if !strings.HasPrefix(r.Choices[0].Text, "Michael Jordan was born in ") {
		t.Errorf("echo: text %q does not start with the prompt", r.Choices[0].Text)
	}
	if r.Usage.CompletionTokens != 30 {
		t.Errorf("completion tokens %d, want 30", r.Usage.CompletionTokens)
	}
}

func TestSameSeedSameBytes(t *testing.T) {
	for _, tg := range targets(t, fast) {
		for _, extra := range []map[string]any{
			{"seed": 42, "stream": true, "logprobs": true, "top_logprobs": 3},
			{"seed": 42},
			{"seed": 42, "temperature": 1.7, "n": 2, "stream": true},
		} {
			body := chatBody("sim-reasoning", prompt, extra)
			a, b := tg.post(t, "/v1/chat/completions", body), tg.post(t, "/v1/chat/completions", body)
			if !bytes.Equal(a.body, b.body) {
				t.Errorf("%s %v: two answers to the same seeded request differ", tg.name, extra)
			}
		}
	}
}

func TestTemperatureShapesVariety(t *testing.T) {
	tg := targets(t, fast)[1]
	contents := func(temp float64, seeds ...int) map[string]bool {
		out := map[string]bool{}
		for _, s := range seeds {
			out[tg.chat(t, chatBody("sim-fast", prompt, map[string]any{"seed": s, "temperature": temp})).content[0]] = true
		}
		return out
	}
	if got := contents(0, 1, 2, 3); len(got) != 1 {
		t.Errorf("temperature 0: %d different answers over 3 seeds, want 1", len(got))
	}
	if got := contents(1.5, 1, 2, 3, 4, 5); len(got) < 4 {
		t.Errorf("temperature 1.5: %d different answers over 5 seeds, want at least 4", len(got))
	}
	greedy := contents(0, 9)
	for c := range contents(1.2, 9) {
		if greedy[c] {
			t.Errorf("temperature 1.2 with seed 9 gave the greedy answer")
		}
	}
	// Unseeded requests at a high temperature differ from one another.
	unseeded := map[string]bool{}
	for range 3 {
		unseeded[tg.chat(t, chatBody("sim-fast", prompt, map[string]any{"temperature": 1.5})).content[0]] = true
	}
	if len(unseeded) < 2 {
		t.Errorf("three unseeded answers were all the same")
	}
}

func TestLengthKnobs(t *testing.T) {
	tg := targets(t, fast)[1]
	full := tg.chat(t, chatBody("sim-fast", prompt, map[string]any{"seed": 5}))
	tests := []struct {
		name       string
		extra      map[string]any
		finish     string
		tokens     func(int) bool
		prefixOnly bool
	}{
		{"max_tokens", map[string]any{"max_tokens": 10}, "length", func(n int) bool { return n == 10 }, true},
		{"max_completion_tokens", map[string]any{"max_completion_tokens": 25}, "length", func(n int) bool { return n == 25 }, true},
		{"min_tokens", map[string]any{"min_tokens": 900}, "stop", func(n int) bool { return n >= 900 }, false},
		{"min_completion_tokens", map[string]any{"min_completion_tokens": 700}, "stop", func(n int) bool { return n >= 700 }, false},
		{"stop", map[string]any{"stop": "simulator"}, "stop", func(n int) bool { return n > 0 && n < full.usage.CompletionTokens }, true},
		{"stop list", map[string]any{"stop": []string{"zzz", "real", "not"}}, "stop", func(n int) bool { return n > 0 }, true},
	}
	for _, tt := range tests {
		tt.extra["seed"] = 5
		s := tg.chat(t, chatBody("sim-fast", prompt, tt.extra))
		got := s.content[0]
		if s.finish[0] != tt.finish || !tt.tokens(s.usage.CompletionTokens) {
			t.Errorf("%s: finish %q, %d tokens", tt.name, s.finish[0], s.usage.CompletionTokens)
		}
		if tt.prefixOnly && !strings.HasPrefix(full.content[0], got) {
			t.Errorf("%s: %q is not a prefix of the unconstrained answer", tt.name, got)
		}
		if stops, ok := tt.extra["stop"]; ok {
			for _, st := range append([]string{fmt.Sprint(stops)}, anyStrings(stops)...) {
				if st != "" && !strings.HasPrefix(st, "[") && strings.Contains(got, st) {
					t.Errorf("%s: output contains the stop sequence %q", tt.name, st)
				}
			}
		}
	}
	// The stop sequence is the next thing the full answer says.
	s := tg.chat(t, chatBody("sim-fast", prompt, map[string]any{"seed": 5, "stop": "simulator"}))
	if !strings.HasPrefix(full.content[0][len(s.content[0]):], "simulator") {
		t.Errorf("stop cut at the wrong place: %q", s.content[0])
	}
}

func anyStrings(v any) []string {
	l, _ := v.([]string)
	return l
}

func TestNChoices(t *testing.T) {
	tg := targets(t, fast)[0]
	one := tg.chat(t, chatBody("sim-fast", prompt, map[string]any{"seed": 11}))
	s := tg.chat(t, chatBody("sim-fast", prompt, map[string]any{"seed": 11, "n": 3, "max_tokens": 400}))
	if len(s.content) != 3 || len(s.finish) != 3 {
		t.Fatalf("n=3: %d contents, %d finishes", len(s.content), len(s.finish))
	}
	if s.content[0] != one.content[0] {
		t.Errorf("choice 0 of n=3 differs from the n=1 answer")
	}
	if s.content[0] == s.content[1] || s.content[1] == s.content[2] {
		t.Errorf("choices are not independent samples")
	}
	if !strings.Contains(s.content[2], "Knobs simulator") {
		t.Errorf("choice 2: %q", s.content[2])
	}
}

func TestProseReadsThePrompt(t *testing.T) {
	tg := targets(t, fast)[1]
	tests := []struct {
		prompt string
		want   []string
	}{
		{"Explain how garbage collection works in Go.", []string{"garbage collection"}},
		{"Write a Python function that parses invoices from a CSV file.", []string{"```python", "def "}},
		{"What should I know about Kubernetes autoscaling?", []string{"Kubernetes autoscaling"}},
		{"", []string{"Knobs simulator"}},
	}
	for _, tt := range tests {
		c := tg.chat(t, chatBody("sim-fast", tt.prompt, map[string]any{"seed": 1, "min_tokens": 300})).content[0]
		first, _, _ := strings.Cut(c, ". ")
		if !strings.Contains(first, "Knobs simulator") || !strings.Contains(first, "not a real") {
			t.Errorf("%q: first sentence does not say it is the simulator: %q", tt.prompt, first)
		}
		for _, w := range tt.want {
			if !strings.Contains(c, w) {
				t.Errorf("%q: answer lacks %q:\n%s", tt.prompt, w, c)
			}
		}
	}
}

func TestLogprobsChat(t *testing.T) {
	for _, top := range []int{0, 3} {
		extra := map[string]any{"seed": 2, "logprobs": true, "max_tokens": 60}
		if top > 0 {
			extra["top_logprobs"] = top
		}
		s := targets(t, fast)[1].chat(t, chatBody("sim-fast", prompt, extra))
		lps := s.logprobs[0]
		if len(lps) != s.usage.CompletionTokens {
			t.Fatalf("%d logprob entries for %d tokens", len(lps), s.usage.CompletionTokens)
		}
		var joined strings.Builder
		for _, e := range lps {
			joined.WriteString(e.Token)
			if e.Logprob > 0 || len(e.TopLogprobs) != top || string(bytesOf(e.Bytes)) != e.Token {
				t.Fatalf("entry %+v (top_logprobs=%d)", e, top)
			}
			for i := 1; i < len(e.TopLogprobs); i++ {
				if e.TopLogprobs[i].Logprob > e.TopLogprobs[i-1].Logprob {
					t.Fatalf("top_logprobs not in order: %+v", e.TopLogprobs)
				}
			}
		}
		if joined.String() != s.content[0] {
			t.Errorf("tokens do not join to the content")
		}
	}
	// Asking for logprobs does not change the text.
	tg := targets(t, fast)[1]
	a := tg.chat(t, chatBody("sim-fast", prompt, map[string]any{"seed": 2}))
	b := tg.chat(t, chatBody("sim-fast", prompt, map[string]any{"seed": 2, "logprobs": true, "top_logprobs": 5}))
	if a.content[0] != b.content[0] {
		t.Errorf("logprobs changed the text")
	}
}

func bytesOf(b []int) []byte {
	out := make([]byte, len(b))
	for i, x := range b {
		out[i] = byte(x)
	}
	return out
}

func TestLogprobsCompletion(t *testing.T) {
	tg := targets(t, fast)[0]
	for _, stream := range []bool{false, true} {
		body := mustJSON(map[string]any{"model": "sim-fast", "prompt": "The moon", "logprobs": 2, "echo": true, "max_tokens": 20, "seed": 4, "stream": stream})
		a := tg.post(t, "/v1/completions", body)
		var text string
		lp := &completionLogprobs{}
		var chunks []completionChunk
		if stream {
			for _, d := range dataLines(t, a.body) {
				if d != "[DONE]" {
					var c completionChunk
					mustDecode(t, d, &c)
					chunks = append(chunks, c)
				}
			}
		} else {
			var c completionChunk
			mustDecode(t, string(a.body), &c)
			chunks = append(chunks, c)
		}
		for _, c := range chunks {
			if c.Object != "text_completion" {
				t.Fatalf("object %q", c.Object)
			}
			for _, ch := range c.Choices {
				text += ch.Text
				if l := ch.Logprobs; l != nil {
					lp.Tokens = append(lp.Tokens, l.Tokens...)
					lp.TokenLogprobs = append(lp.TokenLogprobs, l.TokenLogprobs...)
					lp.TextOffset = append(lp.TextOffset, l.TextOffset...)
					lp.TopLogprobs = append(lp.TopLogprobs, l.TopLogprobs...)
				}
			}
		}
		// The echoed prompt is scored too ("The", " moon"), its first
		// token without a logprob, then the 20 generated.
		if !strings.HasPrefix(text, "The moon ") || len(lp.Tokens) != 22 || len(lp.TokenLogprobs) != 22 || len(lp.TextOffset) != 22 || len(lp.TopLogprobs) != 22 {
			t.Fatalf("stream=%v: text %q, %d tokens", stream, text, len(lp.Tokens))
		}
		if lp.TokenLogprobs[0] != nil || lp.TokenLogprobs[1] == nil {
			t.Fatalf("stream=%v: the prompt's logprobs start %v %v, want null then a number", stream, lp.TokenLogprobs[0], lp.TokenLogprobs[1])
		}
		runes := []rune(text)
		for i, tok := range lp.Tokens {
			off := lp.TextOffset[i]
			if string(runes[off:off+utf8.RuneCountInString(tok)]) != tok {
				t.Fatalf("stream=%v: text_offset %d of %q is wrong", stream, off, tok)
			}
		}
	}
}

func TestReasoning(t *testing.T) {
	tg := targets(t, fast)[1]
	lengths := map[string]int{}
	for _, effort := range []string{"low", "medium", "high"} {
		s := tg.chat(t, chatBody("sim-reasoning", prompt, map[string]any{"seed": 1, "reasoning_effort": effort}))
		lengths[effort] = s.usage.CompletionTokensDetails.ReasoningTokens
		if s.reasoning[0] == "" || s.content[0] == "" {
			t.Fatalf("%s: no reasoning or no content", effort)
		}
		if i := slices.Index(s.order, "content"); i < 0 || slices.Contains(s.order[i:], "reasoning") {
			t.Errorf("%s: reasoning came after content: %v", effort, s.order)
		}
	}
	if !(lengths["low"] < lengths["medium"] && lengths["medium"] < lengths["high"]) {
		t.Errorf("reasoning tokens by effort: %v", lengths)
	}

	tests := []struct {
		extra     map[string]any
		reasoning bool
		think     bool
		tokens    bool
	}{
		{map[string]any{"reasoning_format": "parsed"}, true, false, true},
		{map[string]any{"reasoning_format": "text_parsed"}, true, false, true},
		{map[string]any{"reasoning_format": "raw"}, false, true, true},
		{map[string]any{"reasoning_format": "hidden"}, false, false, true},
		{map[string]any{"disable_reasoning": true}, false, false, false},
		{map[string]any{"reasoning_effort": "none"}, false, false, false},
	}
	for _, tt := range tests {
		tt.extra["seed"] = 1
		s := tg.chat(t, chatBody("sim-reasoning", prompt, tt.extra))
		if (s.reasoning[0] != "") != tt.reasoning || strings.HasPrefix(s.content[0], "<think>") != tt.think ||
			(s.usage.CompletionTokensDetails.ReasoningTokens > 0) != tt.tokens {
			t.Errorf("%v: reasoning %q, content starts %q, reasoning tokens %d", tt.extra, first(s.reasoning[0]), first(s.content[0]), s.usage.CompletionTokensDetails.ReasoningTokens)
		}
		if tt.think && !strings.Contains(s.content[0], "</think>") {
			t.Errorf("raw: no closing tag")
		}
	}
	// Reasoning counts against max_completion_tokens.
	s := tg.chat(t, chatBody("sim-reasoning", prompt, map[string]any{"seed": 1, "reasoning_effort": "high", "max_completion_tokens": 50}))
	if s.content[0] != "" || s.finish[0] != "length" || s.usage.CompletionTokens != 50 {
		t.Errorf("reasoning past the budget: content %q finish %q tokens %d", first(s.content[0]), s.finish[0], s.usage.CompletionTokens)
	}
	// Non-streamed: the message carries the reasoning.
	a := tg.post(t, "/v1/chat/completions", chatBody("sim-reasoning", prompt, map[string]any{"seed": 1}))
	var r chatResponse
	mustDecode(t, string(a.body), &r)
	if r.Choices[0].Message.Reasoning == nil || *r.Choices[0].Message.Reasoning == "" {
		t.Errorf("non-streamed reasoning missing: %s", a.body)
	}
}

func first(s string) string { return s[:min(len(s), 40)] }

func TestErrorsAreCerebras(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		body   string
		status int
		want   string
	}{
		{"unknown field", "/v1/chat/completions", `{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"store":true}`, 422,
			`{"message":"body.store: property 'body.store' is unsupported","type":"invalid_request_error","param":"validation_error","code":"wrong_api_format"}`},
		{"reasoning_content in a message", "/v1/chat/completions", `{"model":"sim-reasoning","messages":[{"role":"assistant","content":"x","reasoning_content":"y"},{"role":"user","content":"hi"}]}`, 422,
			`{"message":"body.messages.0.reasoning_content: property 'body.messages.0.reasoning_content' is unsupported","type":"invalid_request_error","param":"validation_error","code":"wrong_api_format"}`},
		{"chat-only field on completions", "/v1/completions", `{"model":"sim-fast","prompt":"x","tools":[]}`, 422,
			`{"message":"body.tools: property 'body.tools' is unsupported","type":"invalid_request_error","param":"validation_error","code":"wrong_api_format"}`},
		{"missing model", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`, 422,
			`{"detail":[{"loc":["body","model"],"msg":"Field required","type":"missing"}]}`},
		{"wrong type", "/v1/chat/completions", `{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"temperature":"hot"}`, 422,
			`{"detail":[{"loc":["body","temperature"],"msg":"Input should be a valid number","type":"type_error"}]}`},
		{"bad enum", "/v1/chat/completions", `{"model":"sim-reasoning","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"max"}`, 422,
			`{"detail":[{"loc":["body","reasoning_effort"],"msg":"Input should be 'none', 'low', 'medium', 'high'","type":"enum"}]}`},
		{"not JSON", "/v1/chat/completions", `{"model":`, 422,
			`{"detail":[{"loc":["body",0],"msg":"JSON decode error","type":"json_invalid"}]}`},
		{"unknown model", "/v1/chat/completions", `{"model":"gpt-9","messages":[{"role":"user","content":"hi"}]}`, 404,
			`{"message":"Model gpt-9 does not exist or you do not have access to it.","type":"not_found_error","param":"model","code":"model_not_found"}`},
		{"temperature out of range", "/v1/chat/completions", `{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"temperature":3}`, 400, `"param":"temperature"`},
		{"five stops", "/v1/chat/completions", `{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"stop":["a","b","c","d","e"]}`, 400, `"param":"stop"`},
		{"top_logprobs without logprobs", "/v1/chat/completions", `{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"top_logprobs":2}`, 400, `"param":"top_logprobs"`},
		{"reasoning_effort on a plain model", "/v1/chat/completions", `{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"low"}`, 400, `"param":"reasoning_effort"`},
		{"invalid schema", "/v1/chat/completions", `{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}}}}`, 400, `"param":"response_format"`},
		{"unknown tool_choice", "/v1/chat/completions", `{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`, 400, `"param":"tool_choice"`},
		{"unknown stream option", "/v1/chat/completions", `{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`, 422,
			`"message":"body.stream_options.continuous_usage_stats: property 'body.stream_options.continuous_usage_stats' is unsupported"`},
		{"empty messages", "/v1/chat/completions", `{"model":"sim-fast","messages":[]}`, 400, `"param":"messages"`},
		{"max_tokens zero on chat", "/v1/chat/completions", `{"model":"sim-fast","messages":[{"role":"user","content":"x"}],"max_tokens":0}`, 400, `"param":"max_tokens"`},
	}
	for _, tg := range targets(t, fast) {
		for _, tt := range tests {
			a := tg.post(t, tt.path, tt.body)
			if a.status != tt.status || !strings.Contains(string(a.body), tt.want) || a.header.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s: %d %s\nwant %d %s", tg.name, tt.name, a.status, a.body, tt.status, tt.want)
			}
		}
	}
}

func TestAPIKey(t *testing.T) {
	opts := fast
	opts.APIKey = "sekrit"
	wrong := `{"message":"Wrong API Key","type":"invalid_request_error","param":"api_key","code":"wrong_api_key"}`
	for _, tg := range targets(t, opts) {
		for _, auth := range []string{"", "Bearer nope", "Bearer sekrit"} {
			req, _ := http.NewRequest("POST", tg.base+"/v1/chat/completions", strings.NewReader(chatBody("sim-fast", "hi", map[string]any{"max_tokens": 3})))
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := tg.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			resp.Body.Close()
			ok := auth == "Bearer sekrit"
			if ok && resp.StatusCode != 200 || !ok && (resp.StatusCode != 401 || b.String() != wrong) {
				t.Errorf("%s auth %q: %d %s", tg.name, auth, resp.StatusCode, b.String())
			}
		}
	}
}

func TestModels(t *testing.T) {
	for _, tg := range targets(t, fast) {
		for _, q := range []string{"", "?format=openrouter"} {
			resp, err := tg.client.Get(tg.base + "/v1/models" + q)
			if err != nil {
				t.Fatal(err)
			}
			var list struct {
				Object string           `json:"object"`
				Data   []map[string]any `json:"data"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&list)
			resp.Body.Close()
			if list.Object != "list" || len(list.Data) != len(Models()) {
				t.Fatalf("%s %q: %+v", tg.name, q, list)
			}
			for _, m := range list.Data {
				_, hasPricing := m["pricing"]
				_, hasParams := m["supported_parameters"]
				if m["object"] != "model" || m["owned_by"] != "knobs" || hasPricing != (q != "") || hasParams != (q != "") {
					t.Errorf("%s %q: %v", tg.name, q, m)
				}
				if q != "" && (m["context_length"] == nil || m["max_output_length"] == nil || m["pricing"].(map[string]any)["prompt"] != "0") {
					t.Errorf("%s: openrouter fields: %v", tg.name, m)
				}
			}
		}
	}
	ids := map[string]bool{}
	for _, m := range Models() {
		ids[m.ID] = true
		if m.ID == "sim-reasoning" && (!m.Reasoning || len(m.ReasoningEfforts) != 3) {
			t.Errorf("sim-reasoning: %+v", m)
		}
	}
	for _, id := range []string{"sim-fast", "sim-reasoning", "sim-slow", "sim-flaky"} {
		if !ids[id] {
			t.Errorf("Models lacks %s", id)
		}
	}
}

func TestFlakyFailsMidStream(t *testing.T) {
	for _, tg := range targets(t, fast) {
		s := tg.chat(t, chatBody("sim-flaky", prompt, map[string]any{"seed": 1}))
		if s.errChunk == nil || s.errChunk.StatusCode != 500 || s.errChunk.Error.Message == "" || s.done {
			t.Errorf("%s: error chunk %+v, done %v", tg.name, s.errChunk, s.done)
		}
		if s.content[0] == "" {
			t.Errorf("%s: no content before the error", tg.name)
		}
		a := tg.post(t, "/v1/chat/completions", chatBody("sim-flaky", prompt, map[string]any{"seed": 1}))
		if a.status != 500 || !strings.Contains(string(a.body), `"code":"internal_server_error"`) {
			t.Errorf("%s: non-streamed flaky: %d %s", tg.name, a.status, a.body)
		}
		// A short answer gets through.
		if s := tg.chat(t, chatBody("sim-flaky", prompt, map[string]any{"max_tokens": 10})); !s.done || s.errChunk != nil {
			t.Errorf("%s: short flaky answer failed", tg.name)
		}
	}
}

var callID = regexp.MustCompile(`^call_[0-9a-f]{24}$`)

func TestTokenizeIsLossless(t *testing.T) {
	for _, s := range []string{"", "Hello, world!", "  indented\n\n\tcode()", "naïve café — 1234567", "**bold** ## head ```go\n", "a\r\nb", "\xff\xfe bad", "internationalization"} {
		toks := tokenize(s)
		if strings.Join(toks, "") != s || countTokens(s) != len(toks) {
			t.Errorf("tokenize(%q) = %q", s, toks)
		}
		for _, tk := range toks {
			if tk == "" {
				t.Errorf("tokenize(%q): empty token", s)
			}
		}
	}
}

func TestFastChunkIsWhatMarshalWrites(t *testing.T) {
	texts := []string{"plain", " with \"quotes\" and \\", "<think>&</think>", "tab\tnew\nline\r\x01\x1f\b\f", "naïve \u2028\u2029 \xff end", ""}
	for _, s := range texts {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
	for _, ep := range []llm.Endpoint{llm.EndpointChat, llm.EndpointCompletion} {
		for _, kind := range []pieceKind{pieceText, pieceReasoning} {
			if ep == llm.EndpointCompletion && kind == pieceReasoning {
				continue
			}
			r := &run{job: &job{endpoint: ep, prof: profiles[0]}, id: "chatcmpl-x", object: "text_completion", fingerprint: "fp_1", created: fixedClock()}
			var buf bytes.Buffer
			out := &sse{w: &buf, rc: http.NewResponseController(httptest.NewRecorder())}
			if err := r.fastChunk(out, 2, kind, texts[2]); err != nil {
				t.Fatal(err)
			}
			var want []byte
			if ep == llm.EndpointCompletion {
				want, _ = json.Marshal(r.completionChunk(completionChoice{Index: 2, Text: texts[2]}))
			} else {
				d := delta{Content: &texts[2]}
				if kind == pieceReasoning {
					d = delta{Reasoning: &texts[2]}
				}
				want, _ = json.Marshal(r.chatChunk(chatChunkChoice{Delta: d, Index: 2}))
			}
			if got := buf.String(); got != "data: "+string(want)+"\n\n" {
				t.Errorf("%s %d:\n got %s\nwant %s", ep, kind, got, want)
			}
		}
	}
}

func TestPromptUsage(t *testing.T) {
	tg := targets(t, fast)[1]
	long := strings.Repeat("The lighthouse keeper counted the ships that passed in the night. ", 40)
	body := mustJSON(map[string]any{"model": "sim-fast", "max_tokens": 5, "messages": []map[string]any{
		{"role": "system", "content": long},
		{"role": "user", "content": "Tell me about lighthouses."},
		{"role": "assistant", "content": long},
		{"role": "user", "content": "And about the keeper?"},
	}})
	u := tg.chat(t, body).usage
	if u.PromptTokens < 2*countTokens(long) || u.PromptTokensDetails.CachedTokens == 0 || u.PromptTokensDetails.CachedTokens%128 != 0 || u.PromptTokensDetails.CachedTokens >= u.PromptTokens {
		t.Errorf("usage %+v", u)
	}
	short := tg.chat(t, chatBody("sim-fast", "hi", map[string]any{"max_tokens": 5})).usage
	if short.PromptTokens >= 20 || short.PromptTokensDetails.CachedTokens != 0 {
		t.Errorf("short prompt usage %+v", short)
	}
}
