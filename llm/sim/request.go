package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"knobs/llm"
)

// request is a chat or text completion request body, as Cerebras reads
// it. Pointers tell "not set" from zero values.
type request struct {
	endpoint llm.Endpoint
	raw      map[string]json.RawMessage

	Model               string
	Messages            []message
	Prompt              json.RawMessage
	Stream              *bool
	StreamOptions       *streamOptions
	Temperature         *float64
	TopP                *float64
	Seed                *int64
	N                   *int
	MaxTokens           *int
	MaxCompletionTokens *int
	MinTokens           *int
	MinCompletionTokens *int
	Stop                json.RawMessage
	ChatLogprobs        *bool
	CompletionLogprobs  *int
	TopLogprobs         *int
	Echo                *bool
	ReasoningEffort     *string
	ReasoningFormat     *string
	DisableReasoning    *bool
	ResponseFormat      *responseFormat
	Tools               []tool
	ToolChoice          json.RawMessage
	ParallelToolCalls   *bool
	FrequencyPenalty    *float64
	PresencePenalty     *float64
	BestOf              *int
	Suffix              *string
	PromptCacheKey      *string
	ServiceTier         *string
	ignored             json.RawMessage // accepted fields with no effect on the simulation
}

type streamOptions struct {
	IncludeUsage *bool `json:"include_usage"`
}

type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       *string         `json:"name"`
	Reasoning  json.RawMessage `json:"reasoning"`
	ToolCalls  []messageCall   `json:"tool_calls"`
	ToolCallID *string         `json:"tool_call_id"`
}

type messageCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Index    *int   `json:"index"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name        string          `json:"name"`
		Description *string         `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Strict      *bool           `json:"strict"`
	} `json:"json_schema"`
}

type tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description *string         `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	} `json:"function"`
}

// fields maps every field the endpoint accepts to where it is decoded.
// A field missing here is unknown, which Cerebras answers with 422.
func (r *request) fields() map[string]any {
	f := map[string]any{
		"model": &r.Model, "stream": &r.Stream, "stream_options": &r.StreamOptions,
		"temperature": &r.Temperature, "top_p": &r.TopP, "seed": &r.Seed, "n": &r.N,
		"max_tokens": &r.MaxTokens, "min_tokens": &r.MinTokens, "stop": &r.Stop,
		"reasoning_format": &r.ReasoningFormat, "frequency_penalty": &r.FrequencyPenalty,
		"presence_penalty": &r.PresencePenalty, "prompt_cache_key": &r.PromptCacheKey,
		"logit_bias": &r.ignored, "user": &r.ignored,
	}
	if r.endpoint == llm.EndpointCompletion {
		for k, v := range map[string]any{
			"prompt": &r.Prompt, "logprobs": &r.CompletionLogprobs, "echo": &r.Echo,
			"best_of": &r.BestOf, "suffix": &r.Suffix, "grammar_root": &r.ignored,
			"return_raw_tokens": &r.ignored,
		} {
			f[k] = v
		}
		return f
	}
	for k, v := range map[string]any{
		"messages": &r.Messages, "logprobs": &r.ChatLogprobs, "top_logprobs": &r.TopLogprobs,
		"max_completion_tokens": &r.MaxCompletionTokens, "min_completion_tokens": &r.MinCompletionTokens,
		"reasoning_effort": &r.ReasoningEffort, "disable_reasoning": &r.DisableReasoning,
		"response_format": &r.ResponseFormat, "tools": &r.Tools, "tool_choice": &r.ToolChoice,
		"parallel_tool_calls": &r.ParallelToolCalls, "service_tier": &r.ServiceTier,
		"clear_thinking": &r.ignored, "model_parameters": &r.ignored, "prediction": &r.ignored,
	} {
		f[k] = v
	}
	return f
}

// apiError is an answer other than 200, with the body Cerebras sends.
type apiError struct {
	status int
	body   any
}

// flatError is Cerebras' error body: no wrapper object.
type flatError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   string `json:"param"`
	Code    string `json:"code"`
}

// detail is one item of the 422 body of the seeds' HTTPValidationError.
type detail struct {
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
	Type string `json:"type"`
}

func validationError(d ...detail) *apiError {
	return &apiError{http.StatusUnprocessableEntity, map[string][]detail{"detail": d}}
}

func unsupported(path string) *apiError {
	return &apiError{http.StatusUnprocessableEntity, flatError{
		Message: fmt.Sprintf("%s: property '%s' is unsupported", path, path),
		Type:    "invalid_request_error", Param: "validation_error", Code: "wrong_api_format",
	}}
}

func badValue(param, format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, flatError{
		Message: fmt.Sprintf(format, args...),
		Type:    "invalid_request_error", Param: param, Code: "invalid_request_error",
	}}
}

// messageFields are the fields each role's message may carry.
var messageFields = map[string][]string{
	"system":    {"role", "content", "name"},
	"developer": {"role", "content", "name"},
	"user":      {"role", "content", "name"},
	"assistant": {"role", "content", "name", "reasoning", "tool_calls"},
	"tool":      {"role", "content", "name", "tool_call_id"},
}

// parseRequest reads a body the way Cerebras does: strict about unknown
// fields (422 wrong_api_format), pydantic-style 422 details for missing
// fields and wrong types, then 400 for values out of range.
func parseRequest(endpoint llm.Endpoint, body []byte) (*request, *apiError) {
	r := &request{endpoint: endpoint}
	if err := json.Unmarshal(body, &r.raw); err != nil || r.raw == nil {
		return nil, validationError(detail{Loc: []any{"body", 0}, Msg: "JSON decode error", Type: "json_invalid"})
	}
	fields := r.fields()
	keys := make([]string, 0, len(r.raw))
	for k := range r.raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := fields[k]; !ok {
			return nil, unsupported("body." + k)
		}
	}
	if opts, ok := r.raw["stream_options"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(opts, &m) == nil {
			for k := range m {
				if k != "include_usage" {
					return nil, unsupported("body.stream_options." + k)
				}
			}
		}
	}
	if endpoint == llm.EndpointChat {
		if err := checkMessages(r.raw["messages"]); err != nil {
			return nil, err
		}
	}
	var details []detail
	for _, k := range keys {
		if err := json.Unmarshal(r.raw[k], fields[k]); err != nil {
			details = append(details, detail{Loc: []any{"body", k}, Msg: typeMessage(fields[k]), Type: "type_error"})
		}
	}
	required := []string{"model", "messages"}
	if endpoint == llm.EndpointCompletion {
		required = []string{"model", "prompt"}
	}
	for _, k := range required {
		if v, ok := r.raw[k]; !ok || string(v) == "null" {
			details = append(details, detail{Loc: []any{"body", k}, Msg: "Field required", Type: "missing"})
		}
	}
	enums := []struct {
		field string
		value *string
		allow []string
	}{
		{"reasoning_effort", r.ReasoningEffort, []string{"none", "low", "medium", "high"}},
		{"reasoning_format", r.ReasoningFormat, []string{"none", "parsed", "text_parsed", "raw", "hidden"}},
		{"service_tier", r.ServiceTier, []string{"auto", "default", "flex", "priority"}},
	}
	for _, e := range enums {
		if e.value != nil && !slices.Contains(e.allow, *e.value) {
			details = append(details, detail{Loc: []any{"body", e.field},
				Msg: "Input should be '" + strings.Join(e.allow, "', '") + "'", Type: "enum"})
		}
	}
	if len(details) > 0 {
		return nil, validationError(details...)
	}
	return r, nil
}

// checkMessages rejects unknown roles and fields in messages, such as
// reasoning_content, which Cerebras refuses.
func checkMessages(raw json.RawMessage) *apiError {
	var msgs []map[string]json.RawMessage
	if json.Unmarshal(raw, &msgs) != nil {
		return nil // the type check reports it
	}
	for i, m := range msgs {
		var role string
		_ = json.Unmarshal(m["role"], &role)
		allowed, ok := messageFields[role]
		if !ok {
			return validationError(detail{Loc: []any{"body", "messages", i},
				Msg:  fmt.Sprintf("Input tag '%s' found using 'role' does not match any of the expected tags: 'system', 'developer', 'user', 'assistant', 'tool'", role),
				Type: "union_tag_invalid"})
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !slices.Contains(allowed, k) {
				return unsupported(fmt.Sprintf("body.messages.%d.%s", i, k))
			}
		}
		if role == "tool" {
			if _, ok := m["tool_call_id"]; !ok {
				return validationError(detail{Loc: []any{"body", "messages", i, "tool", "tool_call_id"}, Msg: "Field required", Type: "missing"})
			}
		}
		if _, ok := m["content"]; !ok && role != "assistant" {
			return validationError(detail{Loc: []any{"body", "messages", i, role, "content"}, Msg: "Field required", Type: "missing"})
		}
	}
	return nil
}

func typeMessage(target any) string {
	switch target.(type) {
	case **float64:
		return "Input should be a valid number"
	case **int, **int64:
		return "Input should be a valid integer"
	case **bool:
		return "Input should be a valid boolean"
	case *string, **string:
		return "Input should be a valid string"
	case *[]message, *[]tool:
		return "Input should be a valid list"
	}
	return "Input should be a valid dictionary or object"
}

// text is a message content: a string or a list of text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Text != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// stops reads "stop": a string or a list of up to 4 strings.
func (r *request) stops() ([]string, *apiError) {
	if len(r.Stop) == 0 || string(r.Stop) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(r.Stop, &one) == nil {
		if one == "" {
			return nil, nil
		}
		return []string{one}, nil
	}
	var many []string
	if json.Unmarshal(r.Stop, &many) != nil {
		return nil, validationError(detail{Loc: []any{"body", "stop"}, Msg: "Input should be a valid string or list of strings", Type: "type_error"})
	}
	if len(many) > 4 {
		return nil, badValue("stop", "stop: at most 4 sequences are allowed, got %d", len(many))
	}
	return slices.DeleteFunc(many, func(s string) bool { return s == "" }), nil
}

// prompts reads a completion "prompt": a string, strings, tokens or
// lists of tokens (shown as their numbers, having no vocabulary).
func (r *request) prompts() ([]string, *apiError) {
	var one string
	if json.Unmarshal(r.Prompt, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if json.Unmarshal(r.Prompt, &many) == nil && len(many) > 0 {
		return many, nil
	}
	var toks []int
	if json.Unmarshal(r.Prompt, &toks) == nil && len(toks) > 0 {
		return []string{tokenIDs(toks)}, nil
	}
	var lists [][]int
	if json.Unmarshal(r.Prompt, &lists) == nil && len(lists) > 0 {
		out := make([]string, len(lists))
		for i, l := range lists {
			out[i] = tokenIDs(l)
		}
		return out, nil
	}
	return nil, validationError(detail{Loc: []any{"body", "prompt"}, Msg: "Input should be a valid string or list", Type: "type_error"})
}

func tokenIDs(ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, id)
	}
	return b.String()
}

// compileSchema compiles a JSON Schema from a request, refusing $refs that
// leave the document: the simulator reads no files and no network.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource("request.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("request.json")
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("sim: $ref to %s: only references inside the schema are supported", url)
}
