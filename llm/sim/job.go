package sim

import (
	"encoding/json"
	"hash/fnv"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"knobs/llm"
	"knobs/ordered"
)

// job is a validated request, reduced to what shapes the output.
type job struct {
	endpoint     llm.Endpoint
	prof         profile
	stream       bool
	includeUsage bool
	n            int
	prompts      []string // completions: one per prompt; chat: the last user message
	lastRole     string   // chat: role of the last message
	toolResult   string   // chat: content of a trailing tool message
	seed         uint64
	contentHash  uint64 // of the inputs that shape the text, not of the sampling knobs
	temp, topP   float64
	limit        int // max completion tokens per choice, reasoning included
	minTokens    int
	stop         []string
	logprobs     bool
	topLogprobs  int
	echo         bool
	effort       string // reasoning_effort; "" when the model does not reason
	format       string // reasoning_format
	jsonMode     string // "", "json_object", "json_schema"
	schema       any
	compiled     *jsonschema.Schema
	tools        []jobTool
	forced       []int // indexes of tools the model must call; nil when it may choose
	toolChoice   string
	parallel     bool
	promptTokens int
	cachedTokens int
}

type jobTool struct {
	name     string
	params   any // ordered schema
	compiled *jsonschema.Schema
}

// newJob checks the values of a parsed request (400s and 404) and works
// out everything the generation needs.
func newJob(r *request) (*job, *apiError) {
	p, ok := findProfile(r.Model)
	if !ok {
		return nil, &apiError{404, flatError{
			Message: "Model " + r.Model + " does not exist or you do not have access to it.",
			Type:    "not_found_error", Param: "model", Code: "model_not_found"}}
	}
	j := &job{endpoint: r.endpoint, prof: p, n: 1, temp: 1, topP: 1, limit: p.maxOutput}
	j.stream = r.Stream != nil && *r.Stream
	j.includeUsage = r.StreamOptions != nil && r.StreamOptions.IncludeUsage != nil && *r.StreamOptions.IncludeUsage
	if v := r.Temperature; v != nil {
		if *v < 0 || *v > 2 {
			return nil, badValue("temperature", "temperature must be between 0 and 2, got %v", *v)
		}
		j.temp = *v
	}
	if v := r.TopP; v != nil {
		if *v < 0 || *v > 1 {
			return nil, badValue("top_p", "top_p must be between 0 and 1, got %v", *v)
		}
		j.topP = *v
	}
	for _, pen := range []struct {
		name string
		v    *float64
	}{{"frequency_penalty", r.FrequencyPenalty}, {"presence_penalty", r.PresencePenalty}} {
		if pen.v != nil && (*pen.v < -2 || *pen.v > 2) {
			return nil, badValue(pen.name, "%s must be between -2 and 2, got %v", pen.name, *pen.v)
		}
	}
	if v := r.N; v != nil {
		if *v < 1 || *v > 16 {
			return nil, badValue("n", "n must be between 1 and 16, got %d", *v)
		}
		j.n = *v
	}
	for _, lim := range []struct {
		name string
		v    *int
	}{{"max_tokens", r.MaxTokens}, {"max_completion_tokens", r.MaxCompletionTokens}} {
		if lim.v == nil {
			continue
		}
		switch {
		case *lim.v == -1:
			j.limit = p.maxOutput
		case *lim.v == 0 && r.endpoint == llm.EndpointCompletion:
			// Seed 000 allows 0: nothing is generated, which with echo and
			// logprobs scores the prompt.
			j.limit = 0
		case *lim.v < 1:
			return nil, badValue(lim.name, "%s must be at least 1, got %d", lim.name, *lim.v)
		default:
			j.limit = min(*lim.v, p.maxOutput)
		}
	}
	for _, m := range []*int{r.MinTokens, r.MinCompletionTokens} {
		if m != nil {
			if *m < -1 {
				return nil, badValue("min_tokens", "min_tokens must be -1 or more, got %d", *m)
			}
			j.minTokens = *m
		}
	}
	if j.minTokens == -1 {
		j.minTokens = j.limit
	}
	stop, err := r.stops()
	if err != nil {
		return nil, err
	}
	j.stop = stop
	if r.TopLogprobs != nil {
		if *r.TopLogprobs < 0 || *r.TopLogprobs > 20 {
			return nil, badValue("top_logprobs", "top_logprobs must be between 0 and 20, got %d", *r.TopLogprobs)
		}
		if *r.TopLogprobs > 0 && (r.ChatLogprobs == nil || !*r.ChatLogprobs) {
			return nil, badValue("top_logprobs", "top_logprobs requires logprobs to be true")
		}
		j.topLogprobs = *r.TopLogprobs
	}
	j.logprobs = r.ChatLogprobs != nil && *r.ChatLogprobs
	if v := r.CompletionLogprobs; v != nil {
		if *v < 0 || *v > 20 {
			return nil, badValue("logprobs", "logprobs must be between 0 and 20, got %d", *v)
		}
		j.logprobs, j.topLogprobs = true, *v
	}
	j.echo = r.Echo != nil && *r.Echo
	if r.BestOf != nil {
		if *r.BestOf < j.n || *r.BestOf > 20 {
			return nil, badValue("best_of", "best_of must be between n and 20, got %d", *r.BestOf)
		}
		if *r.BestOf > 1 && j.stream {
			return nil, badValue("best_of", "best_of cannot be used with stream")
		}
	}
	if r.Suffix != nil {
		return nil, badValue("suffix", "suffix is not supported")
	}
	if err := j.setReasoning(r); err != nil {
		return nil, err
	}
	if r.endpoint == llm.EndpointCompletion {
		prompts, err := r.prompts()
		if err != nil {
			return nil, err
		}
		j.prompts = prompts
		for _, pr := range prompts {
			j.promptTokens += 1 + countTokens(pr)
		}
	} else if err := j.setChat(r); err != nil {
		return nil, err
	}

	h := fnv.New64a()
	for _, k := range []string{"model", "messages", "prompt", "tools", "tool_choice", "response_format"} {
		h.Write([]byte(k))
		h.Write(r.raw[k])
	}
	j.contentHash = h.Sum64()
	switch {
	case j.temp == 0:
		j.seed = 0 // greedy: the seed has nothing to choose
	case r.Seed != nil:
		j.seed = uint64(*r.Seed)
	default:
		j.seed = rand.Uint64()
	}
	return j, nil
}

func (j *job) setReasoning(r *request) *apiError {
	if !j.prof.reasoning {
		if r.ReasoningEffort != nil && *r.ReasoningEffort != "none" {
			return badValue("reasoning_effort", "reasoning_effort is not supported by model %s", j.prof.id)
		}
		return nil
	}
	j.effort, j.format = "medium", "parsed"
	if r.ReasoningEffort != nil {
		j.effort = *r.ReasoningEffort
	}
	if r.DisableReasoning != nil && *r.DisableReasoning {
		j.effort = "none"
	}
	if r.ReasoningFormat != nil && *r.ReasoningFormat != "none" {
		j.format = *r.ReasoningFormat
	}
	if j.endpoint == llm.EndpointCompletion && j.format != "raw" {
		j.format = "hidden" // a text completion has no reasoning field
	}
	return nil
}

func (j *job) setChat(r *request) *apiError {
	if len(r.Messages) == 0 {
		return badValue("messages", "messages must not be empty")
	}
	last := ""
	for i, m := range r.Messages {
		text := contentText(m.Content)
		j.promptTokens += 4 + countTokens(text) + countTokens(contentText(m.Reasoning))
		for _, c := range m.ToolCalls {
			j.promptTokens += 3 + countTokens(c.Function.Name) + countTokens(c.Function.Arguments)
		}
		if m.Role == "user" {
			last = text
			// Everything before the latest user turn is a prefix a cache would hold.
			if i > 0 {
				j.cachedTokens = j.promptTokens - 4 - countTokens(text)
			}
		}
	}
	j.promptTokens += 3
	j.cachedTokens = j.cachedTokens / 128 * 128
	if r.PromptCacheKey == nil && len(r.Messages) < 3 {
		j.cachedTokens = 0
	}
	j.prompts = []string{last}
	lastMsg := r.Messages[len(r.Messages)-1]
	j.lastRole = lastMsg.Role
	if lastMsg.Role == "tool" {
		j.toolResult = contentText(lastMsg.Content)
	}
	if rf := r.ResponseFormat; rf != nil {
		switch rf.Type {
		case "text":
		case "json_object":
			j.jsonMode = rf.Type
		case "json_schema":
			if rf.JSONSchema == nil {
				return badValue("response_format", "response_format json_schema requires json_schema")
			}
			j.jsonMode = rf.Type
			raw := rf.JSONSchema.Schema
			if len(raw) == 0 || string(raw) == "null" {
				raw = json.RawMessage(`{"type":"object"}`)
			}
			// Decoded first: it refuses a schema nested too deep for the
			// compiler and the generator to walk.
			schema, err := ordered.Decode(raw)
			if err != nil {
				return badValue("response_format", "invalid JSON schema in response_format: %v", err)
			}
			sch, err := compileSchema(raw)
			if err != nil {
				return badValue("response_format", "invalid JSON schema in response_format: %v", err)
			}
			j.compiled, j.schema = sch, schema
			j.promptTokens += countTokens(string(raw))
		default:
			return badValue("response_format", "unknown response_format type %q", rf.Type)
		}
	}
	for i, t := range r.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return badValue("tools", "tools[%d] must be a function with a name", i)
		}
		raw := t.Function.Parameters
		if len(raw) == 0 || string(raw) == "null" {
			raw = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		// Decoded first: it refuses a schema nested too deep for the
		// compiler and the generator to walk.
		params, err := ordered.Decode(raw)
		if err != nil {
			return badValue("tools", "invalid parameters schema for tool %s: %v", t.Function.Name, err)
		}
		sch, err := compileSchema(raw)
		if err != nil {
			return badValue("tools", "invalid parameters schema for tool %s: %v", t.Function.Name, err)
		}
		j.tools = append(j.tools, jobTool{name: t.Function.Name, params: params, compiled: sch})
		j.promptTokens += 8 + countTokens(t.Function.Name) + countTokens(string(raw))
		if t.Function.Description != nil {
			j.promptTokens += countTokens(*t.Function.Description)
		}
	}
	j.parallel = r.ParallelToolCalls == nil || *r.ParallelToolCalls
	j.toolChoice = "auto"
	if len(r.ToolChoice) > 0 && string(r.ToolChoice) != "null" {
		var mode string
		var named struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		switch {
		case json.Unmarshal(r.ToolChoice, &mode) == nil:
			if !slices.Contains([]string{"none", "auto", "required"}, mode) {
				return badValue("tool_choice", "tool_choice must be none, auto, required or a function, got %q", mode)
			}
			j.toolChoice = mode
		case json.Unmarshal(r.ToolChoice, &named) == nil && named.Function.Name != "":
			i := slices.IndexFunc(j.tools, func(t jobTool) bool { return t.name == named.Function.Name })
			if i < 0 {
				return badValue("tool_choice", "tool_choice names function %q, which is not in tools", named.Function.Name)
			}
			j.toolChoice, j.forced = "named", []int{i}
		default:
			return badValue("tool_choice", "tool_choice must be none, auto, required or a function")
		}
	}
	if j.toolChoice == "required" && len(j.tools) == 0 {
		return badValue("tool_choice", "tool_choice required needs at least one tool")
	}
	return nil
}

var askToolRE = regexp.MustCompile(`\b(call|calls|calling|invoke|tool|tools)\b|\buse (a|the|your) function\b`)

// toolsToCall decides which tools the model calls, by index: forced
// choices always; with "auto", only when the last user message names a
// tool or asks for one.
func (j *job) toolsToCall() []int {
	if len(j.tools) == 0 || j.toolChoice == "none" {
		return nil
	}
	if j.forced != nil {
		return j.forced
	}
	text := strings.ToLower(j.prompts[0])
	var named []int
	for i, t := range j.tools {
		n := strings.ToLower(t.name)
		if strings.Contains(text, n) || strings.Contains(text, strings.NewReplacer("_", " ", "-", " ").Replace(n)) {
			named = append(named, i)
		}
	}
	asks := j.lastRole == "user" && (len(named) > 0 || askToolRE.MatchString(text))
	switch {
	case j.toolChoice == "auto" && !asks:
		return nil
	case len(named) == 0:
		return []int{0}
	case !j.parallel:
		return named[:1]
	}
	return named
}

// choice is everything one choice will say, before it is streamed.
type choice struct {
	index     int
	echo      string  // completions with echo: the prompt, sent first
	reasoning []token // sent as delta.reasoning (parsed formats)
	hidden    int     // reasoning tokens generated but not sent
	content   []token // content or text; with raw reasoning, <think> included
	calls     []call
	finish    string
	failAt    int // after this many tokens the stream fails; 0 never
	reasoned  int // reasoning tokens, in whatever form they went
}

type call struct {
	id, name  string
	fragments []string // the arguments JSON, as streamed
	tokens    int
}

func (c *choice) completionTokens() int {
	n := len(c.reasoning) + c.hidden + len(c.content)
	for _, k := range c.calls {
		n += k.tokens
	}
	return n
}

// choices generates every choice of the job: n per prompt.
func (j *job) choices() []*choice {
	out := make([]*choice, 0, j.n*len(j.prompts))
	for p, prompt := range j.prompts {
		for i := range j.n {
			out = append(out, j.generate(len(out), p, prompt, i))
		}
	}
	return out
}

// effortTokens is the range of reasoning lengths per reasoning_effort.
var effortTokens = map[string][2]int{"low": {25, 50}, "medium": {90, 160}, "high": {260, 420}}

// generate writes one choice. Separate random streams for reasoning,
// answer and tools keep each part stable when the others change: raising
// reasoning_effort lengthens the reasoning, not the answer.
func (j *job) generate(index, promptIndex int, prompt string, sample int) *choice {
	stream := func(part uint64) *sampler {
		key := j.contentHash ^ uint64(promptIndex)<<32 ^ uint64(sample)<<48 ^ part*0x9e3779b97f4a7c15
		return &sampler{rng: rand.New(rand.NewPCG(j.seed, key)), temp: j.temp, topP: j.topP}
	}
	read := readPrompt(prompt)
	if j.lastRole == "tool" {
		read = readPrompt(prompt + "\n" + j.toolResult)
	}
	c := &choice{index: index, finish: "stop"}
	if j.echo {
		c.echo = prompt
	}

	var reasoning []token
	if r, ok := effortTokens[j.effort]; ok {
		s := stream(1)
		reasoning = newWriter(s, read).reasoning(s.between(r[0], r[1]))
	}
	var calls []call
	var content []token
	var cut bool // the JSON was cut short to fit max_tokens as it was built
	if idx := j.toolsToCall(); idx != nil {
		calls, cut = j.toolCalls(stream(3), read, idx)
	} else {
		content, cut = j.answer(stream(2), read)
	}

	limit := j.limit
	c.reasoned = min(len(reasoning), limit)
	switch j.format {
	case "raw":
		if len(reasoning) > 0 {
			tagged := []token{plainToken("<think>", 0)}
			tagged = append(tagged, reasoning...)
			tagged = append(tagged, plainToken("</think>", len(tagged)), plainToken("\n\n", len(tagged)+1))
			content = append(tagged, content...)
			c.reasoned = min(len(reasoning)+2, limit)
		}
	case "hidden":
		c.hidden = c.reasoned
	default:
		c.reasoning = reasoning[:c.reasoned]
	}
	limit -= len(c.reasoning) + c.hidden
	if len(reasoning) > c.reasoned {
		c.finish = "length"
	}
	if len(content) > limit || cut && len(calls) == 0 {
		content, c.finish = content[:min(limit, len(content))], "length"
	}
	c.content, c.finish = cutAtStop(content, j.stop, c.finish)
	if len(calls) > 0 && c.finish != "length" {
		c.calls, c.finish = fitCalls(calls, limit)
		if cut {
			c.finish = "length"
		}
	}
	if j.prof.failAfter > 0 {
		c.failAt = j.prof.failAfter + stream(4).rng.IntN(j.prof.failAfter)
	}
	return c
}

// answer writes the content of a choice: prose, or JSON when a
// response_format asks for it; cut says the JSON was cut short to fit
// max_tokens.
func (j *job) answer(s *sampler, read topics) (toks []token, cut bool) {
	switch j.jsonMode {
	case "json_schema":
		v, cut := j.validInstance(s, read, j.schema, j.compiled)
		return jsonTokens(v), cut
	case "json_object":
		w := newWriter(s, read)
		o := ordered.NewObject()
		o.Set("note", "Generated by the Knobs simulator, not a real model.")
		o.Set("topic", read.topic)
		kw := make([]any, 0, 3)
		for _, k := range read.keywords[:min(3, len(read.keywords))] {
			kw = append(kw, k)
		}
		o.Set("keywords", kw)
		w.from("body", bodySentences, "")
		o.Set("summary", joinTokens(w.out.toks))
		return jsonTokens(o), false
	}
	opener, lead := openers, ""
	switch {
	case j.endpoint == llm.EndpointCompletion:
		opener = completionOpeners
		// A continuation starts after the prompt's last character.
		if p := j.prompts[0]; p != "" && !strings.HasSuffix(p, " ") && !strings.HasSuffix(p, "\n") {
			lead = " "
		}
	case j.lastRole == "tool":
		opener = toolOpeners
	}
	return newWriter(s, read).answer(s.between(j.prof.minLen, j.prof.maxLen), j.minTokens, lead, opener), false
}

// validInstance generates values for a schema until one validates; the
// generator covers the common keywords, and a few tries settle the rest
// (oneOf exclusivity, uniqueness). A value cut short to fit max_tokens
// is returned at once with cut true: trying again would only cut again.
func (j *job) validInstance(s *sampler, read topics, schema any, compiled *jsonschema.Schema) (v any, cut bool) {
	for range 8 {
		g := newInstance(s, schema, read.keywords, j.limit)
		v = g.value(schema, 0, "")
		if g.cut {
			return v, true
		}
		b, _ := json.Marshal(v)
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		if err == nil && compiled.Validate(doc) == nil {
			return v, false
		}
	}
	return v, false
}

// toolCalls writes the calls of tools idx; cut says an argument object was
// cut short to fit max_tokens.
func (j *job) toolCalls(s *sampler, read topics, idx []int) (calls []call, cut bool) {
	calls = make([]call, 0, len(idx))
	for _, i := range idx {
		t := j.tools[i]
		v, short := j.validInstance(s, read, t.params, t.compiled)
		cut = cut || short
		args, _ := json.Marshal(v)
		toks := tokenize(string(args))
		parts := min(len(toks), s.between(3, 5))
		c := call{id: "call_" + hex(s.rng, 24), name: t.name, tokens: countTokens(t.name) + len(toks) + 3}
		for p := range parts {
			from, to := p*len(toks)/parts, (p+1)*len(toks)/parts
			c.fragments = append(c.fragments, strings.Join(toks[from:to], ""))
		}
		calls = append(calls, c)
	}
	return calls, cut
}

// fitCalls keeps the tool calls that fit in limit tokens; a call cut
// short keeps the fragments that fit and the choice ends on "length".
func fitCalls(calls []call, limit int) ([]call, string) {
	var out []call
	for _, c := range calls {
		if c.tokens <= limit {
			out = append(out, c)
			limit -= c.tokens
			continue
		}
		cut := c
		cut.fragments = nil
		per := max(1, c.tokens/max(1, len(c.fragments)))
		for _, f := range c.fragments {
			if limit < per {
				break
			}
			cut.fragments = append(cut.fragments, f)
			limit -= per
		}
		cut.tokens = c.tokens - (len(c.fragments)-len(cut.fragments))*per
		return append(out, cut), "length"
	}
	return out, "tool_calls"
}

// cutAtStop ends toks before the first stop sequence; the stop text itself
// is not returned.
func cutAtStop(toks []token, stops []string, finish string) ([]token, string) {
	if len(stops) == 0 {
		return toks, finish
	}
	text := joinTokens(toks)
	at := -1
	for _, s := range stops {
		if i := strings.Index(text, s); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return toks, finish
	}
	pos := 0
	for i, t := range toks {
		if pos+len(t.text) > at {
			if keep := t.text[:at-pos]; keep != "" && utf8.ValidString(keep) {
				t.text = keep
				return append(toks[:i:i], t), "stop"
			}
			return toks[:i], "stop"
		}
		pos += len(t.text)
	}
	return toks, "stop"
}

// jsonTokens writes v as indented JSON, the way models answer in JSON mode.
func jsonTokens(v any) []token {
	b, _ := json.MarshalIndent(v, "", "  ")
	var w tokenWriter
	w.plain(string(b))
	return w.toks
}

func joinTokens(toks []token) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteString(t.text)
	}
	return b.String()
}

func hex(r *rand.Rand, n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(16)]
	}
	return string(b)
}
