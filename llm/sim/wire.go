package sim

import (
	"math"
	"unicode/utf8"

	"knobs/ordered"
)

// The Cerebras wire shapes (seeds 000 and 002). Field order follows what
// Cerebras sends, so that a raw view of a simulated stream reads like a
// real one.

type chatChunk struct {
	ID                string            `json:"id"`
	Choices           []chatChunkChoice `json:"choices"`
	Created           int64             `json:"created"`
	Model             string            `json:"model"`
	SystemFingerprint string            `json:"system_fingerprint"`
	Object            string            `json:"object"`
	Usage             *usage            `json:"usage,omitempty"`
	TimeInfo          *timeInfo         `json:"time_info,omitempty"`
}

type chatChunkChoice struct {
	Delta        delta         `json:"delta"`
	FinishReason string        `json:"finish_reason,omitempty"`
	Index        int           `json:"index"`
	Logprobs     *chatLogprobs `json:"logprobs,omitempty"`
}

type delta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	Reasoning *string         `json:"reasoning,omitempty"`
	ToolCalls []toolCallDelta `json:"tool_calls,omitempty"`
}

type toolCallDelta struct {
	Index    int          `json:"index"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type chatResponse struct {
	ID                string       `json:"id"`
	Choices           []chatChoice `json:"choices"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Object            string       `json:"object"`
	TimeInfo          *timeInfo    `json:"time_info"`
	Usage             *usage       `json:"usage"`
}

type chatChoice struct {
	FinishReason string        `json:"finish_reason"`
	Index        int           `json:"index"`
	Message      chatMessage   `json:"message"`
	Logprobs     *chatLogprobs `json:"logprobs,omitempty"`
}

type chatMessage struct {
	Content   *string         `json:"content"`
	Reasoning *string         `json:"reasoning,omitempty"`
	Role      string          `json:"role"`
	ToolCalls []toolCallDelta `json:"tool_calls,omitempty"`
}

type chatLogprobs struct {
	Content []logprobEntry `json:"content"`
}

type logprobEntry struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []topLogprob `json:"top_logprobs"`
}

type topLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

type completionChunk struct {
	ID                string             `json:"id"`
	Choices           []completionChoice `json:"choices"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	SystemFingerprint string             `json:"system_fingerprint"`
	Object            string             `json:"object"`
	Usage             *usage             `json:"usage,omitempty"`
	TimeInfo          *timeInfo          `json:"time_info,omitempty"`
}

type completionChoice struct {
	FinishReason string              `json:"finish_reason,omitempty"`
	Index        int                 `json:"index"`
	Logprobs     *completionLogprobs `json:"logprobs,omitempty"`
	Text         string              `json:"text"`
}

type completionLogprobs struct {
	TextOffset    []int             `json:"text_offset"`
	TokenLogprobs []*float64        `json:"token_logprobs"`
	Tokens        []string          `json:"tokens"`
	TopLogprobs   []*ordered.Object `json:"top_logprobs"`
}

type usage struct {
	PromptTokens            int              `json:"prompt_tokens"`
	CompletionTokens        int              `json:"completion_tokens"`
	TotalTokens             int              `json:"total_tokens"`
	CompletionTokensDetails completionDetail `json:"completion_tokens_details"`
	PromptTokensDetails     promptDetail     `json:"prompt_tokens_details"`
}

type completionDetail struct {
	AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
	ReasoningTokens          int `json:"reasoning_tokens"`
	RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
}

type promptDetail struct {
	CachedTokens int `json:"cached_tokens"`
}

type timeInfo struct {
	QueueTime      float64 `json:"queue_time"`
	PromptTime     float64 `json:"prompt_time"`
	CompletionTime float64 `json:"completion_time"`
	TotalTime      float64 `json:"total_time"`
	Created        float64 `json:"created"`
}

type errorChunk struct {
	Error      errorContent `json:"error"`
	StatusCode int          `json:"status_code"`
}

type errorContent struct {
	Code    string `json:"code"`
	ID      string `json:"id"`
	Message string `json:"message"`
	Param   string `json:"param"`
	Type    string `json:"type"`
}

type modelList struct {
	Object string      `json:"object"`
	Data   []modelInfo `json:"data"`
}

type modelInfo struct {
	ID                  string   `json:"id"`
	Object              string   `json:"object"`
	Created             int64    `json:"created"`
	OwnedBy             string   `json:"owned_by"`
	ContextLength       int      `json:"context_length,omitempty"`
	MaxOutputLength     int      `json:"max_output_length,omitempty"`
	Pricing             *pricing `json:"pricing,omitempty"`
	SupportedParameters []string `json:"supported_parameters,omitempty"`
	Description         string   `json:"description,omitempty"`
}

type pricing struct {
	Prompt     string `json:"prompt"`
	Completion string `json:"completion"`
}

// flakyMessage is the error a sim-flaky stream ends with.
const flakyMessage = "sim-flaky failed mid-stream, as it was built to: this is the Knobs simulator's demo of a provider error."

func logprobEntries(toks []token, top int) []logprobEntry {
	out := make([]logprobEntry, len(toks))
	for i, t := range toks {
		tops := make([]topLogprob, 0, top)
		for _, a := range t.top(top) {
			tops = append(tops, topLogprob{a.text, round6(a.lp), byteList(a.text)})
		}
		out[i] = logprobEntry{t.text, round6(t.lp), byteList(t.text), tops}
	}
	return out
}

// completionLogprobsFor is the legacy logprobs object; offset is where the
// first token starts in the choice's whole text (after an echoed prompt).
// An echoed prompt's first token has no logprob: nothing precedes it, and
// the wire says null, as OpenAI's does.
func completionLogprobsFor(toks []token, top, offset int, echoed bool) *completionLogprobs {
	lp := &completionLogprobs{TextOffset: []int{}, TokenLogprobs: []*float64{}, Tokens: []string{}, TopLogprobs: []*ordered.Object{}}
	for i, t := range toks {
		lp.TextOffset = append(lp.TextOffset, offset)
		offset += len([]rune(t.text))
		lp.Tokens = append(lp.Tokens, t.text)
		if echoed && i == 0 {
			lp.TokenLogprobs = append(lp.TokenLogprobs, nil)
			lp.TopLogprobs = append(lp.TopLogprobs, nil)
			continue
		}
		v := round6(t.lp)
		lp.TokenLogprobs = append(lp.TokenLogprobs, &v)
		o := ordered.NewObject()
		for _, a := range t.top(max(top, 1)) {
			o.Set(a.text, round6(a.lp))
		}
		if top == 0 { // the sampled token is always reported
			o = ordered.NewObject()
			o.Set(t.text, round6(t.lp))
		}
		lp.TopLogprobs = append(lp.TopLogprobs, o)
	}
	return lp
}

// promptTokens are an echoed prompt's tokens, with the logprobs the
// simulator gives any text: how likely each piece is where it stands.
func promptTokens(prompt string) []token {
	pieces := tokenize(prompt)
	out := make([]token, len(pieces))
	for i, p := range pieces {
		out[i] = plainToken(p, i)
	}
	return out
}

func byteList(s string) []int {
	out := make([]int, len(s))
	for i := range len(s) {
		out[i] = int(s[i])
	}
	return out
}

func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// supportedParameters is what ?format=openrouter lists for every model.
func supportedParameters(p profile) []string {
	out := []string{"max_tokens", "max_completion_tokens", "min_tokens", "temperature", "top_p", "seed", "stop", "n",
		"logprobs", "top_logprobs", "response_format", "structured_outputs", "tools", "tool_choice",
		"parallel_tool_calls", "frequency_penalty", "presence_penalty", "logit_bias"}
	if p.reasoning {
		out = append(out, "reasoning", "reasoning_effort", "include_reasoning")
	}
	return out
}

// appendJSONString appends s as encoding/json writes it: HTML-safe
// escapes, \u2028 and \u2029 escaped, invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			switch r {
			case utf8.RuneError:
				b = append(b, `\ufffd`...)
			default:
				b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(b, s[start:]...), '"')
}
