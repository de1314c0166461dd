package llm

import "slices"

// ParamType says what JSON a request parameter takes, so that the panel
// can pick a control and Validate can check the value.
type ParamType string

// The parameter types of the seeds.
const (
	TypeNumber        ParamType = "number"
	TypeInteger       ParamType = "integer"
	TypeBoolean       ParamType = "boolean"
	TypeString        ParamType = "string"
	TypeStringOrArray ParamType = "string-or-array" // a string or an array of at most MaxItems strings
	TypeStringArray   ParamType = "string-array"    // an array of at most MaxItems strings, never a bare string
	TypeEnum          ParamType = "enum"            // one of Enum
	TypeEnumOrObject  ParamType = "enum-or-object"  // one of Enum, or an object (tool_choice)
	TypeObject        ParamType = "object"          // a JSON object, edited as JSON
	TypeArray         ParamType = "array"           // a JSON array, edited as JSON
	TypeMessages      ParamType = "messages"        // the chat conversation
	TypePrompt        ParamType = "prompt"          // the completion prompt
)

// Group is the section of the parameter panel a parameter is shown in.
type Group string

// The panel's sections, in display order.
const (
	GroupModel     Group = "model"
	GroupInput     Group = "input"
	GroupSampling  Group = "sampling"
	GroupLength    Group = "length"
	GroupPenalties Group = "penalties"
	GroupReasoning Group = "reasoning"
	GroupOutput    Group = "output format"
	GroupLogprobs  Group = "logprobs"
	GroupTools     Group = "tools"
	GroupAdvanced  Group = "advanced"
)

// Param is one request parameter of an endpoint as one dialect sees it.
// Name is the wire field, which is also the name of its panel control.
type Param struct {
	Name  string
	Type  ParamType
	Group Group
	Doc   string // one line, from the spec
	// Min and Max bound a number, inclusive; for logit_bias they bound
	// each value of the map. Nil means unbounded.
	Min, Max   *float64
	Default    any      // the spec's default; nil when the spec gives none
	Enum       []string // allowed values of an enum (or the string forms of tool_choice)
	MaxItems   int      // most items of an array (stop); 0 means no limit
	MaxLength  int      // longest string in characters; 0 means no limit
	Required   bool
	Deprecated bool
	// Replacement says what to use instead of a deprecated parameter.
	Replacement string
	// Supported says whether the dialect takes the parameter on this
	// endpoint at all; Support adds what depends on the model. Reason says
	// why not, for the disabled control.
	Supported bool
	Reason    string
	// Note is a caution for a supported parameter, such as a provider
	// extension sent to an OpenAI-compatible server that may ignore it.
	Note string
}

// Params lists the parameters of an endpoint for a dialect, in display
// order, including those the dialect does not support (Supported false,
// with the reason), so that every provider shows the same panel. It is
// nil for an unknown dialect or endpoint.
func Params(d Dialect, e Endpoint) []Param {
	if !knownDialect(d) {
		return nil
	}
	var ps []Param
	switch e {
	case EndpointChat:
		ps = chatParams()
	case EndpointCompletion:
		ps = completionParams()
	default:
		return nil
	}
	out := ps[:0]
	for _, p := range ps {
		if d == DialectOpenAI && cerebrasOnly(e, p.Name) {
			// Not offered to an OpenAI-compatible server: extra body
			// carries it for the server that takes it.
			continue
		}
		p.Supported = true
		adaptParam(d, e, &p)
		out = append(out, p)
	}
	return out
}

// cerebrasOnly names the seeds' parameters that are Cerebras extensions,
// not part of the OpenAI API.
func cerebrasOnly(e Endpoint, name string) bool {
	switch name {
	case "min_tokens", "min_completion_tokens", "reasoning_format", "disable_reasoning",
		"clear_thinking", "model_parameters", "grammar_root", "return_raw_tokens":
		return true
	case "prompt_cache_key":
		return e == EndpointCompletion
	}
	return false
}

// FindParam returns the named parameter of Params(d, e).
func FindParam(d Dialect, e Endpoint, name string) (Param, bool) {
	for _, p := range Params(d, e) {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// Support says whether a request to the dialect's endpoint for model m may
// carry the named field, and if not, why, in words for the user. Fields
// the registry does not know are refused by the strict dialects (Cerebras
// and the simulator answer 422) and passed through by the others as extra
// body. What depends on the model is judged only when the model is known
// (the fallback lists, or what m itself says): an unknown model gets the
// benefit of the doubt and the provider has the last word.
func Support(d Dialect, e Endpoint, m Model, name string) (ok bool, reason string) {
	if !knownDialect(d) || !e.Valid() {
		return false, "Knobs does not know this provider dialect or endpoint"
	}
	p, found := FindParam(d, e, name)
	if !found {
		return unknownField(d, e, name)
	}
	return paramSupport(d, e, factsOf(d, m, m.ID), p)
}

// ExtraFieldsAllowed reports whether a request for the dialect may carry
// fields the registry does not list (extra body), which the provider then
// judges itself. Cerebras and the simulator refuse them.
func ExtraFieldsAllowed(d Dialect) bool { return knownDialect(d) && !strictDialect(d) }

// strictDialect reports whether the dialect rejects fields it does not
// know. Cerebras does (422), and the simulator speaks its wire format.
// xAI's strictness about unknown fields is not documented, so what it does
// not list is passed through and xAI has the last word, as an
// OpenAI-compatible server does with extra body fields.
func strictDialect(d Dialect) bool { return d == DialectCerebras || d == DialectSim }

func knownDialect(d Dialect) bool {
	switch d {
	case DialectCerebras, DialectXAI, DialectOpenAI, DialectSim:
		return true
	}
	return false
}

// dialectName is how messages name the provider behind a dialect.
func dialectName(d Dialect) string {
	switch d {
	case DialectCerebras:
		return "Cerebras"
	case DialectXAI:
		return "xAI"
	case DialectSim:
		return "The simulator"
	default:
		return "This server"
	}
}

func otherEndpoint(e Endpoint) Endpoint {
	if e == EndpointChat {
		return EndpointCompletion
	}
	return EndpointChat
}

// unknownField judges a field that Params(d, e) does not list.
func unknownField(d Dialect, e Endpoint, name string) (bool, string) {
	switch {
	case e == EndpointCompletion && name == "messages":
		return false, "messages is for chat: the completion endpoint takes a prompt"
	case e == EndpointChat && name == "prompt":
		return false, "prompt is for text completions: chat takes messages"
	case !strictDialect(d):
		return true, ""
	}
	if _, ok := FindParam(d, otherEndpoint(e), name); ok {
		return false, name + " is a " + endpointTitle(otherEndpoint(e)) + " parameter: " + endpointTitle(e) + " does not take it"
	}
	return false, dialectName(d) + " does not know the field " + name + " and would answer 422: remove it"
}

func endpointTitle(e Endpoint) string {
	if e == EndpointCompletion {
		return "text completion"
	}
	return "chat"
}

// paramSupport judges a listed parameter for the dialect and the model.
func paramSupport(d Dialect, e Endpoint, f modelFacts, p Param) (bool, string) {
	if !p.Supported {
		return false, p.Reason
	}
	name := p.Name
	if d == DialectXAI && f.reasoningKnown && f.reasoning {
		switch name {
		case "presence_penalty", "frequency_penalty", "stop":
			return false, "xAI reasoning models (" + f.id + " is one) reject " + name + ", even at its default: remove it"
		}
	}
	if d == DialectXAI && e == EndpointCompletion && name == "presence_penalty" && f.canonical == "grok-3" {
		return false, "grok-3 does not support presence_penalty on xAI's /v1/completions"
	}
	switch name {
	case "reasoning_effort":
		if f.reasoningKnown && !f.reasoning {
			return false, f.id + " is not a reasoning model: it takes no reasoning_effort"
		}
		if f.reasoning && f.effortsKnown && len(f.efforts) == 0 {
			return false, f.id + " sets its own reasoning effort and rejects reasoning_effort: remove it"
		}
	case "disable_reasoning", "clear_thinking":
		if f.reasoningKnown && !f.reasoning {
			return false, f.id + " is not a reasoning model: " + name + " does not apply to it"
		}
	}
	return true, ""
}

// modelFacts is what is known of a request's model: from the fallback
// lists when it is in them, else from the Model the caller passed.
type modelFacts struct {
	id             string // as the user wrote it
	canonical      string // the fallback list's id when an alias was used
	reasoningKnown bool
	reasoning      bool
	effortsKnown   bool
	efforts        []string
	contextLength  int
	maxOutput      int
}

func factsOf(d Dialect, m Model, id string) modelFacts {
	if id == "" {
		id = m.ID
	}
	f := modelFacts{id: id, canonical: id}
	if m.ID != "" && m.ID != id {
		// The caller's Model is for another id: it says nothing of this one.
		m = Model{}
	}
	k, found := LookupModel(d, id)
	if found {
		f.canonical = k.ID
		f.reasoningKnown = true
		f.reasoning = k.Reasoning || m.Reasoning
		f.effortsKnown = true
		f.efforts = k.ReasoningEfforts
		f.contextLength = k.ContextLength
		f.maxOutput = k.MaxOutput
	}
	if m.Reasoning {
		f.reasoningKnown, f.reasoning = true, true
	}
	if m.ReasoningEfforts != nil {
		f.effortsKnown, f.efforts = true, m.ReasoningEfforts
	}
	if m.ContextLength > 0 {
		f.contextLength = m.ContextLength
	}
	if m.MaxOutput > 0 {
		f.maxOutput = m.MaxOutput
	}
	return f
}

func bound(v float64) *float64 { return &v }

// adaptParam turns the Cerebras parameter of the seeds into the dialect's.
func adaptParam(d Dialect, e Endpoint, p *Param) {
	unsupported := func(reason string) { p.Supported, p.Reason = false, reason }
	switch d {
	case DialectCerebras, DialectSim:
		if p.Name == "max_tokens" || p.Name == "max_completion_tokens" {
			// The completions seed allows -1 (the model's maximum), and 0,
			// which scores a prompt (echo and logprobs, nothing generated);
			// the simulator takes -1 on both endpoints. Validate refuses 0
			// on chat.
			p.Min = bound(-1)
			p.Doc += " -1 means the model's maximum."
			if e == EndpointCompletion {
				p.Doc += " 0 generates nothing: with echo and logprobs, it scores the prompt."
			}
		}
		if e == EndpointCompletion && p.Name == "suffix" {
			if d == DialectSim {
				unsupported("The simulator follows Cerebras, which does not support suffix")
			} else {
				unsupported("Cerebras does not support suffix (an OpenAI feature)")
			}
		}
	case DialectXAI:
		if e == EndpointChat {
			adaptXAIChat(p, unsupported)
		} else {
			adaptXAICompletion(p, unsupported)
		}
	case DialectOpenAI:
		adaptOpenAI(e, p)
	}
}

func adaptXAIChat(p *Param, unsupported func(string)) {
	switch p.Name {
	case "min_tokens", "min_completion_tokens", "reasoning_format", "disable_reasoning",
		"clear_thinking", "model_parameters", "prediction", "service_tier", "prompt_cache_key":
		unsupported("xAI's chat API has no " + p.Name)
	case "top_logprobs":
		p.Max = bound(8)
		p.Doc = "An integer between 0 and 8: how many most likely tokens to return at each position, with their log probabilities; logprobs must be true."
	case "reasoning_effort":
		p.Doc = "How hard the model thinks: only some reasoning models take it (grok-3-mini: low or high); the others answer 400."
	case "presence_penalty", "frequency_penalty", "stop":
		p.Note = "Not supported by xAI reasoning models."
	}
}

// int32 bounds the integers seed 001 declares format int32.
const (
	minInt32 = -1 << 31
	maxInt32 = 1<<31 - 1
)

func adaptXAICompletion(p *Param, unsupported func(string)) {
	// The xAI seed gives a default for temperature only.
	if p.Name != "temperature" {
		p.Default = nil
	}
	switch p.Name {
	case "seed":
		p.Min, p.Max = bound(minInt32), bound(maxInt32)
	case "n", "max_tokens":
		p.Max = bound(maxInt32)
	}
	switch p.Name {
	case "best_of", "frequency_penalty", "logit_bias", "suffix":
		unsupported("xAI does not support " + p.Name + " on /v1/completions")
	case "grammar_root", "min_tokens", "prompt_cache_key", "reasoning_format", "return_raw_tokens":
		unsupported("xAI's /v1/completions has no " + p.Name)
	case "model":
		p.Doc = "The model to use; xAI's legacy completions do not support reasoning models."
	case "prompt":
		p.Doc = "The prompt to complete: a string or an array of strings."
	case "logprobs":
		p.Type, p.Min, p.Max = TypeBoolean, nil, nil
		p.Doc = "Include the log probabilities of the output tokens."
	case "stop":
		p.Type = TypeStringArray
		p.Doc = "Up to 4 sequences where the API will stop generating further tokens; not supported by reasoning models."
	case "max_tokens":
		p.Min = bound(1)
		p.Doc = "Limits the number of tokens produced; prompt plus max_tokens must fit the model's context."
	case "presence_penalty":
		p.Note = "Not supported by grok-3 and reasoning models."
	case "user":
		p.Doc = "A unique identifier for your end-user, to help xAI monitor and detect abuse."
	}
}

func adaptOpenAI(e Endpoint, p *Param) {
	const extension = "Not an OpenAI parameter (Cerebras has it): sent as is; the server may ignore or reject it."
	switch p.Name {
	case "min_tokens", "min_completion_tokens", "reasoning_format", "disable_reasoning",
		"clear_thinking", "model_parameters", "grammar_root", "return_raw_tokens":
		p.Note = extension
	case "prompt_cache_key":
		if e == EndpointCompletion {
			p.Note = extension
		}
	case "reasoning_effort":
		p.Enum = []string{"none", "minimal", "low", "medium", "high", "xhigh"}
		p.Doc = "How hard a reasoning model thinks; the values a model takes differ."
	case "service_tier":
		p.Enum = []string{"auto", "default", "flex", "scale", "priority"}
	case "max_tokens":
		if e == EndpointCompletion {
			p.Min = bound(0)
		}
	case "user":
		p.Doc = "A unique identifier for your end-user, to help the provider monitor and detect abuse."
	}
}

// Docs shared by both endpoints, condensed from the seeds.
const (
	docModel            = "ID of the model to use."
	docTemperature      = "What sampling temperature to use, between 0 and 2: higher is more random, lower more focused; alter this or top_p, not both."
	docTopP             = "Nucleus sampling: only the tokens within the top_p probability mass are considered (0.1 = the top 10%); alter this or temperature, not both."
	docSeed             = "Best-effort deterministic sampling: the same seed and parameters should give the same result; not guaranteed."
	docN                = "How many choices to generate; you are charged for the tokens of all of them."
	docStop             = "Up to 4 sequences where the API will stop generating further tokens; the returned text will not contain them."
	docMinTokens        = "The minimum number of tokens to generate: unset or 0 lets the model decide, -1 means the maximum sequence length."
	docFrequencyPenalty = "Between -2.0 and 2.0: positive values penalize tokens by how often they appeared so far, making verbatim repetition less likely."
	docPresencePenalty  = "Between -2.0 and 2.0: positive values penalize tokens that already appeared, making new topics more likely."
	docLogitBias        = "Maps token ids (of the model's tokenizer) to a bias from -100 (ban) to 100 (exclusive selection), added to the logits before sampling."
	docReasoningFormat  = "How reasoning is returned: parsed (in the reasoning field), raw (in content, with special tokens) or hidden."
	docPromptCacheKey   = "An opaque key (a conversation id, a hash of the system prompt...) for requests that likely share a prompt prefix."
	docUser             = "A unique identifier for your end-user, to help Cerebras monitor and detect abuse."
	docStreamOptions    = "Streaming options: include_usage adds a usage chunk before [DONE]."
)

// limitStop is the most stop sequences any of the seeds allows.
const limitStop = 4

func enumReasoningFormat() []string {
	return []string{"none", "parsed", "text_parsed", "raw", "hidden"}
}

// chatParams is the request of the Cerebras chat seed, in display order.
func chatParams() []Param {
	return []Param{
		{Name: "model", Type: TypeString, Group: GroupModel, Doc: docModel, Required: true},
		{Name: "messages", Type: TypeMessages, Group: GroupInput, Required: true,
			Doc: "The conversation so far: system, developer, user, assistant and tool messages."},

		// Seed 002 gives no defaults: the panel says "provider default".
		{Name: "temperature", Type: TypeNumber, Group: GroupSampling, Doc: docTemperature, Min: bound(0), Max: bound(2)},
		{Name: "top_p", Type: TypeNumber, Group: GroupSampling, Doc: docTopP, Min: bound(0), Max: bound(1)},
		{Name: "seed", Type: TypeInteger, Group: GroupSampling, Doc: docSeed},
		{Name: "n", Type: TypeInteger, Group: GroupSampling, Doc: docN, Min: bound(1)},

		{Name: "max_completion_tokens", Type: TypeInteger, Group: GroupLength, Min: bound(1),
			Doc: "An upper bound for the number of tokens generated, visible output and reasoning tokens together."},
		{Name: "max_tokens", Type: TypeInteger, Group: GroupLength, Min: bound(1), Deprecated: true, Replacement: "max_completion_tokens",
			Doc: "The maximum number of tokens to generate; deprecated in favour of max_completion_tokens."},
		{Name: "min_completion_tokens", Type: TypeInteger, Group: GroupLength, Min: bound(-1), Doc: docMinTokens},
		{Name: "min_tokens", Type: TypeInteger, Group: GroupLength, Min: bound(-1), Doc: docMinTokens},
		{Name: "stop", Type: TypeStringOrArray, Group: GroupLength, Doc: docStop, MaxItems: limitStop},

		{Name: "frequency_penalty", Type: TypeNumber, Group: GroupPenalties, Doc: docFrequencyPenalty, Min: bound(-2), Max: bound(2)},
		{Name: "presence_penalty", Type: TypeNumber, Group: GroupPenalties, Doc: docPresencePenalty, Min: bound(-2), Max: bound(2)},
		{Name: "logit_bias", Type: TypeObject, Group: GroupPenalties, Doc: docLogitBias, Min: bound(-100), Max: bound(100)},

		{Name: "reasoning_effort", Type: TypeEnum, Group: GroupReasoning, Enum: []string{"none", "low", "medium", "high"},
			Doc: "How hard a reasoning model thinks before answering; the values a model takes differ."},
		{Name: "reasoning_format", Type: TypeEnum, Group: GroupReasoning, Enum: enumReasoningFormat(), Doc: docReasoningFormat},
		{Name: "disable_reasoning", Type: TypeBoolean, Group: GroupReasoning,
			Doc: "Disables reasoning for reasoning models: the model answers without reasoning."},
		{Name: "clear_thinking", Type: TypeBoolean, Group: GroupReasoning,
			Doc: "Removes reasoning content from the messages before the latest user message."},

		{Name: "response_format", Type: TypeObject, Group: GroupOutput,
			Doc: "The output format: text, any JSON object (json_object), or JSON matching a schema (json_schema)."},
		{Name: "prediction", Type: TypeObject, Group: GroupOutput,
			Doc: "Predicted output (content known in advance, such as a file being edited) to speed up generation."},

		{Name: "logprobs", Type: TypeBoolean, Group: GroupLogprobs,
			Doc: "Whether to return the log probability of each output token."},
		{Name: "top_logprobs", Type: TypeInteger, Group: GroupLogprobs, Min: bound(0), Max: bound(20),
			Doc: "An integer between 0 and 20: how many most likely tokens to return at each position, with their log probabilities; logprobs must be true."},

		{Name: "tools", Type: TypeArray, Group: GroupTools,
			Doc: "Functions the model may call, each with a name, a description and a JSON Schema for its arguments."},
		{Name: "tool_choice", Type: TypeEnumOrObject, Group: GroupTools, Enum: []string{"none", "auto", "required"},
			Doc: "Whether and which tool the model calls: none, auto, required, or {\"type\":\"function\",\"function\":{\"name\":...}}."},
		{Name: "parallel_tool_calls", Type: TypeBoolean, Group: GroupTools,
			Doc: "Whether the model may call several tools in one turn."},

		{Name: "service_tier", Type: TypeEnum, Group: GroupAdvanced, Enum: []string{"auto", "default", "flex", "priority"},
			Doc: "The processing tier of the request."},
		{Name: "prompt_cache_key", Type: TypeString, Group: GroupAdvanced, Doc: docPromptCacheKey, MaxLength: 1024},
		{Name: "user", Type: TypeString, Group: GroupAdvanced, Doc: docUser},
		{Name: "model_parameters", Type: TypeObject, Group: GroupAdvanced,
			Doc: "Model-specific parameters, checked against the model's own schema; unsupported for models that declare none."},
		streamParam(),
		{Name: "stream_options", Type: TypeObject, Group: GroupAdvanced, Doc: docStreamOptions},
	}
}

// completionParams is the request of the Cerebras completions seed, in
// display order.
func completionParams() []Param {
	return []Param{
		{Name: "model", Type: TypeString, Group: GroupModel, Doc: docModel, Required: true},
		{Name: "prompt", Type: TypePrompt, Group: GroupInput, Required: true,
			Doc: "The prompt(s) to complete: a string, an array of strings, an array of token ids or an array of token-id arrays."},

		{Name: "temperature", Type: TypeNumber, Group: GroupSampling, Doc: docTemperature, Min: bound(0), Max: bound(2), Default: 1.0},
		{Name: "top_p", Type: TypeNumber, Group: GroupSampling, Doc: docTopP, Min: bound(0), Max: bound(1), Default: 1.0},
		{Name: "seed", Type: TypeInteger, Group: GroupSampling, Doc: docSeed},
		{Name: "n", Type: TypeInteger, Group: GroupSampling, Doc: docN, Min: bound(1), Default: 1},
		{Name: "best_of", Type: TypeInteger, Group: GroupSampling, Min: bound(0), Max: bound(20), Default: 1,
			Note: "Above 1 it cannot be streamed: set stream to false (Advanced) to use it.",
			Doc:  "Generates best_of candidates server-side and returns the n best (highest log probability per token); results cannot be streamed."},

		{Name: "max_tokens", Type: TypeInteger, Group: GroupLength, Min: bound(-1),
			Doc: "The maximum number of tokens to generate; prompt plus output is limited by the model's context length."},
		{Name: "min_tokens", Type: TypeInteger, Group: GroupLength, Min: bound(-1), Doc: docMinTokens},
		{Name: "stop", Type: TypeStringOrArray, Group: GroupLength, Doc: docStop, MaxItems: limitStop},

		{Name: "frequency_penalty", Type: TypeNumber, Group: GroupPenalties, Doc: docFrequencyPenalty, Min: bound(-2), Max: bound(2), Default: 0.0},
		{Name: "presence_penalty", Type: TypeNumber, Group: GroupPenalties, Doc: docPresencePenalty, Min: bound(-2), Max: bound(2), Default: 0.0},
		{Name: "logit_bias", Type: TypeObject, Group: GroupPenalties, Doc: docLogitBias, Min: bound(-100), Max: bound(100)},

		{Name: "reasoning_format", Type: TypeEnum, Group: GroupReasoning, Enum: enumReasoningFormat(), Doc: docReasoningFormat, Deprecated: true,
			Replacement: "the chat endpoint, which returns reasoning in its own field (seed 000 names no replacement on completions)"},

		{Name: "echo", Type: TypeBoolean, Group: GroupOutput, Default: false,
			Doc: "Echo back the prompt in addition to the completion."},
		{Name: "suffix", Type: TypeString, Group: GroupOutput,
			Doc: "The suffix that comes after a completion of inserted text."},
		{Name: "grammar_root", Type: TypeString, Group: GroupOutput,
			Doc: "The grammar root used for structured output generation."},
		{Name: "return_raw_tokens", Type: TypeBoolean, Group: GroupOutput, Default: false,
			Doc: "Return raw tokens instead of text."},

		{Name: "logprobs", Type: TypeInteger, Group: GroupLogprobs, Min: bound(0), Max: bound(20),
			Doc: "Return the log probabilities of the logprobs most likely tokens at each position (0 to 20), plus the chosen token."},

		{Name: "prompt_cache_key", Type: TypeString, Group: GroupAdvanced, Doc: docPromptCacheKey, MaxLength: 1024},
		{Name: "user", Type: TypeString, Group: GroupAdvanced, Doc: docUser},
		streamParam(),
		{Name: "stream_options", Type: TypeObject, Group: GroupAdvanced, Doc: docStreamOptions},
	}
}

// streamParam is "stream", which Knobs sets itself unless the user does.
func streamParam() Param {
	return Param{Name: "stream", Type: TypeBoolean, Group: GroupAdvanced,
		Doc:  "Whether the answer streams in as it is generated.",
		Note: "Knobs streams by design: left unset, Knobs sends stream: true (and stream_options.include_usage) itself, marked in the raw request. Set false for one JSON answer, as some servers behave differently."}
}

// paramIndex maps the wire names of ps to their parameters.
func paramIndex(ps []Param) map[string]Param {
	idx := make(map[string]Param, len(ps))
	for _, p := range ps {
		idx[p.Name] = p
	}
	return idx
}

// effortAllowed reports whether the model takes the reasoning_effort value.
func (f modelFacts) effortAllowed(v string) bool {
	return !f.effortsKnown || len(f.efforts) == 0 || slices.Contains(f.efforts, v)
}
