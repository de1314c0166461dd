// Package llm is everything Knobs knows about talking to model providers:
// the wire types of the seeds, the SSE reader, one client per provider
// dialect, error classification, model lists and the capability registry
// with request validation.
package llm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Endpoint names which of the two provider endpoints a RunSpec targets.
type Endpoint string

// The endpoints Knobs speaks.
const (
	EndpointChat       Endpoint = "chat"       // POST /v1/chat/completions
	EndpointCompletion Endpoint = "completion" // POST /v1/completions
)

// Path is the URL path of the endpoint below a provider's base URL.
func (e Endpoint) Path() string {
	if e == EndpointCompletion {
		return "/v1/completions"
	}
	return "/v1/chat/completions"
}

// Valid reports whether e is one of the known endpoints.
func (e Endpoint) Valid() bool { return e == EndpointChat || e == EndpointCompletion }

// RunSpec is what a user edits: the provider, the endpoint and the exact
// JSON body for that endpoint, less "stream". Only fields the user set are
// in Body; clients send it unchanged apart from the stream fields.
type RunSpec struct {
	Provider string          `json:"provider"`
	Endpoint Endpoint        `json:"endpoint"`
	Body     json.RawMessage `json:"body"`
}

// Model returns the "model" field of the body, or "" when it is missing or
// not a string.
func (s RunSpec) Model() string {
	var b struct {
		Model string `json:"model"`
	}
	if json.Unmarshal(s.Body, &b) != nil {
		return ""
	}
	return b.Model
}

// Dialect is the family of wire behaviour a provider speaks (how they
// differ: wireDialect in dialect.go).
type Dialect string

// The dialects Knobs implements.
const (
	DialectCerebras Dialect = "cerebras"
	DialectXAI      Dialect = "xai"
	DialectOpenAI   Dialect = "openai" // any OpenAI-compatible server
	DialectSim      Dialect = "sim"    // the offline simulator; Cerebras wire format
)

// ProviderConfig is everything a client needs to talk to one provider.
// Key is already resolved (personal over team over environment) by the
// caller and never leaves the client: raw views get it redacted.
type ProviderConfig struct {
	ID      string // "cerebras", "xai", "sim" or a custom provider's id
	Name    string // shown to users
	Dialect Dialect
	BaseURL string // without the trailing /v1
	Key     string
	// HTTPClient makes the requests; nil means a default client without a
	// total timeout (streams are long) . The simulator passes one whose
	// transport serves the request in process.
	HTTPClient *http.Client
	// FirstByteTimeout bounds the wait for the first byte of the answer;
	// zero means 60 seconds.
	FirstByteTimeout time.Duration
	// IdleTimeout bounds the time without a data event once the answer
	// has started (keep-alive comments do not count); zero means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// AllowLinkLocal lets the client connect to link-local and cloud
	// metadata addresses, which are refused by default (egress.go). It
	// applies only to the client's own transport, not to HTTPClient.
	AllowLinkLocal bool
}

// Model describes one model of a provider, as far as it is known.
// Prices are USD per million tokens; zero means unknown.
type Model struct {
	ID               string   `json:"id"`
	OwnedBy          string   `json:"owned_by,omitempty"`
	ContextLength    int      `json:"context_length,omitempty"`
	MaxOutput        int      `json:"max_output,omitempty"`
	Reasoning        bool     `json:"reasoning,omitempty"`
	ReasoningEfforts []string `json:"reasoning_efforts,omitempty"` // allowed reasoning_effort values; nil when the model takes none
	PromptPrice      float64  `json:"prompt_price,omitempty"`
	CompletionPrice  float64  `json:"completion_price,omitempty"`
	CachedPrice      float64  `json:"cached_price,omitempty"`
	// ReasoningPrice is for reasoning tokens; zero means they cost as
	// output tokens do.
	ReasoningPrice float64 `json:"reasoning_price,omitempty"`
	// PriceSource is "admin" when a Knobs admin set the prices (zero is
	// then a price: the model is free), "listing" when the provider's own
	// model listing gave them, else "" (Knobs' built-in figures, or none).
	PriceSource string `json:"price_source,omitempty"`
	// Tools and JSONSchema say the model takes function tools and
	// response_format json_schema; false also when it is not known.
	Tools      bool `json:"tools,omitempty"`
	JSONSchema bool `json:"json_schema,omitempty"`
	// Source says where the entry came from: "api", "fallback".
	Source string `json:"source,omitempty"`
}

// Priced reports whether Knobs knows what m's tokens cost.
func (m Model) Priced() bool {
	return m.PriceSource == PriceAdmin || m.PromptPrice > 0 || m.CompletionPrice > 0
}

// PriceAdmin is the PriceSource of prices a Knobs admin set.
const PriceAdmin = "admin"

// EventKind names what a stream Event carries.
type EventKind string

// The kinds of stream events.
const (
	EventDelta     EventKind = "delta"     // Text is content for Choice
	EventReasoning EventKind = "reasoning" // Text is reasoning for Choice
	EventToolCall  EventKind = "tool_call" // ToolCall is the call at ToolCall.Index so far, with the new fragment in Text
	EventLogprobs  EventKind = "logprobs"  // Logprobs for tokens of Choice
	EventUsage     EventKind = "usage"     // Usage
	EventTimeInfo  EventKind = "time_info" // TimeInfo
	EventFinish    EventKind = "finish"    // FinishReason for Choice
	// EventResponse carries Response: how the provider labelled its
	// answer (id, model, fingerprint, tier), sent when it is first known
	// and again whenever a chunk changes it.
	EventResponse EventKind = "response"
	// EventTokens carries the raw token ids of Choice (return_raw_tokens).
	EventTokens EventKind = "tokens"
)

// Event is one typed piece of a provider stream.
type Event struct {
	Kind         EventKind
	Choice       int
	Text         string
	ToolCall     *ToolCall
	Logprobs     []TokenLogprob
	Usage        *Usage
	TimeInfo     *TimeInfo
	FinishReason string
	Response     *Response
	Tokens       []int
	// At is when the event arrived, measured from the start of the request.
	At time.Duration
}

// ToolCall is a function call requested by the model, assembled from its
// deltas by index.
type ToolCall struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Type      string `json:"type,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// TokenLogprob is the log probability of one output token and its most
// likely alternatives.
type TokenLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	// NoLogprob says the provider gave no logprob for the token (a null
	// token_logprob: the first token of an echoed prompt has none), so
	// that it is not shown as 0, a certainty.
	NoLogprob bool         `json:"no_logprob,omitempty"`
	Bytes     []int        `json:"bytes,omitempty"`
	Top       []TopLogprob `json:"top_logprobs,omitempty"`
	// TextOffset is where the token starts in the choice's text, as the
	// completions form reports it; nil when not reported.
	TextOffset *int `json:"text_offset,omitempty"`
	// Part says which text the token belongs to: "" for the content,
	// "reasoning" (reasoning_logprobs) or "refusal" (logprobs.refusal).
	Part string `json:"part,omitempty"`
}

// The parts a TokenLogprob can belong to besides the content.
const (
	PartReasoning = "reasoning"
	PartRefusal   = "refusal"
)

// TopLogprob is one alternative token at a position.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes,omitempty"`
}

// Response is how the provider labelled its answer. Every field is as
// the provider sent it; empty when it sent none.
type Response struct {
	ID                string `json:"id,omitempty"`
	Object            string `json:"object,omitempty"`
	Created           int64  `json:"created,omitempty"`
	Model             string `json:"model,omitempty"`
	SystemFingerprint string `json:"system_fingerprint,omitempty"`
	ServiceTier       string `json:"service_tier,omitempty"`
	// Streamed is false when the answer came as one JSON body.
	Streamed bool `json:"streamed"`
	// Notes name what of the answer could not be read (a field of an
	// unexpected type), which was left out while the rest was kept.
	Notes []string `json:"notes,omitempty"`
}

// Usage is the token accounting of a finished request.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	CachedTokens     int `json:"cached_tokens,omitempty"`
	// ReasoningApart says CompletionTokens leaves the reasoning tokens
	// out (xAI); elsewhere they are part of it (seed 002:
	// max_completion_tokens covers "visible output tokens and reasoning
	// tokens"). OutputTokens counts them once either way.
	ReasoningApart bool `json:"reasoning_apart,omitempty"`
	// The rest of the seeds' breakdown, zero when not reported.
	AcceptedPredictionTokens int `json:"accepted_prediction_tokens,omitempty"`
	RejectedPredictionTokens int `json:"rejected_prediction_tokens,omitempty"`
	CompletionAudioTokens    int `json:"completion_audio_tokens,omitempty"`
	ImageTokens              int `json:"image_tokens,omitempty"` // usage.image_tokens (Cerebras)
	PromptTextTokens         int `json:"prompt_text_tokens,omitempty"`
	PromptAudioTokens        int `json:"prompt_audio_tokens,omitempty"`
	PromptImageTokens        int `json:"prompt_image_tokens,omitempty"`
	NumSourcesUsed           int `json:"num_sources_used,omitempty"` // xAI live search
	// CostInUSDTicks is xAI's exact cost figure (1 USD = 1e10 ticks).
	CostInUSDTicks int64 `json:"cost_in_usd_ticks,omitempty"`
	// CostUSD is the provider's own cost figure when it reports one
	// (xAI's cost_in_usd_ticks / 1e10); zero when it does not.
	CostUSD float64 `json:"cost_usd,omitempty"`
	// Estimated says the provider sent no usage (the run stopped before
	// its last chunk: cancelled, cut, past a bound) and these are Knobs'
	// counts: the prompt as Knobs measures one, the output chunks
	// received. The provider still bills those tokens, so costs and
	// budgets count them.
	Estimated bool `json:"estimated,omitempty"`
}

// OutputTokens is what the model generated, reasoning included and
// counted once, whichever way the dialect reports it.
func (u *Usage) OutputTokens() int {
	if u == nil {
		return 0
	}
	if u.ReasoningApart {
		return u.CompletionTokens + u.ReasoningTokens
	}
	return u.CompletionTokens
}

// TimeInfo is Cerebras' server-side timing of a request, in seconds.
type TimeInfo struct {
	QueueTime      float64 `json:"queue_time"`
	PromptTime     float64 `json:"prompt_time"`
	CompletionTime float64 `json:"completion_time"`
	TotalTime      float64 `json:"total_time"`
	// Created is when the provider started on the request, in Unix
	// seconds with a fraction; zero when not reported.
	Created float64 `json:"created,omitempty"`
}

// ErrorKind classifies what went wrong talking to a provider.
type ErrorKind string

// The error kinds a user is told about.
const (
	ErrBadKey       ErrorKind = "bad_key"
	ErrPermission   ErrorKind = "permission"
	ErrUnknownModel ErrorKind = "unknown_model"
	ErrNoEndpoint   ErrorKind = "no_endpoint" // a 404 that is not about the model: the provider has no such endpoint
	ErrValidation   ErrorKind = "validation"
	ErrRateLimit    ErrorKind = "rate_limit"
	ErrNoCredits    ErrorKind = "out_of_credits"
	ErrServer       ErrorKind = "server"
	ErrHTMLPage     ErrorKind = "html_page"
	ErrNetwork      ErrorKind = "network"
	ErrTimeout      ErrorKind = "timeout"
	ErrStream       ErrorKind = "stream_error" // an error chunk inside a 200 stream
	ErrTruncated    ErrorKind = "truncated"    // ended without [DONE] or a finish reason
	ErrBadResponse  ErrorKind = "bad_response" // a 200 that is not a stream (JSON or HTML instead)
	ErrCanceled     ErrorKind = "canceled"
)

// Error is a classified provider failure. Message is the provider's own
// words, verbatim, when it gave any.
type Error struct {
	Kind       ErrorKind     `json:"kind"`
	Status     int           `json:"status,omitempty"`
	Message    string        `json:"message"`
	Field      string        `json:"field,omitempty"` // the request field a validation error names
	Code       string        `json:"code,omitempty"`
	Type       string        `json:"type,omitempty"`
	RetryAfter time.Duration `json:"retry_after,omitempty"`
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("llm: %s (%d): %s", e.Kind, e.Status, e.Message)
	}
	return fmt.Sprintf("llm: %s: %s", e.Kind, e.Message)
}

// RawRequest is the request as it went over the wire, with the key redacted.
type RawRequest struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
	// Added names the body fields Knobs put there itself ("stream",
	// "stream_options"), so that the raw view can tell them from the
	// user's.
	Added []string `json:"added,omitempty"`
}
