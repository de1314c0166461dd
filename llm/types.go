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

// Dialect is the family of wire behaviour a provider speaks (PROVIDERS.md).
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
	// Source says where the entry came from: "api", "fallback".
	Source string `json:"source,omitempty"`
}

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
	Token   string       `json:"token"`
	Logprob float64      `json:"logprob"`
	Bytes   []int        `json:"bytes,omitempty"`
	Top     []TopLogprob `json:"top_logprobs,omitempty"`
}

// TopLogprob is one alternative token at a position.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
}

// Usage is the token accounting of a finished request.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	CachedTokens     int `json:"cached_tokens,omitempty"`
	// CostUSD is the provider's own cost figure when it reports one
	// (xAI's cost_in_usd_ticks / 1e10); zero when it does not.
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// TimeInfo is Cerebras' server-side timing of a request, in seconds.
type TimeInfo struct {
	QueueTime      float64 `json:"queue_time"`
	PromptTime     float64 `json:"prompt_time"`
	CompletionTime float64 `json:"completion_time"`
	TotalTime      float64 `json:"total_time"`
}

// ErrorKind classifies what went wrong talking to a provider.
type ErrorKind string

// The error kinds a user is told about.
const (
	ErrBadKey       ErrorKind = "bad_key"
	ErrPermission   ErrorKind = "permission"
	ErrUnknownModel ErrorKind = "unknown_model"
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
}
