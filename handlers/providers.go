package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"

	"knobs/db"
	"knobs/llm"
	"knobs/llm/sim"
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
	for _, p := range list {
		if p.ID == id {
			return p, nil
		}
	}
	return Provider{}, errNoProvider
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

// clients keeps one llm.Client per provider and key, so that model lists
// stay cached and connections are reused.
type clients struct {
	mu  sync.Mutex
	all map[string]*llm.Client
	sim *llm.Client
}

// client returns the client user runs p with.
func (h *Handler) client(ctx context.Context, user int64, p Provider) (*llm.Client, error) {
	if p.Dialect == llm.DialectSim {
		return h.clients.simClient(h.simConfig), nil
	}
	key, err := h.resolveKey(ctx, user, p)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(p.ID + "\x00" + p.BaseURL + "\x00" + key))
	id := hex.EncodeToString(sum[:])
	h.clients.mu.Lock()
	defer h.clients.mu.Unlock()
	if c, ok := h.clients.all[id]; ok {
		return c, nil
	}
	c := llm.NewClient(llm.ProviderConfig{ID: p.ID, Name: p.Name, Dialect: p.Dialect, BaseURL: p.BaseURL, Key: key})
	if h.clients.all == nil {
		h.clients.all = map[string]*llm.Client{}
	}
	h.clients.all[id] = c
	return c, nil
}

func (cs *clients) simClient(cfg llm.ProviderConfig) *llm.Client {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.sim == nil {
		cs.sim = llm.NewClient(cfg)
	}
	return cs.sim
}

// model returns what is known of model id on p, for validation and prices.
func (h *Handler) model(p Provider, id string) llm.Model {
	if m, ok := llm.LookupModel(p.Dialect, id); ok {
		return m
	}
	return llm.Model{ID: id}
}

// defaultSimConfig is the in-process simulator.
func defaultSimConfig() llm.ProviderConfig { return sim.Config() }
