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
	// listed holds the priced models of the providers' own lists as last
	// read, by provider id and model id, so that a run is priced as the
	// listing says without asking the provider again.
	listed map[[2]string]llm.Model
	// named holds the ids the providers' own lists named, by provider id,
	// at most maxNamedModels each: a model a list named is one the
	// provider serves, which the metrics count under its own name.
	named map[string]map[string]struct{}
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
// admin's when one is set, else the provider's own list's as last read,
// else Knobs' built-in list's. Runs, the playground's and experiments'
// estimates and arenas' budgets all price through it. Its Source is
// "api" when the provider's list named it, "fallback" when only Knobs'
// built-in list has it, and "" for a name neither knows.
func (h *Handler) pricedModel(ctx context.Context, p Provider, id string) (llm.Model, error) {
	m := modelInfo(p, id)
	h.clients.mu.Lock()
	listed, ok := h.clients.listed[[2]string{p.ID, id}]
	_, named := h.clients.named[p.ID][id]
	h.clients.mu.Unlock()
	if ok {
		m.PromptPrice, m.CompletionPrice, m.CachedPrice, m.ReasoningPrice = listed.PromptPrice, listed.CompletionPrice, listed.CachedPrice, listed.ReasoningPrice
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

// rememberListed keeps the prices of p's own model list, and the ids it
// names.
func (h *Handler) rememberListed(p Provider, models []llm.Model) {
	h.clients.mu.Lock()
	defer h.clients.mu.Unlock()
	if h.clients.listed == nil {
		h.clients.listed = map[[2]string]llm.Model{}
	}
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
		// A list is bounded by the model-list reader's 8 MB cap.
		if m.Priced() && m.Source == "api" {
			h.clients.listed[[2]string{p.ID, m.ID}] = m
		}
	}
}

// withAdminPrices sets the admins' prices on p's models, in place.
func (h *Handler) withAdminPrices(ctx context.Context, p Provider, models []llm.Model) error {
	prices, err := h.store.ModelPrices(ctx)
	if err != nil {
		return err
	}
	for _, mp := range prices {
		if mp.Provider != p.ID {
			continue
		}
		for i := range models {
			if models[i].ID == mp.Model {
				models[i] = withAdminPrice(models[i], mp)
			}
		}
	}
	return nil
}

// providerModels lists p's models for user: the provider's own list when
// it answers, else Knobs' built-in one with a note that says why; each at
// the price in force (an admin's over the list's).
func (h *Handler) providerModels(ctx context.Context, user int64, p Provider) ([]llm.Model, string) {
	models, note := h.listModels(ctx, user, p)
	if err := h.withAdminPrices(ctx, p, models); err != nil {
		h.log.WarnContext(ctx, "reading the admins' prices", "err", err)
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
	h.rememberListed(p, models)
	return models, ""
}
