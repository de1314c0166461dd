// Package llmtest is an upstream for tests: an HTTP handler that answers
// with the response shapes of the three seeds, every field populated, so
// that a test can follow each field from the wire to the events, the
// stored run and the run page.
package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// Shape picks which seed's completions answer the fixture gives; chat is
// always seed 002.
type Shape int

// The completion shapes.
const (
	ShapeCerebras Shape = iota // seed 000
	ShapeXAI                   // seed 001
)

// The values the fixture sends, for tests to look for.
const (
	ID                = "resp-fixture-7"
	Created           = 1721088719
	Model             = "fixture-model-1"
	Fingerprint       = "fp_fixture_88719"
	ServiceTier       = "flex"
	ChatContent       = "Hello from the fixture."
	ChatReasoning     = "Thinking it over."
	CompletionText    = "5, 6"
	ToolName          = "get_weather"
	ToolArgs          = `{"city":"Paris"}`
	PromptTokens      = 40
	CompletionTokens  = 1020
	TotalTokens       = 1060
	ReasoningTokens   = 300
	CachedTokens      = 12
	AcceptedTokens    = 900
	RejectedTokens    = 100
	ImageTokens       = 3
	NumSourcesUsed    = 2
	CostInUSDTicks    = 123456789
	QueueTime         = 0.001
	PromptTime        = 0.02
	CompletionTime    = 0.44
	TotalTime         = 0.461
	TimeCreated       = 1721088719.5
	ContentToken      = "Hello"
	ContentTokenBytes = "[72,101,108,108,111]"
	TopToken          = "Hi"
	RefusalToken      = "Sorry"
	ReasoningToken    = "Thinking"
	FinishReason      = "length"
)

// RawTokens are the token ids the fixture returns (return_raw_tokens).
var RawTokens = []int{9906, 505}

const timeInfo = `"time_info":{"completion_time":0.44,"created":1721088719.5,"prompt_time":0.02,"queue_time":0.001,"total_time":0.461}`

const cerebrasUsage = `"usage":{"completion_tokens":1020,"completion_tokens_details":{"accepted_prediction_tokens":900,"reasoning_tokens":300,"rejected_prediction_tokens":100},"image_tokens":3,"prompt_tokens":40,"prompt_tokens_details":{"cached_tokens":12},"total_tokens":1060}`

const xaiUsage = `"usage":{"prompt_tokens":40,"completion_tokens":1020,"total_tokens":1060,"prompt_tokens_details":{"text_tokens":28,"audio_tokens":0,"image_tokens":3,"cached_tokens":12},"completion_tokens_details":{"reasoning_tokens":300,"audio_tokens":0,"accepted_prediction_tokens":900,"rejected_prediction_tokens":100},"num_sources_used":2,"cost_in_usd_ticks":123456789}`

const head = `"id":"resp-fixture-7","created":1721088719,"model":"fixture-model-1","system_fingerprint":"fp_fixture_88719"`

const chatLogprobs = `{"content":[{"bytes":[72,101,108,108,111],"logprob":-0.25,"token":"Hello","top_logprobs":[{"bytes":[72,101,108,108,111],"logprob":-0.25,"token":"Hello"},{"bytes":[72,105],"logprob":-1.5,"token":"Hi"}]}],"refusal":[{"bytes":[83,111,114,114,121],"logprob":-3.5,"token":"Sorry","top_logprobs":[]}]}`

const reasoningLogprobs = `{"content":[{"bytes":[84,104,105,110,107,105,110,103],"logprob":-0.5,"token":"Thinking","top_logprobs":[]}],"refusal":null}`

const completionLogprobs = `{"text_offset":[0,1],"token_logprobs":[null,-0.1],"tokens":["5",", 6"],"top_logprobs":[null,{", 6":-0.1,", 7":-2.5}]}`

const toolCall = `[{"function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather"},"id":"call_1","index":0,"type":"function"}]`

// Handler answers POST /v1/chat/completions and /v1/completions: a stream
// when the request asks for one (or does not say), else one JSON body.
func Handler(shape Shape) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Stream *bool `json:"stream"`
		}
		_ = json.Unmarshal(body, &req)
		streamed := req.Stream != nil && *req.Stream
		chat := strings.HasSuffix(r.URL.Path, "/chat/completions")
		switch {
		case chat && streamed:
			stream(w, chatChunks())
		case chat:
			answer(w, chatBody())
		case streamed:
			stream(w, completionChunks(shape))
		default:
			answer(w, completionBody(shape))
		}
	})
}

func chatChunks() []string {
	meta := head + `,"object":"chat.completion.chunk","service_tier":"flex"`
	return []string{
		`{` + meta + `,"choices":[{"delta":{"role":"assistant","reasoning":"Thinking it over."},"index":0,"reasoning_logprobs":` + reasoningLogprobs + `}]}`,
		`{` + meta + `,"choices":[{"delta":{"content":"Hello from the fixture.","tokens":[9906,505]},"index":0,"logprobs":` + chatLogprobs + `}]}`,
		`{` + meta + `,"choices":[{"delta":{"tool_calls":` + toolCall + `},"index":0}]}`,
		`{` + meta + `,"choices":[{"delta":{},"finish_reason":"length","index":0}],` + cerebrasUsage + `,` + timeInfo + `}`,
	}
}

func chatBody() string {
	return `{` + head + `,"object":"chat.completion","service_tier":"flex","choices":[{"finish_reason":"length","index":0,` +
		`"logprobs":` + chatLogprobs + `,"reasoning_logprobs":` + reasoningLogprobs + `,` +
		`"message":{"content":"Hello from the fixture.","reasoning":"Thinking it over.","role":"assistant","tool_calls":` + toolCall + `}}],` +
		cerebrasUsage + `,` + timeInfo + `}`
}

func completionChunks(shape Shape) []string {
	if shape == ShapeXAI {
		meta := head + `,"object":"text_completion"`
		return []string{
			`{` + meta + `,"choices":[{"index":0,"text":"5","finish_reason":null}]}`,
			`{` + meta + `,"choices":[{"index":0,"text":", 6","finish_reason":"length"}]}`,
			`{` + meta + `,"choices":[],` + xaiUsage + `}`,
		}
	}
	meta := head + `,"object":"text_completion"`
	return []string{
		`{` + meta + `,"choices":[{"index":0,"text":"5, 6","tokens":[9906,505],"logprobs":` + completionLogprobs + `}]}`,
		`{` + meta + `,"choices":[{"finish_reason":"length","index":0,"text":""}],` + cerebrasUsage + `,` + timeInfo + `}`,
	}
}

func completionBody(shape Shape) string {
	if shape == ShapeXAI {
		return `{` + head + `,"object":"text_completion","choices":[{"index":0,"text":"5, 6","finish_reason":"length"}],` + xaiUsage + `}`
	}
	return `{` + head + `,"object":"text_completion","choices":[{"finish_reason":"length","index":0,"logprobs":` + completionLogprobs +
		`,"text":"5, 6","tokens":[9906,505]}],` + cerebrasUsage + `,` + timeInfo + `}`
}

func stream(w http.ResponseWriter, chunks []string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	for _, c := range chunks {
		io.WriteString(w, "data: "+c+"\n\n")
		if f != nil {
			f.Flush()
		}
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

func answer(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, body)
}
