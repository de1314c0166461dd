package llm

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestStreamCerebras(t *testing.T) {
	const key = "csk-secret-key-123"
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-ratelimit-limit-requests-day", "14400")
		w.Header().Set("x-ratelimit-remaining-requests-day", "14399")
		w.Header().Set("x-ratelimit-reset-requests-day", "33011.5")
		w.Header().Set("x-ratelimit-limit-tokens-minute", "60000")
		w.Header().Set("x-ratelimit-remaining-tokens-minute", "58000")
		w.Header().Set("x-ratelimit-reset-tokens-minute", "11.25")
		sseHeader(w)
		writeChunks(w,
			chatChunk(`{"role":"assistant"}`),
			chatChunk(`{"reasoning":"Think"}`),
			chatChunk(`{"reasoning":"ing."}`),
			chatChunk(`{"content":"Hel"}`),
			chatChunk(`{"content":"lo"}`),
			data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-oss-120b","system_fingerprint":"fp","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`),
			data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-oss-120b","system_fingerprint":"fp","choices":[],"usage":{"prompt_tokens":40,"completion_tokens":20,"total_tokens":60,"prompt_tokens_details":{"cached_tokens":32},"completion_tokens_details":{"reasoning_tokens":12}},"time_info":{"queue_time":0.001,"prompt_time":0.002,"completion_time":0.03,"total_time":0.034,"created":1764441600.5}}`),
			data("[DONE]"),
		)
	})
	c := u.client(t, DialectCerebras, key)
	evs, err, s := run(t, c, chatSpec())
	if err != nil {
		t.Fatalf("Err = %s", describe(err))
	}
	if got, want := kinds(evs), "reasoning,reasoning,delta,delta,finish,usage,time_info"; got != want {
		t.Fatalf("kinds = %s, want %s", got, want)
	}
	if got := texts(evs, EventReasoning); got != "Thinking." {
		t.Errorf("reasoning = %q", got)
	}
	if got := texts(evs, EventDelta); got != "Hello" {
		t.Errorf("content = %q", got)
	}
	wantUsage := &Usage{PromptTokens: 40, CompletionTokens: 20, TotalTokens: 60, ReasoningTokens: 12, CachedTokens: 32}
	if !reflect.DeepEqual(s.Usage(), wantUsage) || !reflect.DeepEqual(evs[5].Usage, wantUsage) {
		t.Errorf("usage = %+v, want %+v", s.Usage(), wantUsage)
	}
	if ti := s.TimeInfo(); ti == nil || ti.CompletionTime != 0.03 || ti.TotalTime != 0.034 {
		t.Errorf("time info = %+v", ti)
	}
	if !s.SawDone() || s.FinishReasons()[0] != "stop" || s.Model() != "gpt-oss-120b" || s.Chunks() != 7 {
		t.Errorf("done %v finish %v model %q chunks %d", s.SawDone(), s.FinishReasons(), s.Model(), s.Chunks())
	}
	if s.TTFT() <= 0 || s.TTFT() != evs[0].At {
		t.Errorf("TTFT = %v, first reasoning at %v", s.TTFT(), evs[0].At)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].At < evs[i-1].At {
			t.Errorf("event %d arrived at %v, before event %d at %v", i, evs[i].At, i-1, evs[i-1].At)
		}
	}

	// What went over the wire.
	got := u.last(t)
	if got.Method != http.MethodPost || got.Path != "/v1/chat/completions" {
		t.Errorf("request %s %s", got.Method, got.Path)
	}
	if h := got.Header.Get("Authorization"); h != "Bearer "+key {
		t.Errorf("Authorization = %q", h)
	}
	if got.Header.Get("Content-Type") != "application/json" || got.Header.Get("Accept") != "text/event-stream" {
		t.Errorf("headers = %v", got.Header)
	}
	wantBody := `{"model":"gpt-oss-120b","messages":[{"role":"user","content":"hi"}],"temperature":0.5,"stream":true,"stream_options":{"include_usage":true}}`
	if string(got.Body) != wantBody {
		t.Errorf("body sent\n got %s\nwant %s", got.Body, wantBody)
	}

	// What the raw view shows: the body as sent, the key nowhere.
	req := s.Request()
	if req.Headers["Authorization"] != "Bearer ***" || string(req.Body) != wantBody || req.URL != u.URL+"/v1/chat/completions" {
		t.Errorf("Request() = %+v", req)
	}
	shown, _ := json.Marshal(req)
	if strings.Contains(string(shown), key) || strings.Contains(string(s.RawResponse()), key) {
		t.Error("the key appears in the raw view")
	}
	if !strings.HasPrefix(string(s.RawResponse()), "data: {") || !strings.HasSuffix(string(s.RawResponse()), "data: [DONE]\n\n") {
		t.Errorf("raw response = %q", s.RawResponse())
	}
	if s.RawResponseSize() != int64(len(s.RawResponse())) || s.Status() != 200 {
		t.Errorf("raw size %d, len %d, status %d", s.RawResponseSize(), len(s.RawResponse()), s.Status())
	}

	rl := s.RateLimit()
	day, ok1 := rl.Bucket("requests-day")
	min, ok2 := rl.Bucket("tokens-minute")
	if !ok1 || !ok2 || day.Limit != 14400 || day.Remaining != 14399 || day.Reset != 33011500*time.Millisecond ||
		min.Limit != 60000 || min.Remaining != 58000 || min.Reset != 11250*time.Millisecond {
		t.Errorf("RateLimit = %+v", rl)
	}
}

func TestStreamXAI(t *testing.T) {
	u := newUpstream(t, streamOf(
		chatChunk(`{"role":"assistant","reasoning_content":"Let me see."}`),
		chatChunk(`{"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{}"}}]}`),
		data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"grok-4","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
		data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"grok-4","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":115,"prompt_tokens_details":{"text_tokens":10,"audio_tokens":0,"image_tokens":0,"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":100,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0},"num_sources_used":0,"cost_in_usd_ticks":1234500000}}`),
		data("[DONE]"),
	))
	c := u.client(t, DialectXAI, "xai-key")
	evs, err, s := run(t, c, chatSpec())
	if err != nil {
		t.Fatalf("Err = %s", describe(err))
	}
	if got, want := kinds(evs), "reasoning,tool_call,tool_call,finish,usage"; got != want {
		t.Fatalf("kinds = %s, want %s", got, want)
	}
	if got := texts(evs, EventReasoning); got != "Let me see." {
		t.Errorf("reasoning = %q", got)
	}
	want := []ToolCall{
		{Index: 0, ID: "call_1", Type: "function", Name: "get_weather", Arguments: `{"city":"Paris"}`},
		{Index: 1, ID: "call_2", Type: "function", Name: "get_time", Arguments: `{}`},
	}
	if got := s.ToolCalls(0); !reflect.DeepEqual(got, want) {
		t.Errorf("ToolCalls = %+v, want %+v", got, want)
	}
	if *evs[1].ToolCall != want[0] || evs[1].Text != `{"city":"Paris"}` {
		t.Errorf("first tool call event = %+v %q", evs[1].ToolCall, evs[1].Text)
	}
	u2 := s.Usage()
	if u2 == nil || u2.CostUSD != 0.12345 || u2.ReasoningTokens != 100 || u2.CachedTokens != 4 {
		t.Errorf("usage = %+v, want cost 0.12345 USD", u2)
	}
	if body := string(u.last(t).Body); !strings.HasSuffix(body, `,"stream":true,"stream_options":{"include_usage":true}}`) {
		t.Errorf("xAI body lacks include_usage: %s", body)
	}
}

func TestStreamToolCallFragments(t *testing.T) {
	u := newUpstream(t, streamOf(
		chatChunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"search","arguments":""}}]}`),
		chatChunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"fetch","arguments":"{\"u"}}]}`),
		chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]}`),
		chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"go\"}"}},{"index":1,"function":{"arguments":"rl\":1}"}}]}`),
		data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
		data("[DONE]"),
	))
	evs, err, s := run(t, u.client(t, DialectOpenAI, ""), chatSpec())
	if err != nil {
		t.Fatalf("Err = %s", describe(err))
	}
	want := []ToolCall{
		{Index: 0, ID: "call_a", Type: "function", Name: "search", Arguments: `{"q":"go"}`},
		{Index: 1, ID: "call_b", Type: "function", Name: "fetch", Arguments: `{"url":1}`},
	}
	if got := s.ToolCalls(0); !reflect.DeepEqual(got, want) {
		t.Fatalf("ToolCalls = %+v, want %+v", got, want)
	}
	// Each event carries the call so far and its own fragment.
	var frags []string
	var last *ToolCall
	for _, e := range evs {
		if e.Kind == EventToolCall {
			frags = append(frags, e.Text)
			if e.ToolCall.Index == 0 {
				last = e.ToolCall
			}
		}
	}
	if strings.Join(frags, "|") != `|{"u|{"q":|"go"}|rl":1}` {
		t.Errorf("fragments = %q", frags)
	}
	if last == nil || last.Arguments != `{"q":"go"}` {
		t.Errorf("last event of call 0 = %+v", last)
	}
	if s.ToolCalls(5) != nil || s.ToolCalls(-1) != nil {
		t.Error("ToolCalls of an unknown choice is not nil")
	}
}

func TestStreamOpenAIThinkTagsAndTimings(t *testing.T) {
	u := newUpstream(t, streamOf(
		":\n\n",
		chatChunk(`{"role":"assistant","content":"<thi"}`),
		":\n",
		chatChunk(`{"content":"nk>Plan: "}`),
		chatChunk(`{"content":"say hi</th"}`),
		chatChunk(`{"content":"ink>\n\nHi "}`),
		chatChunk(`{"content":"there <think>literal</think>"}`),
		data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"timings":{"prompt_n":12,"prompt_ms":30.5,"predicted_n":8,"predicted_ms":120.25,"predicted_per_second":66.5}}`),
		data("[DONE]"),
	))
	evs, err, s := run(t, u.client(t, DialectOpenAI, ""), chatSpec())
	if err != nil {
		t.Fatalf("Err = %s", describe(err))
	}
	if got := texts(evs, EventReasoning); got != "Plan: say hi" {
		t.Errorf("reasoning = %q", got)
	}
	if got := texts(evs, EventDelta); got != "\n\nHi there <think>literal</think>" {
		t.Errorf("content = %q", got)
	}
	ti := s.TimeInfo()
	if ti == nil || ti.PromptTime != 0.0305 || ti.CompletionTime != 0.12025 {
		t.Errorf("timings = %+v", ti)
	}
	if got := u.last(t).Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization sent without a key: %q", got)
	}
	if _, ok := s.Request().Headers["Authorization"]; ok {
		t.Error("Request() shows Authorization without a key")
	}
}

func TestStreamCerebrasKeepsThinkTags(t *testing.T) {
	// reasoning_format "raw" puts tags in content on purpose.
	u := newUpstream(t, streamOf(chatChunk(`{"content":"<think>x</think>y"}`), data(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`), data("[DONE]")))
	evs, err, _ := run(t, u.client(t, DialectCerebras, "k"), chatSpec())
	if err != nil || texts(evs, EventDelta) != "<think>x</think>y" || texts(evs, EventReasoning) != "" {
		t.Fatalf("content %q reasoning %q err %s", texts(evs, EventDelta), texts(evs, EventReasoning), describe(err))
	}
}

func TestStreamOllamaReasoningField(t *testing.T) {
	u := newUpstream(t, streamOf(chatChunk(`{"reasoning":"r1"}`), chatChunk(`{"content":"c1"}`), data(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`), data("[DONE]")))
	evs, err, _ := run(t, u.client(t, DialectOpenAI, ""), chatSpec())
	if err != nil || texts(evs, EventReasoning) != "r1" || texts(evs, EventDelta) != "c1" {
		t.Fatalf("reasoning %q content %q err %s", texts(evs, EventReasoning), texts(evs, EventDelta), describe(err))
	}
}

func TestStreamLogprobsChat(t *testing.T) {
	u := newUpstream(t, streamOf(
		chatChunk(`{"content":"Hi"},"logprobs":{"content":[{"token":"Hi","logprob":-0.25,"bytes":[72,105],"top_logprobs":[{"token":"Hi","logprob":-0.25,"bytes":[72,105]},{"token":"Hello","logprob":-1.5,"bytes":null}]}]}`),
		data(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`),
		data("[DONE]"),
	))
	evs, err, _ := run(t, u.client(t, DialectCerebras, "k"), chatSpec())
	if err != nil {
		t.Fatalf("Err = %s", describe(err))
	}
	if got := kinds(evs); got != "delta,logprobs,finish" {
		t.Fatalf("kinds = %s", got)
	}
	want := []TokenLogprob{{Token: "Hi", Logprob: -0.25, Bytes: []int{72, 105}, Top: []TopLogprob{{"Hi", -0.25, []int{72, 105}}, {"Hello", -1.5, nil}}}}
	if !reflect.DeepEqual(evs[1].Logprobs, want) {
		t.Fatalf("logprobs = %+v, want %+v", evs[1].Logprobs, want)
	}
}

func TestStreamTextCompletion(t *testing.T) {
	u := newUpstream(t, streamOf(
		data(`{"id":"r1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":"5,","logprobs":{"tokens":["5",","],"token_logprobs":[-0.1,null],"top_logprobs":[{"5":-0.1,"6":-2.5,"4":-2.5},null],"text_offset":[0,1]},"finish_reason":null}]}`),
		data(`{"id":"r1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" 6","finish_reason":"length"}]}`),
		data("[DONE]"),
	))
	spec := RunSpec{Endpoint: EndpointCompletion, Body: json.RawMessage(`{"model":"m","prompt":"1, 2, 3, 4, "}`)}
	evs, err, _ := run(t, u.client(t, DialectXAI, "k"), spec)
	if err != nil {
		t.Fatalf("Err = %s", describe(err))
	}
	if got := u.last(t).Path; got != "/v1/completions" {
		t.Errorf("path = %s", got)
	}
	if got := texts(evs, EventDelta); got != "5, 6" {
		t.Errorf("text = %q", got)
	}
	// A null token_logprob is "no logprob", not 0 (which reads as 100%).
	off := func(i int) *int { return &i }
	want := []TokenLogprob{
		{Token: "5", Logprob: -0.1, Top: []TopLogprob{{"5", -0.1, nil}, {"4", -2.5, nil}, {"6", -2.5, nil}}, TextOffset: off(0)},
		{Token: ",", NoLogprob: true, TextOffset: off(1)},
	}
	if got := kinds(evs); got != "delta,logprobs,delta,finish" {
		t.Fatalf("kinds = %s", got)
	}
	if !reflect.DeepEqual(evs[1].Logprobs, want) {
		t.Errorf("logprobs = %+v, want %+v", evs[1].Logprobs, want)
	}
}

func TestStreamSeveralChoices(t *testing.T) {
	u := newUpstream(t, streamOf(
		data(`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`),
		data(`{"choices":[{"index":1,"delta":{"content":"B"},"finish_reason":"length"}]}`),
		data(`{"choices":[{"index":0,"delta":{"content":"A"},"finish_reason":"stop"}]}`),
		data("[DONE]"),
	))
	evs, err, s := run(t, u.client(t, DialectCerebras, "k"), chatSpec())
	if err != nil {
		t.Fatalf("Err = %s", describe(err))
	}
	var one strings.Builder
	for _, e := range evs {
		if e.Kind == EventDelta && e.Choice == 1 {
			one.WriteString(e.Text)
		}
	}
	if texts(evs, EventDelta) != "aA" || one.String() != "bB" {
		t.Errorf("choice 0 %q, choice 1 %q", texts(evs, EventDelta), one.String())
	}
	if got := s.FinishReasons(); !reflect.DeepEqual(got, map[int]string{0: "stop", 1: "length"}) {
		t.Errorf("FinishReasons = %v", got)
	}
}

// TestStreamSSECases runs the SSE edge cases real providers send through the real
// client and a real server, with the server flushing at the boundaries
// where readers break.
func TestStreamSSECases(t *testing.T) {
	long := strings.Repeat("word ", 30000) // a 150 KB line
	finish := data(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	tests := []struct {
		name        string
		parts       []string
		wantContent string
	}{
		{"comments and pings", []string{": ping\n\n", ":\n", chatChunk(`{"content":"a"}`), ": ping\n\n", finish, data("[DONE]")}, "a"},
		{"CRLF line ends", []string{"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\r\n\r\n", "data: [DONE]\r\n\r\n"}, "a"},
		{"CR line ends", []string{"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\r\r", "data: [DONE]\r\r"}, "a"},
		{"CR and LF in separate writes", []string{"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\r", "\n\r", "\ndata: [DONE]\r\n\r\n"}, "a"},
		{"multi-line data", []string{"data: {\"choices\":\ndata: [{\"index\":0,\ndata: \"delta\":{\"content\":\"a\"}}]}\n\n", data("[DONE]")}, "a"},
		{"line over 64 KiB", []string{chatChunk(`{"content":"` + long + `"}`), data("[DONE]")}, long},
		{"UTF-8 character split across writes", []string{"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\xc3", "\xa9 \xf0\x9f", "\x98\x80\"}}]}\n\n", data("[DONE]")}, "café 😀"},
		{"event lines", []string{"event: message\n" + chatChunk(`{"content":"a"}`), data("[DONE]")}, "a"},
		{"fields without a space", []string{"data:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n", "data:[DONE]\n\n"}, "a"},
		{"final event without a blank line", []string{chatChunk(`{"content":"a"}`), "data: [DONE]"}, "a"},
		{"usage-only chunk with empty choices", []string{chatChunk(`{"content":"a"}`), finish, data(`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`), data("[DONE]")}, "a"},
		{"a field of an unexpected type loses only that field", []string{data(`{"created":"yesterday","choices":[{"index":0,"delta":{"content":"a"}}]}`), finish, data("[DONE]")}, "a"},
		{"no [DONE] but finished", []string{chatChunk(`{"content":"a"}`), finish}, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, streamOf(tt.parts...))
			evs, err, _ := run(t, u.client(t, DialectCerebras, "k"), chatSpec())
			if err != nil {
				t.Fatalf("Err = %s", describe(err))
			}
			if got := texts(evs, EventDelta); got != tt.wantContent {
				t.Fatalf("content = %.80q (%d bytes), want %.80q (%d bytes)", got, len(got), tt.wantContent, len(tt.wantContent))
			}
		})
	}
}

func TestStreamNonStreamedAnswers(t *testing.T) {
	tests := []struct {
		name        string
		handler     http.HandlerFunc
		wantKind    ErrorKind // "" for a clean end
		wantContent string
		wantMessage string
	}{
		{
			name:        "complete chat completion JSON becomes events",
			handler:     jsonAnswer(200, `{"id":"x","object":"chat.completion","created":1,"model":"m","system_fingerprint":"f","choices":[{"index":0,"message":{"role":"assistant","content":"whole answer","reasoning":"why"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`),
			wantContent: "whole answer",
		},
		{
			name:        "complete text completion JSON becomes events",
			handler:     jsonAnswer(200, `{"id":"x","object":"text_completion","choices":[{"index":0,"text":"5, ","finish_reason":"length"}]}`),
			wantContent: "5, ",
		},
		{
			name:        "JSON that is not a completion",
			handler:     jsonAnswer(200, `{"status":"ok"}`),
			wantKind:    ErrBadResponse,
			wantMessage: `expected an event stream, got JSON: {"status":"ok"}`,
		},
		{
			name:        "JSON error object in a 200",
			handler:     jsonAnswer(200, `{"error":{"message":"model overloaded","type":"server_error","code":"overloaded"},"status_code":503}`),
			wantKind:    ErrStream,
			wantMessage: "model overloaded",
		},
		{
			name: "HTML page in a 200",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Write([]byte("<!DOCTYPE html><html><head><title>Captive Portal &amp; Login</title></head><body>" + strings.Repeat("<p>x</p>", 1000) + "</body></html>"))
			},
			wantKind:    ErrBadResponse,
			wantMessage: "expected an event stream, got an HTML page: Captive Portal & Login",
		},
		{
			name: "plain text in a 200",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				w.Write([]byte("Hello from the proxy"))
			},
			wantKind:    ErrBadResponse,
			wantMessage: "expected an event stream, got text/plain: Hello from the proxy",
		},
		{
			name: "SSE labelled as JSON",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				writeChunks(w, chatChunk(`{"content":"ok"}`), data("[DONE]"))
			},
			wantContent: "ok",
		},
		{
			name: "SSE without the event-stream content type",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				writeChunks(w, "\n", chatChunk(`{"content":"ok"}`), data("[DONE]"))
			},
			wantContent: "ok",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, tt.handler)
			evs, err, _ := run(t, u.client(t, DialectCerebras, "k"), chatSpec())
			if tt.wantKind == "" {
				if err != nil {
					t.Fatalf("Err = %s", describe(err))
				}
			} else if err == nil || err.Kind != tt.wantKind || err.Message != tt.wantMessage {
				t.Fatalf("Err = %s, want kind %s message %q", describe(err), tt.wantKind, tt.wantMessage)
			}
			if got := texts(evs, EventDelta); got != tt.wantContent {
				t.Fatalf("content = %q, want %q", got, tt.wantContent)
			}
		})
	}
}

func TestStreamBadRequestsFailBeforeSending(t *testing.T) {
	u := newUpstream(t, streamOf(data("[DONE]")))
	c := u.client(t, DialectCerebras, "k")
	for _, spec := range []RunSpec{
		{Endpoint: EndpointChat, Body: json.RawMessage(`[1,2]`)},
		{Endpoint: EndpointChat, Body: json.RawMessage(`not json`)},
		{Endpoint: "embeddings", Body: json.RawMessage(`{"model":"m"}`)},
	} {
		evs, err, s := run(t, c, spec)
		if err == nil || err.Kind != ErrValidation || len(evs) != 0 {
			t.Errorf("%s: Err = %s, %d events", spec.Body, describe(err), len(evs))
		}
		if _, merr := json.Marshal(s.Request()); merr != nil {
			t.Errorf("%s: Request() does not marshal: %v", spec.Body, merr)
		}
	}
	if n := u.count(); n != 0 {
		t.Fatalf("upstream got %d requests, want 0", n)
	}
}

func TestNewClientBaseURL(t *testing.T) {
	u := newUpstream(t, streamOf(data(`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`), data("[DONE]")))
	for _, base := range []string{u.URL, u.URL + "/", u.URL + "/v1", u.URL + "/v1/"} {
		c := NewClient(ProviderConfig{Dialect: DialectOpenAI, BaseURL: base})
		_, err, _ := run(t, c, chatSpec())
		c.CloseIdleConnections()
		if err != nil || u.last(t).Path != "/v1/chat/completions" {
			t.Errorf("base %q: path %q, err %s", base, u.last(t).Path, describe(err))
		}
	}
}
