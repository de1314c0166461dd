package runner

import (
	"math"
	"testing"

	"knobs/llm"
)

// A run's cost counts each token once at its price: cached input at the
// cached price, reasoning at the reasoning price whether the provider
// counts it in the completion (most) or apart (xAI), and the provider's
// own figure when it gives one. A listing without cached or reasoning
// prices charges them as input and output; an admin's zero is free.
func TestCostPricesEveryTokenOnce(t *testing.T) {
	listed := PriceOf(llm.Model{PromptPrice: 2, CompletionPrice: 10})
	admin := PriceOf(llm.Model{PromptPrice: 2, CompletionPrice: 10, CachedPrice: 0, ReasoningPrice: 30, PriceSource: llm.PriceAdmin})
	for _, tt := range []struct {
		what  string
		usage *llm.Usage
		price *Price
		want  float64
	}{
		{"no usage", nil, listed, 0},
		{"no price", &llm.Usage{PromptTokens: 1e6, CompletionTokens: 1e6}, nil, 0},
		{"the provider's own figure", &llm.Usage{PromptTokens: 1e6, CostUSD: 0.42}, listed, 0.42},
		{"a listing: cached as input, reasoning as output", &llm.Usage{PromptTokens: 1e6, CachedTokens: 5e5, CompletionTokens: 1e6, ReasoningTokens: 4e5}, listed, 2 + 10},
		{"an admin's: cached free, reasoning inside the completion", &llm.Usage{PromptTokens: 1e6, CachedTokens: 5e5, CompletionTokens: 1e6, ReasoningTokens: 4e5}, admin, 1 + 6 + 12},
		{"an admin's: reasoning apart (xAI)", &llm.Usage{PromptTokens: 1e6, CompletionTokens: 6e5, ReasoningTokens: 4e5, ReasoningApart: true}, admin, 2 + 6 + 12},
	} {
		if got := cost(tt.usage, tt.price); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: $%g, want $%g", tt.what, got, tt.want)
		}
	}
	if p := PriceOf(llm.Model{}); p != nil {
		t.Errorf("a model without prices has price %+v", p)
	}
	if p := PriceOf(llm.Model{PriceSource: llm.PriceAdmin}); p == nil || *p != (Price{}) {
		t.Errorf("an admin's free model has price %+v", p)
	}
}
