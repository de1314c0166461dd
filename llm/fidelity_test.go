package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"knobs/llm/llmtest"
)

// fidelity is what every event of one run adds up to.
type fidelity struct {
	response  *Response
	content   string
	reasoning string
	logprobs  []TokenLogprob
	tokens    []int
	calls     []ToolCall
	finish    string
	usage     *Usage
	timeInfo  *TimeInfo
}

func followAll(t *testing.T, c *Client, spec RunSpec) fidelity {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := c.Stream(ctx, spec)
	var f fidelity
	for _, e := range collectAll(t, s) {
		switch e.Kind {
		case EventResponse:
			f.response = e.Response
		case EventDelta:
			f.content += e.Text
		case EventReasoning:
			f.reasoning += e.Text
		case EventLogprobs:
			f.logprobs = append(f.logprobs, e.Logprobs...)
		case EventTokens:
			f.tokens = append(f.tokens, e.Tokens...)
		case EventToolCall:
			f.calls = []ToolCall{*e.ToolCall}
		case EventFinish:
			f.finish = e.FinishReason
		case EventUsage:
			f.usage = e.Usage
		case EventTimeInfo:
			f.timeInfo = e.TimeInfo
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("Err = %s", describe(err))
	}
	return f
}

// TestEverySeedFieldReachesTheEvents serves the seeds' answers with every
// field populated, streamed and as one JSON body, to each dialect's client,
// and looks for each field in the events (issue 12, items 7 and 8).
func TestEverySeedFieldReachesTheEvents(t *testing.T) {
	off := func(i int) *int { return &i }
	cerebrasUsage := &Usage{PromptTokens: llmtest.PromptTokens, CompletionTokens: llmtest.CompletionTokens, TotalTokens: llmtest.TotalTokens,
		ReasoningTokens: llmtest.ReasoningTokens, CachedTokens: llmtest.CachedTokens, AcceptedPredictionTokens: llmtest.AcceptedTokens,
		RejectedPredictionTokens: llmtest.RejectedTokens, ImageTokens: llmtest.ImageTokens}
	xaiUsage := &Usage{PromptTokens: llmtest.PromptTokens, CompletionTokens: llmtest.CompletionTokens, TotalTokens: llmtest.TotalTokens,
		ReasoningTokens: llmtest.ReasoningTokens, CachedTokens: llmtest.CachedTokens, AcceptedPredictionTokens: llmtest.AcceptedTokens,
		RejectedPredictionTokens: llmtest.RejectedTokens, PromptTextTokens: 28, PromptImageTokens: llmtest.ImageTokens,
		NumSourcesUsed: llmtest.NumSourcesUsed, CostInUSDTicks: llmtest.CostInUSDTicks, CostUSD: float64(llmtest.CostInUSDTicks) / 1e10, ReasoningApart: true}
	timeInfo := &TimeInfo{QueueTime: llmtest.QueueTime, PromptTime: llmtest.PromptTime, CompletionTime: llmtest.CompletionTime,
		TotalTime: llmtest.TotalTime, Created: llmtest.TimeCreated}
	chatLogprobs := []TokenLogprob{
		{Token: "Thinking", Logprob: -0.5, Bytes: []int{84, 104, 105, 110, 107, 105, 110, 103}, Part: PartReasoning},
		{Token: "Hello", Logprob: -0.25, Bytes: []int{72, 101, 108, 108, 111}, Top: []TopLogprob{{"Hello", -0.25, []int{72, 101, 108, 108, 111}}, {"Hi", -1.5, []int{72, 105}}}},
		{Token: "Sorry", Logprob: -3.5, Bytes: []int{83, 111, 114, 114, 121}, Part: PartRefusal},
	}
	completionLogprobs := []TokenLogprob{
		{Token: "5", NoLogprob: true, TextOffset: off(0)},
		{Token: ", 6", Logprob: -0.1, TextOffset: off(1), Top: []TopLogprob{{", 6", -0.1, nil}, {", 7", -2.5, nil}}},
	}
	for _, d := range []Dialect{DialectCerebras, DialectOpenAI, DialectXAI} {
		shape := llmtest.ShapeCerebras
		if d == DialectXAI {
			shape = llmtest.ShapeXAI
		}
		srv := httptest.NewServer(llmtest.Handler(shape))
		t.Cleanup(srv.Close)
		c := NewClient(ProviderConfig{ID: string(d), Dialect: d, BaseURL: srv.URL, Key: "k"})
		t.Cleanup(c.CloseIdleConnections)
		for _, streamed := range []bool{true, false} {
			stream := ""
			if !streamed {
				stream = `,"stream":false`
			}
			t.Run(fmt.Sprintf("%s chat streamed=%v", d, streamed), func(t *testing.T) {
				f := followAll(t, c, RunSpec{Endpoint: EndpointChat, Body: json.RawMessage(`{"model":"m","messages":[{"role":"user","content":"hi"}]` + stream + `}`)})
				want := Response{ID: llmtest.ID, Object: "chat.completion.chunk", Created: llmtest.Created, Model: llmtest.Model,
					SystemFingerprint: llmtest.Fingerprint, ServiceTier: llmtest.ServiceTier, Streamed: streamed}
				if !streamed {
					want.Object = "chat.completion"
				}
				if f.response == nil || !reflect.DeepEqual(*f.response, want) {
					t.Errorf("response = %+v, want %+v", f.response, want)
				}
				if f.content != llmtest.ChatContent || f.reasoning != llmtest.ChatReasoning || f.finish != llmtest.FinishReason {
					t.Errorf("content %q reasoning %q finish %q", f.content, f.reasoning, f.finish)
				}
				if len(f.calls) != 1 || f.calls[0].Name != llmtest.ToolName || f.calls[0].Arguments != llmtest.ToolArgs || f.calls[0].ID != "call_1" {
					t.Errorf("tool calls = %+v", f.calls)
				}
				sortParts(f.logprobs)
				if !reflect.DeepEqual(f.logprobs, chatLogprobs) {
					t.Errorf("logprobs\n got %+v\nwant %+v", f.logprobs, chatLogprobs)
				}
				if streamed && !slices.Equal(f.tokens, llmtest.RawTokens) {
					t.Errorf("delta.tokens = %v, want %v", f.tokens, llmtest.RawTokens)
				}
				u := *cerebrasUsage
				u.ReasoningApart = d == DialectXAI
				if f.usage == nil || *f.usage != u {
					t.Errorf("usage\n got %+v\nwant %+v", f.usage, u)
				}
				if f.timeInfo == nil || *f.timeInfo != *timeInfo {
					t.Errorf("time_info = %+v, want %+v", f.timeInfo, timeInfo)
				}
			})
			t.Run(fmt.Sprintf("%s completion streamed=%v", d, streamed), func(t *testing.T) {
				f := followAll(t, c, RunSpec{Endpoint: EndpointCompletion, Body: json.RawMessage(`{"model":"m","prompt":"1, 2, 3, 4, "` + stream + `}`)})
				want := Response{ID: llmtest.ID, Object: "text_completion", Created: llmtest.Created, Model: llmtest.Model,
					SystemFingerprint: llmtest.Fingerprint, Streamed: streamed}
				if f.response == nil || !reflect.DeepEqual(*f.response, want) {
					t.Errorf("response = %+v, want %+v", f.response, want)
				}
				if f.content != llmtest.CompletionText || f.finish != llmtest.FinishReason {
					t.Errorf("text %q finish %q", f.content, f.finish)
				}
				if d == DialectXAI {
					if f.usage == nil || *f.usage != *xaiUsage {
						t.Errorf("usage\n got %+v\nwant %+v", f.usage, xaiUsage)
					}
					return
				}
				if !reflect.DeepEqual(f.logprobs, completionLogprobs) {
					t.Errorf("logprobs\n got %+v\nwant %+v", f.logprobs, completionLogprobs)
				}
				if !slices.Equal(f.tokens, llmtest.RawTokens) {
					t.Errorf("choices[].tokens = %v, want %v", f.tokens, llmtest.RawTokens)
				}
				if f.usage == nil || *f.usage != *cerebrasUsage {
					t.Errorf("usage\n got %+v\nwant %+v", f.usage, cerebrasUsage)
				}
				if f.timeInfo == nil || *f.timeInfo != *timeInfo {
					t.Errorf("time_info = %+v, want %+v", f.timeInfo, timeInfo)
				}
			})
		}
	}
}

// sortParts orders logprobs reasoning, content, refusal, as a page shows
// them; the stream sends them in whatever order the chunks came.
func sortParts(lp []TokenLogprob) {
	rank := map[string]int{PartReasoning: 0, "": 1, PartRefusal: 2}
	slices.SortStableFunc(lp, func(a, b TokenLogprob) int { return rank[a.Part] - rank[b.Part] })
}

// TestJSONAnswerIsDecodedFieldByField: one field of an unexpected type (a
// float "created") costs that field, noted, not the whole answer
// (issue 12, item 11).
func TestJSONAnswerIsDecodedFieldByField(t *testing.T) {
	u := newUpstream(t, jsonAnswer(200, `{"id":"r1","object":"text_completion","created":1721088719.25,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"text":"kept","finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	ctx := context.Background()
	s := u.client(t, DialectCerebras, "k").Stream(ctx, RunSpec{Endpoint: EndpointCompletion, Body: json.RawMessage(`{"model":"m","prompt":"p","stream":false}`)})
	var resp *Response
	var text string
	for _, e := range collectAll(t, s) {
		switch e.Kind {
		case EventResponse:
			resp = e.Response
		case EventDelta:
			text += e.Text
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("the answer was rejected: %s", describe(err))
	}
	if text != "kept" || resp == nil || resp.ID != "r1" || resp.Model != "m" || resp.SystemFingerprint != "fp" || resp.Streamed {
		t.Fatalf("text %q response %+v", text, resp)
	}
	if len(resp.Notes) != 1 || !strings.Contains(resp.Notes[0], "created") {
		t.Fatalf("notes = %q, want one naming created", resp.Notes)
	}
	if got := u.last(t).Header.Get("Accept"); got != "application/json" {
		t.Errorf("a non-streamed request was sent with Accept %q", got)
	}
	if s.Request().Added != nil {
		t.Errorf("Knobs says it added %v to a non-streamed request", s.Request().Added)
	}
}
