package handlers

import (
	"context"
	"errors"
)

// ProviderItem is a provider the caller can run against, with its
// models; never a key.
type ProviderItem struct {
	ID     string      `json:"id"`
	Name   string      `json:"name"`
	Models []ModelItem `json:"models" nullable:"false"`
	Note   string      `json:"note,omitempty" doc:"Why the list is Knobs' built-in one rather than the provider's own, when it is."`
}

// ModelItem is one model and what it can do.
type ModelItem struct {
	ID               string   `json:"id"`
	ContextWindow    int      `json:"context_window,omitempty" doc:"Tokens of context; absent when unknown."`
	MaxOutput        int      `json:"max_output,omitempty" doc:"Most tokens of output; absent when unknown."`
	InputPrice       float64  `json:"input_price,omitempty" doc:"USD per million input tokens; absent when unknown."`
	OutputPrice      float64  `json:"output_price,omitempty" doc:"USD per million output tokens; absent when unknown."`
	CachedPrice      float64  `json:"cached_input_price,omitempty" doc:"USD per million cached input tokens; absent when unknown."`
	ReasoningPrice   float64  `json:"reasoning_price,omitempty" doc:"USD per million reasoning tokens, where the price list gives one; absent: they cost as output tokens."`
	Reasoning        bool     `json:"reasoning" doc:"It reasons before answering."`
	ReasoningEfforts []string `json:"reasoning_efforts,omitempty" doc:"The reasoning_effort values it takes."`
	Tools            bool     `json:"tools" doc:"It takes function tools (false also when unknown)."`
	JSONSchema       bool     `json:"json_schema" doc:"It takes response_format json_schema (false also when unknown)."`
}

// ListProvidersOutput is the answer to GET /api/v1/providers.
type ListProvidersOutput struct {
	Body struct {
		Providers []ProviderItem `json:"providers" nullable:"false"`
	}
}

// ListAPIProviders lists the providers the caller has a key for (or that
// need none) and their models.
func (h *Handler) ListAPIProviders(ctx context.Context, _ *struct{}) (*ListProvidersOutput, error) {
	u := apiUser(ctx)
	all, err := h.providerList(ctx)
	if err != nil {
		return nil, err
	}
	out := &ListProvidersOutput{}
	out.Body.Providers = []ProviderItem{}
	for _, p := range all {
		if _, err := h.resolveKey(ctx, u.ID, p); errors.Is(err, errNoKey) {
			continue
		}
		models, note := h.providerModels(ctx, u.ID, p)
		item := ProviderItem{ID: p.ID, Name: p.Name, Note: note, Models: make([]ModelItem, 0, len(models))}
		for _, m := range models {
			item.Models = append(item.Models, ModelItem{ID: m.ID, ContextWindow: m.ContextLength, MaxOutput: m.MaxOutput,
				InputPrice: m.PromptPrice, OutputPrice: m.CompletionPrice, CachedPrice: m.CachedPrice, ReasoningPrice: m.ReasoningPrice,
				Reasoning: m.Reasoning, ReasoningEfforts: m.ReasoningEfforts, Tools: m.Tools, JSONSchema: m.JSONSchema})
		}
		out.Body.Providers = append(out.Body.Providers, item)
	}
	return out, nil
}
