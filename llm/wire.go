package llm

import "encoding/json"

// The wire types below follow the seeds field for field. Request types are
// for reading, validating and rendering a RunSpec body, never for sending
// one: the client sends the user's bytes unchanged, because a struct would
// reorder fields and could add or drop some. Every request field is a
// pointer or a raw union so that "not set" stays distinguishable from a
// zero value and marshalling writes back only what was set.

// ChatRequest is the body of POST /v1/chat/completions (seed 002, with the
// fields xAI and OpenAI-compatible servers share).
type ChatRequest struct {
	Model               string           `json:"model"`
	Messages            []ChatMessage    `json:"messages"`
	ClearThinking       *bool            `json:"clear_thinking,omitempty"`
	DisableReasoning    *bool            `json:"disable_reasoning,omitempty"`
	FrequencyPenalty    *float64         `json:"frequency_penalty,omitempty"`
	LogitBias           map[string]any   `json:"logit_bias,omitempty"`
	Logprobs            *bool            `json:"logprobs,omitempty"`
	MaxCompletionTokens *int             `json:"max_completion_tokens,omitempty"`
	MaxTokens           *int             `json:"max_tokens,omitempty"`
	MinCompletionTokens *int             `json:"min_completion_tokens,omitempty"`
	MinTokens           *int             `json:"min_tokens,omitempty"`
	ModelParameters     json.RawMessage  `json:"model_parameters,omitempty"`
	N                   *int             `json:"n,omitempty"`
	ParallelToolCalls   *bool            `json:"parallel_tool_calls,omitempty"`
	Prediction          *Prediction      `json:"prediction,omitempty"`
	PresencePenalty     *float64         `json:"presence_penalty,omitempty"`
	PromptCacheKey      *string          `json:"prompt_cache_key,omitempty"`
	ReasoningEffort     *string          `json:"reasoning_effort,omitempty"` // none, low, medium, high
	ReasoningFormat     *string          `json:"reasoning_format,omitempty"` // none, parsed, text_parsed, raw, hidden
	ResponseFormat      *ResponseFormat  `json:"response_format,omitempty"`
	Seed                *int64           `json:"seed,omitempty"`
	ServiceTier         *string          `json:"service_tier,omitempty"` // auto, default, flex, priority
	Stop                json.RawMessage  `json:"stop,omitempty"`         // string or []string
	Stream              *bool            `json:"stream,omitempty"`
	StreamOptions       *StreamOptions   `json:"stream_options,omitempty"`
	Temperature         *float64         `json:"temperature,omitempty"`
	ToolChoice          json.RawMessage  `json:"tool_choice,omitempty"` // "none"|"auto"|"required" or {type, function:{name}}
	Tools               []ToolDefinition `json:"tools,omitempty"`
	TopLogprobs         *int             `json:"top_logprobs,omitempty"`
	TopP                *float64         `json:"top_p,omitempty"`
	User                *string          `json:"user,omitempty"`
}

// ChatMessage is one message of a chat request, of any role.
type ChatMessage struct {
	Role string `json:"role"` // system, developer, user, assistant, tool
	// Content is a string or a list of content parts ({type:"text", text}).
	Content json.RawMessage `json:"content,omitempty"`
	Name    *string         `json:"name,omitempty"`
	// Reasoning is past reasoning of an assistant message (Cerebras).
	Reasoning  json.RawMessage    `json:"reasoning,omitempty"`
	ToolCalls  []AssistantToolUse `json:"tool_calls,omitempty"`
	ToolCallID string             `json:"tool_call_id,omitempty"`
}

// AssistantToolUse is a tool call in a past assistant message.
type AssistantToolUse struct {
	ID       string       `json:"id"`
	Index    *int         `json:"index,omitempty"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names a function and its JSON-encoded arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Prediction is predicted output that speeds up generation.
type Prediction struct {
	Type    string          `json:"type"`    // "content"
	Content json.RawMessage `json:"content"` // string or text parts
}

// ResponseFormat asks for text, any JSON object or JSON matching a schema.
type ResponseFormat struct {
	Type       string      `json:"type"` // text, json_object, json_schema
	JSONSchema *JSONSchema `json:"json_schema,omitempty"`
}

// JSONSchema is a named schema for structured output.
type JSONSchema struct {
	Name        string          `json:"name"`
	Description *string         `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// StreamOptions are the options of a streamed request.
type StreamOptions struct {
	IncludeUsage *bool `json:"include_usage,omitempty"`
}

// ToolDefinition is a tool the model may call.
type ToolDefinition struct {
	Type     string             `json:"type"` // "function"
	Function FunctionDefinition `json:"function"`
}

// FunctionDefinition describes a callable function.
type FunctionDefinition struct {
	Name        string          `json:"name"`
	Description *string         `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// CompletionRequest is the body of POST /v1/completions: the union of
// Cerebras' (seed 000) and xAI's (seed 001) fields.
type CompletionRequest struct {
	Model string `json:"model"`
	// Prompt is a string, a list of strings, a token list or a list of
	// token lists.
	Prompt           json.RawMessage `json:"prompt"`
	BestOf           *int            `json:"best_of,omitempty"`
	Echo             *bool           `json:"echo,omitempty"`
	FrequencyPenalty *float64        `json:"frequency_penalty,omitempty"`
	GrammarRoot      *string         `json:"grammar_root,omitempty"` // Cerebras
	LogitBias        map[string]any  `json:"logit_bias,omitempty"`
	// Logprobs is an integer 0-20 on Cerebras and a boolean on xAI.
	Logprobs        json.RawMessage `json:"logprobs,omitempty"`
	MaxTokens       *int            `json:"max_tokens,omitempty"`
	MinTokens       *int            `json:"min_tokens,omitempty"` // Cerebras
	N               *int            `json:"n,omitempty"`
	PresencePenalty *float64        `json:"presence_penalty,omitempty"`
	PromptCacheKey  *string         `json:"prompt_cache_key,omitempty"`  // Cerebras
	ReasoningFormat *string         `json:"reasoning_format,omitempty"`  // Cerebras, deprecated
	ReturnRawTokens *bool           `json:"return_raw_tokens,omitempty"` // Cerebras
	Seed            *int64          `json:"seed,omitempty"`
	Stop            json.RawMessage `json:"stop,omitempty"` // string or []string
	Stream          *bool           `json:"stream,omitempty"`
	StreamOptions   *StreamOptions  `json:"stream_options,omitempty"`
	Suffix          *string         `json:"suffix,omitempty"`
	Temperature     *float64        `json:"temperature,omitempty"`
	TopP            *float64        `json:"top_p,omitempty"`
	User            *string         `json:"user,omitempty"`
}

// Chunk is one decoded "data:" payload of a stream, and also the whole body
// of a non-streamed answer: chat chunks (choices[].delta), chat responses
// (choices[].message), text completions (choices[].text) and the error
// chunk ({"error":{...},"status_code":500}) all decode into it. Scalar
// fields are plain values because null and absent mean the same here.
type Chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"` // chat.completion.chunk, chat.completion, text_completion
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	ServiceTier       string        `json:"service_tier"`
	Choices           []ChunkChoice `json:"choices"`
	Usage             *ChunkUsage   `json:"usage"`
	TimeInfo          *ChunkTimings `json:"time_info"`
	// Timings is llama.cpp's own timing object.
	Timings *LlamaTimings `json:"timings"`
	// Error is an object on Cerebras, vLLM and OpenAI and a string on xAI.
	Error      json.RawMessage `json:"error"`
	StatusCode int             `json:"status_code"`
}

// ChunkChoice is one choice of a chunk or response.
type ChunkChoice struct {
	Index   int         `json:"index"`
	Delta   *ChunkDelta `json:"delta"`   // streamed chat
	Message *ChunkDelta `json:"message"` // non-streamed chat
	Text    string      `json:"text"`    // text completions
	// Logprobs is the chat form {content:[...]} or the completions form
	// {tokens, token_logprobs, top_logprobs, text_offset}.
	Logprobs          *ChunkLogprobs `json:"logprobs"`
	ReasoningLogprobs *ChunkLogprobs `json:"reasoning_logprobs"`
	FinishReason      string         `json:"finish_reason"`
	Tokens            []int          `json:"tokens"`
}

// ChunkDelta is the message part of a choice.
type ChunkDelta struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Reasoning is where Cerebras, Ollama and vLLM put reasoning text.
	Reasoning string `json:"reasoning"`
	// ReasoningContent is where xAI and llama.cpp put it.
	ReasoningContent string           `json:"reasoning_content"`
	Refusal          string           `json:"refusal"`
	ToolCalls        []ChunkToolCall  `json:"tool_calls"`
	Tokens           []int            `json:"tokens"`
	FunctionCall     *ChunkToolCallFn `json:"function_call"` // legacy OpenAI
}

// ChunkToolCall is a tool call fragment; fragments with the same index
// belong to one call. Index is absent when a server sends calls whole.
type ChunkToolCall struct {
	Index    *int            `json:"index"`
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Function ChunkToolCallFn `json:"function"`
}

// ChunkToolCallFn is the function part of a tool call fragment.
type ChunkToolCallFn struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ChunkLogprobs holds log probabilities in either of the two wire forms.
type ChunkLogprobs struct {
	// Chat form.
	Content []ChunkTokenLogprob `json:"content"`
	Refusal []ChunkTokenLogprob `json:"refusal"`
	// Completions form; a null entry (the first token of an echoed
	// prompt) stays nil, which is "no logprob", not 0.
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// ChunkTokenLogprob is one token of the chat logprobs form.
type ChunkTokenLogprob struct {
	Token       string              `json:"token"`
	Logprob     float64             `json:"logprob"`
	Bytes       []int               `json:"bytes"`
	TopLogprobs []ChunkTokenLogprob `json:"top_logprobs"`
}

// ChunkUsage is the usage object of every dialect.
type ChunkUsage struct {
	PromptTokens            int                    `json:"prompt_tokens"`
	CompletionTokens        int                    `json:"completion_tokens"`
	TotalTokens             int                    `json:"total_tokens"`
	PromptTokensDetails     *PromptTokensDetails   `json:"prompt_tokens_details"`
	CompletionTokensDetails *CompletionTokenDetail `json:"completion_tokens_details"`
	ImageTokens             int                    `json:"image_tokens"`
	// CostInUSDTicks is xAI's cost; 1 USD is 1e10 ticks.
	CostInUSDTicks int64 `json:"cost_in_usd_ticks"`
	NumSourcesUsed int   `json:"num_sources_used"` // xAI
}

// PromptTokensDetails breaks prompt tokens down.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
	TextTokens   int `json:"text_tokens"`
	AudioTokens  int `json:"audio_tokens"`
	ImageTokens  int `json:"image_tokens"`
}

// CompletionTokenDetail breaks completion tokens down.
type CompletionTokenDetail struct {
	ReasoningTokens          int `json:"reasoning_tokens"`
	AudioTokens              int `json:"audio_tokens"`
	AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
	RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
}

// ChunkTimings is Cerebras' time_info, in seconds.
type ChunkTimings struct {
	QueueTime      float64 `json:"queue_time"`
	PromptTime     float64 `json:"prompt_time"`
	CompletionTime float64 `json:"completion_time"`
	TotalTime      float64 `json:"total_time"`
	Created        float64 `json:"created"`
}

// LlamaTimings is llama.cpp's timings object, in milliseconds.
type LlamaTimings struct {
	CacheN              int     `json:"cache_n"`
	PromptN             int     `json:"prompt_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms"`
	PromptPerSecond     float64 `json:"prompt_per_second"`
	PredictedN          int     `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
	PredictedPerSecond  float64 `json:"predicted_per_second"`
}

// ChunkError is the error object of an error chunk or an error body. Code
// is kept raw because servers send it as a string, a number or null.
type ChunkError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Param   string          `json:"param"`
	Code    json.RawMessage `json:"code"`
	ID      string          `json:"id"`
}

// ValidationDetail is one entry of the seed's 422 body
// {"detail":[{"loc":["body","temperature"],"msg":"...","type":"..."}]}.
type ValidationDetail struct {
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
	Type string `json:"type"`
}
