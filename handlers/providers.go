package handlers

import (
	"context"
	"crypto/sha256"
	"errors"
	"strconv"
	"sync"
	"time"

	"knobs/db"
	"knobs/llm"
)

// Provider is one provider a user can run against.
type Provider struct {
	ID      string
	Name    string
	Dialect llm.Dialect
	BaseURL string
	envKey  string
	keyless bool // the simulator needs no key
}

// providerList lists the providers a user can pick: the simulator first,
// then Cerebras, xAI and the team's custom ones.
func (h *Handler) providerList(ctx context.Context) ([]Provider, error) {
	list := []Provider{
		{ID: "sim", Name: "Simulator (offline)", Dialect: llm.DialectSim, keyless: true},
		{ID: "cerebras", Name: "Cerebras", Dialect: llm.DialectCerebras, BaseURL: h.cfg.CerebrasBaseURL, envKey: h.cfg.CerebrasKey},
		{ID: "xai", Name: "xAI", Dialect: llm.DialectXAI, BaseURL: h.cfg.XAIBaseURL, envKey: h.cfg.XAIKey},
	}
	custom, err := h.store.CustomProviders(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range custom {
		// Local servers such as Ollama take no key: a custom provider
		// without one is tried as it is.
		list = append(list, Provider{ID: p.ID, Name: p.Name, Dialect: llm.DialectOpenAI, BaseURL: p.BaseURL})
	}
	return list, nil
}

// errNoProvider is returned for a provider id that does not exist.
var errNoProvider = errors.New("handlers: no such provider")

// findProvider looks a provider up by id.
func (h *Handler) findProvider(ctx context.Context, id string) (Provider, error) {
	list, err := h.providerList(ctx)
	if err != nil {
		return Provider{}, err
	}
	if p, ok := providerByID(list, id); ok {
		return p, nil
	}
	return Provider{}, errNoProvider
}

func providerByID(list []Provider, id string) (Provider, bool) {
	for _, p := range list {
		if p.ID == id {
			return p, true
		}
	}
	return Provider{}, false
}

// errNoKey is returned when a provider that needs a key has none at any level.
var errNoKey = errors.New("handlers: no API key")

// resolveKey picks the key for user on p: their own, else the team's,
// else the environment's.
func (h *Handler) resolveKey(ctx context.Context, user int64, p Provider) (string, error) {
	if p.keyless {
		return "", nil
	}
	k, err := h.store.EffectiveKey(ctx, user, p.ID)
	switch {
	case err == nil:
		return h.box.Open(k.Sealed, keyAssociation(k.UserID, p.ID))
	case !errors.Is(err, db.ErrNotFound):
		return "", err
	case p.envKey != "":
		return p.envKey, nil
	case p.Dialect == llm.DialectOpenAI:
		return "", nil
	}
	return "", errNoKey
}

// clients keeps one llm.Client per provider, so that model lists stay
// cached and connections are reused. A client is replaced when the key or
// address it was built with changes; the old one's idle connections are
// closed, and it keeps no reference to the old key once its runs end.
type clients struct {
	mu  sync.Mutex
	all map[string]clientEntry // by provider id and user: keys differ per user
	sim *llm.Client
	// kept holds the listed prices this Knobs last kept in the database,
	// by provider id and model id, so that a listing read again with the
	// same prices writes nothing.
	kept map[[2]string]llm.Model
	// named holds the ids the providers' own lists named, by provider id,
	// at most maxNamedModels each: a model a list named is one the
	// provider serves, which the metrics count under its own name.
	named map[string]map[string]struct{}
}

// rememberNamed keeps the ids p's own model list names, for the
// metrics' labels.
func (h *Handler) rememberNamed(p Provider, models []llm.Model) {
	h.clients.mu.Lock()
	defer h.clients.mu.Unlock()
	if h.clients.named == nil {
		h.clients.named = map[string]map[string]struct{}{}
	}
	named := h.clients.named[p.ID]
	if named == nil {
		named = map[string]struct{}{}
		h.clients.named[p.ID] = named
	}
	for _, m := range models {
		if m.Source == "api" && len(named) < maxNamedModels {
			named[m.ID] = struct{}{}
		}
	}
}

// maxNamedModels bounds the model ids kept of one provider's lists; an
// aggregator lists a few hundred.
const maxNamedModels = 5000

type clientEntry struct {
	client  *llm.Client
	baseURL string
	keySum  [32]byte
}

// client returns the client user runs p with.
func (h *Handler) client(ctx context.Context, user int64, p Provider) (*llm.Client, error) {
	if p.Dialect == llm.DialectSim {
		h.clients.mu.Lock()
		defer h.clients.mu.Unlock()
		if h.clients.sim == nil {
			h.clients.sim = llm.NewClient(h.simConfig)
		}
		return h.clients.sim, nil
	}
	key, err := h.resolveKey(ctx, user, p)
	if err != nil {
		return nil, err
	}
	id := p.ID + "/" + strconv.FormatInt(user, 10)
	sum := sha256.Sum256([]byte(key))
	h.clients.mu.Lock()
	defer h.clients.mu.Unlock()
	if e, ok := h.clients.all[id]; ok {
		if e.baseURL == p.BaseURL && e.keySum == sum {
			return e.client, nil
		}
		e.client.CloseIdleConnections()
	}
	c := llm.NewClient(llm.ProviderConfig{ID: p.ID, Name: p.Name, Dialect: p.Dialect, BaseURL: p.BaseURL, Key: key, AllowLinkLocal: h.cfg.AllowLinkLocalUpstreams})
	if h.clients.all == nil {
		h.clients.all = map[string]clientEntry{}
	}
	h.clients.all[id] = clientEntry{client: c, baseURL: p.BaseURL, keySum: sum}
	return c, nil
}

// modelInfo returns what Knobs' built-in list knows of model id on p, for
// validation; pricedModel adds the price in force.
func modelInfo(p Provider, id string) llm.Model {
	if m, ok := llm.LookupModel(p.Dialect, id); ok {
		return m
	}
	return llm.Model{ID: id}
}

// pricedModel is modelInfo with the price in force for the model: an
// admin's when one is set, else the provider's own listing's as last
// read (kept in the database, so it holds after a restart), else Knobs'
// built-in list's. Runs, the playground's and experiments' estimates and
// arenas' budgets all price through it. Its Source is "api" when the
// provider's list named it, "fallback" when only Knobs' built-in list
// has it, and "" for a name neither knows.
func (h *Handler) pricedModel(ctx context.Context, p Provider, id string) (llm.Model, error) {
	m := modelInfo(p, id)
	h.clients.mu.Lock()
	_, named := h.clients.named[p.ID][id]
	h.clients.mu.Unlock()
	lp, err := h.store.ListedPrice(ctx, p.ID, id)
	switch {
	case err == nil:
		m = withListedPrice(m, lp)
	case !errors.Is(err, db.ErrNotFound):
		return m, err
	}
	if named {
		m.Source = "api"
	}
	mp, err := h.store.ModelPrice(ctx, p.ID, id)
	switch {
	case errors.Is(err, db.ErrNotFound):
		return m, nil
	case err != nil:
		return m, err
	}
	return withAdminPrice(m, mp), nil
}

// withAdminPrice is m at an admin's price.
func withAdminPrice(m llm.Model, mp db.ModelPrice) llm.Model {
	m.PromptPrice, m.CompletionPrice, m.CachedPrice, m.ReasoningPrice = mp.Input, mp.Output, mp.CachedInput, mp.Reasoning
	m.PriceSource = llm.PriceAdmin
	return m
}

// withListedPrice is m at the price its provider's listing last gave.
func withListedPrice(m llm.Model, lp db.ListedPrice) llm.Model {
	m.PromptPrice, m.CompletionPrice, m.CachedPrice, m.ReasoningPrice = lp.Input, lp.Output, lp.CachedInput, lp.Reasoning
	m.PriceSource = llm.PriceListing
	return m
}

// maxListedPrices bounds the prices kept from one reading of a listing:
// far more models than a provider lists, few enough for one transaction.
const maxListedPrices = 2000

// rememberListed keeps the prices of p's own model list in the database
// (with the time they were read), where they differ from what was kept
// last. An admin's price is kept apart and is never overwritten by it.
func (h *Handler) rememberListed(ctx context.Context, p Provider, models []llm.Model) {
	h.rememberNamed(p, models)
	var changed []db.ListedPrice
	var fresh []llm.Model
	h.clients.mu.Lock()
	for _, m := range models {
		if len(changed) == maxListedPrices {
			break
		}
		if m.PriceSource != llm.PriceListing {
			continue // priced by Knobs' built-in list, or not at all
		}
		if k, ok := h.clients.kept[[2]string{p.ID, m.ID}]; ok && k.PromptPrice == m.PromptPrice && k.CompletionPrice == m.CompletionPrice &&
			k.CachedPrice == m.CachedPrice && k.ReasoningPrice == m.ReasoningPrice {
			continue
		}
		changed = append(changed, db.ListedPrice{Provider: p.ID, Model: m.ID, Input: m.PromptPrice, Output: m.CompletionPrice,
			CachedInput: m.CachedPrice, Reasoning: m.ReasoningPrice, ReadAt: h.now()})
		fresh = append(fresh, m)
	}
	h.clients.mu.Unlock()
	if len(changed) == 0 {
		return
	}
	if err := h.store.KeepListedPrices(ctx, changed); err != nil {
		h.log.WarnContext(ctx, "keeping the prices of a provider's model list", "provider", p.ID, "err", err)
		return
	}
	h.clients.mu.Lock()
	defer h.clients.mu.Unlock()
	if h.clients.kept == nil {
		h.clients.kept = map[[2]string]llm.Model{}
	}
	for _, m := range fresh {
		h.clients.kept[[2]string{p.ID, m.ID}] = m
	}
}

// withPricesInForce sets the prices in force on p's models, in place: an
// admin's over all, and the listing's as last read on the models the
// listing did not price just now (Knobs' built-in list, shown when the
// provider does not answer, or a second list that failed).
func (h *Handler) withPricesInForce(ctx context.Context, p Provider, models []llm.Model) error {
	listed, err := h.store.ListedPrices(ctx)
	if err != nil {
		return err
	}
	prices, err := h.store.ModelPrices(ctx)
	if err != nil {
		return err
	}
	byID := make(map[string]int, len(models))
	for i, m := range models {
		byID[m.ID] = i
	}
	for _, lp := range listed {
		if i, ok := byID[lp.Model]; ok && lp.Provider == p.ID && models[i].PriceSource != llm.PriceListing {
			models[i] = withListedPrice(models[i], lp)
		}
	}
	for _, mp := range prices {
		if i, ok := byID[mp.Model]; ok && mp.Provider == p.ID {
			models[i] = withAdminPrice(models[i], mp)
		}
	}
	return nil
}

// providerModels lists p's models for user: the provider's own list when
// it answers, else Knobs' built-in one with a note that says why; each at
// the price in force (an admin's over the list's).
func (h *Handler) providerModels(ctx context.Context, user int64, p Provider) ([]llm.Model, string) {
	models, note := h.listModels(ctx, user, p)
	if err := h.withPricesInForce(ctx, p, models); err != nil {
		h.log.WarnContext(ctx, "reading the prices in force", "err", err)
	}
	return models, note
}

func (h *Handler) listModels(ctx context.Context, user int64, p Provider) ([]llm.Model, string) {
	client, err := h.client(ctx, user, p)
	switch {
	case errors.Is(err, errNoKey):
		return llm.KnownModels(p.Dialect), "No API key: showing Knobs' built-in list."
	case err != nil:
		return llm.KnownModels(p.Dialect), "The stored key cannot be read: showing Knobs' built-in list."
	}
	mctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	models, err := client.Models(mctx)
	if err != nil {
		reason := "it did not answer"
		var le *llm.Error
		if errors.As(err, &le) && le.Message != "" {
			reason = le.Message
		}
		return llm.KnownModels(p.Dialect), "The provider's model list is unavailable (" + reason + "): showing Knobs' built-in list."
	}
	h.rememberListed(ctx, p, models)
	return models, ""
}
