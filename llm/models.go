package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// How long a model list is kept: providers change their lists rarely, and
// a failure is retried sooner so that a network blip does not stick.
const (
	modelsTTL        = 10 * time.Minute
	modelsFailTTL    = 30 * time.Second
	modelsReqTimeout = 15 * time.Second
	maxModelsBody    = 8 << 20
)

// PriceListing is the PriceSource of prices the provider's own model
// listing gave (Cerebras' OpenRouter-format list, xAI's language-models),
// as against Knobs' built-in figures.
const PriceListing = "listing"

// markListed marks m as priced by the provider's listing when it is.
func markListed(m *Model) {
	if m.PromptPrice > 0 || m.CompletionPrice > 0 {
		m.PriceSource = PriceListing
	}
}

type modelCache struct {
	list    []Model
	err     error
	expires time.Time
}

// Models lists the provider's models: GET /v1/models, enriched on Cerebras
// with the OpenRouter-format list (context length, output limit, prices,
// reasoning's among them)
// and on xAI with /v1/language-models (prices), and with the capabilities
// KnownModels records. The answer is cached for ten minutes. Without a key
// (where the provider needs one) or when the provider cannot be asked, it
// returns KnownModels marked Source "fallback", with the error, if any,
// for the log.
func (c *Client) Models(ctx context.Context) ([]Model, error) {
	c.modelsMu.Lock()
	defer c.modelsMu.Unlock()
	if c.models.list != nil && time.Now().Before(c.models.expires) {
		return slices.Clone(c.models.list), c.models.err
	}
	list, err := c.fetchModels(ctx)
	if err != nil {
		list = c.fallbackModels()
		if ctx.Err() != nil {
			return list, err // the caller gave up; not the provider's state
		}
		c.models = modelCache{list: list, err: err, expires: time.Now().Add(modelsFailTTL)}
		return slices.Clone(list), err
	}
	c.models = modelCache{list: list, expires: time.Now().Add(modelsTTL)}
	return slices.Clone(list), nil
}

func (c *Client) fallbackModels() []Model {
	known := KnownModels(c.cfg.Dialect)
	out := make([]Model, len(known))
	for i, m := range known {
		m.Source = "fallback"
		out[i] = m
	}
	return out
}

func (c *Client) fetchModels(ctx context.Context) ([]Model, error) {
	if c.dialect.needsKey && c.cfg.Key == "" {
		return c.fallbackModels(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, modelsReqTimeout)
	defer cancel()

	var list struct {
		Data []struct {
			ID            string `json:"id"`
			OwnedBy       string `json:"owned_by"`
			ContextLength int    `json:"context_length"`
			MaxModelLen   int    `json:"max_model_len"` // vLLM
		} `json:"data"`
	}
	if err := c.getJSON(ctx, "/v1/models", &list); err != nil {
		return nil, fmt.Errorf("llm: list models of %s: %w", c.cfg.ID, err)
	}
	if len(list.Data) == 0 {
		return nil, fmt.Errorf("llm: list models of %s: the provider listed none", c.cfg.ID)
	}
	models := make([]Model, 0, len(list.Data))
	byID := make(map[string]int, len(list.Data))
	for _, d := range list.Data {
		if d.ID == "" {
			continue
		}
		byID[d.ID] = len(models)
		models = append(models, Model{ID: d.ID, OwnedBy: d.OwnedBy, ContextLength: cmp.Or(d.ContextLength, d.MaxModelLen), Source: "api"})
	}
	// The second lists only add detail: when they fail the plain list
	// still stands.
	switch c.cfg.Dialect {
	case DialectCerebras:
		c.addOpenRouterDetails(ctx, models, byID)
	case DialectXAI:
		c.addXAIPrices(ctx, models, byID)
	}
	for i := range models {
		if k, ok := LookupModel(c.cfg.Dialect, models[i].ID); ok {
			mergeKnown(&models[i], k)
		}
	}
	slices.SortFunc(models, func(a, b Model) int { return cmp.Compare(a.ID, b.ID) })
	return models, nil
}

// mergeKnown adds what the registry knows that the API did not say.
func mergeKnown(m *Model, k Model) {
	m.Reasoning = m.Reasoning || k.Reasoning
	m.Tools = m.Tools || k.Tools
	m.JSONSchema = m.JSONSchema || k.JSONSchema
	if m.ReasoningEfforts == nil {
		m.ReasoningEfforts = k.ReasoningEfforts
	}
	m.ContextLength = cmp.Or(m.ContextLength, k.ContextLength)
	m.MaxOutput = cmp.Or(m.MaxOutput, k.MaxOutput)
	m.PromptPrice = cmp.Or(m.PromptPrice, k.PromptPrice)
	m.CompletionPrice = cmp.Or(m.CompletionPrice, k.CompletionPrice)
	m.CachedPrice = cmp.Or(m.CachedPrice, k.CachedPrice)
	m.ReasoningPrice = cmp.Or(m.ReasoningPrice, k.ReasoningPrice)
	m.OwnedBy = cmp.Or(m.OwnedBy, k.OwnedBy)
}

// addOpenRouterDetails reads Cerebras' ?format=openrouter list, whose
// prices are USD per token as strings.
func (c *Client) addOpenRouterDetails(ctx context.Context, models []Model, byID map[string]int) {
	var list struct {
		Data []struct {
			ID              string          `json:"id"`
			ContextLength   int             `json:"context_length"`
			MaxOutputLength int             `json:"max_output_length"`
			TopProvider     json.RawMessage `json:"top_provider"`
			Pricing         struct {
				Prompt         json.RawMessage `json:"prompt"`
				Completion     json.RawMessage `json:"completion"`
				InputCacheRead json.RawMessage `json:"input_cache_read"`
				// InternalReasoning is the price of reasoning tokens,
				// where it differs from the completion price.
				InternalReasoning json.RawMessage `json:"internal_reasoning"`
			} `json:"pricing"`
		} `json:"data"`
	}
	if c.getJSON(ctx, "/v1/models?format=openrouter", &list) != nil {
		return
	}
	for _, d := range list.Data {
		i, ok := byID[d.ID]
		if !ok {
			continue
		}
		m := &models[i]
		m.ContextLength = cmp.Or(d.ContextLength, m.ContextLength)
		m.MaxOutput = cmp.Or(d.MaxOutputLength, m.MaxOutput)
		if m.MaxOutput == 0 && len(d.TopProvider) > 0 {
			var tp struct {
				MaxCompletionTokens int `json:"max_completion_tokens"`
			}
			if json.Unmarshal(d.TopProvider, &tp) == nil {
				m.MaxOutput = tp.MaxCompletionTokens
			}
		}
		m.PromptPrice = cmp.Or(perTokenToPerMillion(d.Pricing.Prompt), m.PromptPrice)
		m.CompletionPrice = cmp.Or(perTokenToPerMillion(d.Pricing.Completion), m.CompletionPrice)
		m.CachedPrice = cmp.Or(perTokenToPerMillion(d.Pricing.InputCacheRead), m.CachedPrice)
		m.ReasoningPrice = cmp.Or(perTokenToPerMillion(d.Pricing.InternalReasoning), m.ReasoningPrice)
		markListed(m)
	}
}

func perTokenToPerMillion(raw json.RawMessage) float64 {
	f, err := strconv.ParseFloat(rawText(raw), 64)
	if err != nil || f < 0 {
		return 0
	}
	return f * 1e6
}

// addXAIPrices reads xAI's /v1/language-models, whose prices are USD cents
// per 100 million tokens: dividing by 10,000 gives USD per million. It
// gives no reasoning price: xAI bills reasoning tokens as completion
// tokens, which is what a zero ReasoningPrice means.
func (c *Client) addXAIPrices(ctx context.Context, models []Model, byID map[string]int) {
	var list struct {
		Models []struct {
			ID                    string   `json:"id"`
			Aliases               []string `json:"aliases"`
			PromptPrice           float64  `json:"prompt_text_token_price"`
			CachedPromptPrice     float64  `json:"cached_prompt_text_token_price"`
			CompletionPrice       float64  `json:"completion_text_token_price"`
			MaxPromptLength       int      `json:"max_prompt_length"`
			MaxCompletionTokens   int      `json:"max_completion_tokens"`
			ContextLengthFallback int      `json:"context_length"`
		} `json:"models"`
	}
	if c.getJSON(ctx, "/v1/language-models", &list) != nil {
		return
	}
	for _, d := range list.Models {
		for _, id := range append([]string{d.ID}, d.Aliases...) {
			i, ok := byID[id]
			if !ok {
				continue
			}
			m := &models[i]
			m.PromptPrice = cmp.Or(d.PromptPrice/1e4, m.PromptPrice)
			m.CachedPrice = cmp.Or(d.CachedPromptPrice/1e4, m.CachedPrice)
			m.CompletionPrice = cmp.Or(d.CompletionPrice/1e4, m.CompletionPrice)
			markListed(m)
			m.ContextLength = cmp.Or(m.ContextLength, d.MaxPromptLength, d.ContextLengthFallback)
			m.MaxOutput = cmp.Or(m.MaxOutput, d.MaxCompletionTokens)
		}
	}
}

// getJSON GETs path below the base URL and decodes a JSON answer into v;
// a failure comes back as a classified *Error.
func (c *Client) getJSON(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	c.setHeaders(req.Header)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return transportError(err, ctx, false, false, 0, false)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return redirectError(resp.StatusCode, resp.Header)
	}
	b, err := readCapped(resp.Body, maxModelsBody)
	if err != nil {
		return transportError(err, ctx, false, false, 0, true)
	}
	if resp.StatusCode != http.StatusOK {
		e := classifyResponse(resp.StatusCode, resp.Header, b, time.Now())
		redactError(e, c.cfg.Key)
		return e
	}
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return &Error{Kind: ErrBadResponse, Status: resp.StatusCode, Message: "the model list is not JSON: " + truncate(string(b), 200)}
		}
	}
	return nil
}
