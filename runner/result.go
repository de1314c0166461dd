package runner

import (
	"cmp"

	"knobs/llm"
)

// Result is what a run produced, as stored in the runs table and sent in
// the final SSE event. It is kept whole whatever way the run ended.
type Result struct {
	Choices []Choice `json:"choices"`
	// Response is how the provider labelled its answer: id, model,
	// fingerprint, service tier, created.
	Response *llm.Response `json:"response,omitempty"`
	Usage    *llm.Usage    `json:"usage,omitempty"`
	TimeInfo *llm.TimeInfo `json:"time_info,omitempty"`
	Metrics  Metrics       `json:"metrics"`
	Error    *llm.Error    `json:"error,omitempty"`
	// Price is what the run's tokens were priced at when it ran (USD per
	// million), kept with it so that a later price change leaves its
	// cost as it was; nil when the model had no price.
	Price *Price `json:"price,omitempty"`
}

// Price is the price in force for a run's model, USD per million tokens.
type Price struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CachedInput float64 `json:"cached_input"`
	Reasoning   float64 `json:"reasoning"`
}

// PriceOf is m's price as a run keeps it; nil when m has none. A cached
// or reasoning price a listing does not give is the input or output
// price.
func PriceOf(m llm.Model) *Price {
	if !m.Priced() {
		return nil
	}
	if m.PriceSource == llm.PriceAdmin {
		// An admin's prices are whole: a zero is free, not unknown.
		return &Price{Input: m.PromptPrice, Output: m.CompletionPrice, CachedInput: m.CachedPrice, Reasoning: m.ReasoningPrice}
	}
	return &Price{Input: m.PromptPrice, Output: m.CompletionPrice,
		CachedInput: cmp.Or(m.CachedPrice, m.PromptPrice), Reasoning: cmp.Or(m.ReasoningPrice, m.CompletionPrice)}
}

// Choice is one of the n answers of a run.
type Choice struct {
	Index        int                `json:"index"`
	Content      string             `json:"content"`
	Reasoning    string             `json:"reasoning,omitempty"`
	ToolCalls    []llm.ToolCall     `json:"tool_calls,omitempty"`
	Logprobs     []llm.TokenLogprob `json:"logprobs,omitempty"`
	FinishReason string             `json:"finish_reason,omitempty"`
	// Tokens are the raw token ids, when the user asked for them
	// (return_raw_tokens).
	Tokens []int `json:"tokens,omitempty"`
}

// Metrics are Knobs' own measurements of a run, seen from the server.
type Metrics struct {
	// TTFTMs is from the start of the run to the first token of any kind.
	TTFTMs float64 `json:"ttft_ms"`
	// TotalMs is from the start of the run to its end (or now, while live).
	TotalMs float64 `json:"total_ms"`
	// Tokens counts output tokens: the provider's usage when it gave one,
	// else the chunks received, which providers send one token at a time.
	Tokens int `json:"tokens"`
	// TokensPerSec is Tokens over the time from the first token to the last.
	TokensPerSec float64 `json:"tokens_per_sec"`
	// CostUSD is the provider's own figure, else usage times known prices;
	// zero when neither is known.
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// choice returns the choice with index i, growing the list as needed.
func (r *Result) choice(i int) *Choice {
	if i < 0 {
		i = 0
	}
	for len(r.Choices) <= i {
		r.Choices = append(r.Choices, Choice{Index: len(r.Choices)})
	}
	return &r.Choices[i]
}

// The data of the SSE events of what fold takes.
type tokensData struct {
	Choice int   `json:"choice"`
	Tokens []int `json:"tokens"`
}

// fold keeps what an event the relay has no case of its own for adds to
// the result, and returns the SSE event to send for it; ok is false for
// an event that adds nothing. Keeping these here keeps the relay's switch
// to the events of every token.
func (r *Result) fold(ev llm.Event) (event string, data any, ok bool) {
	switch ev.Kind {
	case llm.EventResponse:
		if ev.Response == nil {
			return "", nil, false
		}
		r.Response = ev.Response
		return "response", ev.Response, true
	case llm.EventTokens:
		ch := r.choice(ev.Choice)
		ch.Tokens = append(ch.Tokens, ev.Tokens...)
		return "tokens", tokensData{ev.Choice, ev.Tokens}, true
	}
	return "", nil, false
}

// setToolCall keeps the latest state of call c of choice ch.
func (ch *Choice) setToolCall(c llm.ToolCall) {
	for i := range ch.ToolCalls {
		if ch.ToolCalls[i].Index == c.Index {
			ch.ToolCalls[i] = c
			return
		}
	}
	ch.ToolCalls = append(ch.ToolCalls, c)
}

// cost is the provider's figure, else usage times p: uncached input,
// cached input, output other than reasoning, reasoning. Reasoning tokens
// are counted once, whichever way the provider reports them.
func cost(u *llm.Usage, p *Price) float64 {
	if u == nil {
		return 0
	}
	if u.CostUSD > 0 {
		return u.CostUSD
	}
	if p == nil {
		return 0
	}
	cached := min(u.CachedTokens, u.PromptTokens)
	out := u.OutputTokens()
	reasoning := min(u.ReasoningTokens, out)
	return (float64(u.PromptTokens-cached)*p.Input + float64(cached)*p.CachedInput +
		float64(out-reasoning)*p.Output + float64(reasoning)*p.Reasoning) / 1e6
}
