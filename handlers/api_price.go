package handlers

import (
	"cmp"
	"context"
	"errors"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"knobs/db"
	"knobs/field"
	"knobs/llm"
	"knobs/runner"
)

// Where a model's price comes from, as the prices list says.
const (
	priceFromAdmin    = "admin"
	priceFromProvider = "provider"
	priceFromNone     = "none"
)

// maxPrice bounds a price an admin sets, in USD per million tokens: far
// above any model's, low enough to catch a price typed per token.
const maxPrice = 100_000

// PriceItem is one model with the price a run of it is costed at.
type PriceItem struct {
	Provider    string     `json:"provider"`
	Model       string     `json:"model"`
	Input       *float64   `json:"input,omitempty" doc:"USD per million input tokens; absent when no price is known."`
	Output      *float64   `json:"output,omitempty" doc:"USD per million output tokens; absent when no price is known."`
	CachedInput *float64   `json:"cached_input,omitempty" doc:"USD per million cached input tokens (the input price when the listing gives none); absent when no price is known."`
	Reasoning   *float64   `json:"reasoning,omitempty" doc:"USD per million reasoning tokens (the output price when the listing gives none); absent when no price is known."`
	Source      string     `json:"source" enum:"admin,provider,none" doc:"admin: set in Knobs by an admin; provider: the provider's model listing (or Knobs' built-in list of it); none: no price is known, so runs of it are not costed."`
	SetAt       *time.Time `json:"set_at,omitempty" doc:"When the price was set: by an admin, or, for a provider's, when Knobs first read it in the provider's listing; absent for Knobs' built-in prices."`
	SetBy       string     `json:"set_by,omitempty" doc:"The admin who set it, while their account exists."`
}

// priceItem describes m, a model of provider at its price in force; mp is
// the admin's price when m has one, lp the listing's as kept.
func priceItem(provider string, m llm.Model, mp *db.ModelPrice, lp *db.ListedPrice) PriceItem {
	it := PriceItem{Provider: provider, Model: m.ID, Source: priceFromNone}
	if p := runner.PriceOf(m); p != nil {
		it.Input, it.Output, it.CachedInput, it.Reasoning = &p.Input, &p.Output, &p.CachedInput, &p.Reasoning
		it.Source = priceFromProvider
	}
	switch {
	case mp != nil:
		it.Source = priceFromAdmin
		at := mp.SetAt.UTC()
		it.SetAt, it.SetBy = &at, mp.SetByName
	case lp != nil && m.PriceSource == llm.PriceListing && lp.Input == m.PromptPrice && lp.Output == m.CompletionPrice &&
		lp.CachedInput == m.CachedPrice && lp.Reasoning == m.ReasoningPrice:
		at := lp.ReadAt.UTC()
		it.SetAt = &at
	}
	return it
}

// priceList is every model of every provider Knobs has, as user's model
// lists show them, and every model an admin priced, each at its price in
// force: by provider, then model.
func (h *Handler) priceList(ctx context.Context, user int64) ([]PriceItem, error) {
	providers, err := h.providerList(ctx)
	if err != nil {
		return nil, err
	}
	// The lists first: reading one keeps its prices, with their date.
	lists := make([][]llm.Model, len(providers))
	for i, p := range providers {
		lists[i], _ = h.providerModels(ctx, user, p)
	}
	prices, err := h.store.ModelPrices(ctx)
	if err != nil {
		return nil, err
	}
	set := map[[2]string]*db.ModelPrice{}
	for i, mp := range prices {
		set[[2]string{mp.Provider, mp.Model}] = &prices[i]
	}
	listedPrices, err := h.store.ListedPrices(ctx)
	if err != nil {
		return nil, err
	}
	kept := map[[2]string]*db.ListedPrice{}
	for i, lp := range listedPrices {
		kept[[2]string{lp.Provider, lp.Model}] = &listedPrices[i]
	}
	var out []PriceItem
	listed := map[[2]string]bool{}
	for i, p := range providers {
		for _, m := range lists[i] {
			k := [2]string{p.ID, m.ID}
			if listed[k] {
				continue
			}
			listed[k] = true
			out = append(out, priceItem(p.ID, m, set[k], kept[k]))
		}
	}
	for _, mp := range prices {
		k := [2]string{mp.Provider, mp.Model}
		if listed[k] {
			continue
		}
		p, ok := providerByID(providers, mp.Provider)
		if !ok {
			continue // its provider was removed; the price waits in case it comes back
		}
		out = append(out, priceItem(p.ID, withAdminPrice(modelInfo(p, mp.Model), mp), &mp, nil))
		listed[k] = true
	}
	// Models the listing priced once but does not list now (or did not
	// answer for): their runs are still priced as it said.
	for _, lp := range listedPrices {
		k := [2]string{lp.Provider, lp.Model}
		if listed[k] {
			continue
		}
		p, ok := providerByID(providers, lp.Provider)
		if !ok {
			continue
		}
		out = append(out, priceItem(p.ID, withListedPrice(modelInfo(p, lp.Model), lp), nil, &lp))
	}
	slices.SortFunc(out, func(a, b PriceItem) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Model, b.Model))
	})
	return out, nil
}

// PriceFields is a price as an admin sets it, in USD per million tokens.
type PriceFields struct {
	Input       float64  `json:"input" minimum:"0" maximum:"100000" doc:"USD per million input tokens."`
	Output      float64  `json:"output" minimum:"0" maximum:"100000" doc:"USD per million output tokens."`
	CachedInput *float64 `json:"cached_input,omitempty" minimum:"0" maximum:"100000" doc:"USD per million cached input tokens; absent: the input price."`
	Reasoning   *float64 `json:"reasoning,omitempty" minimum:"0" maximum:"100000" doc:"USD per million reasoning tokens; absent: the output price."`
}

// errAdminOnly refuses a member what only an admin may do.
var errAdminOnly = &Problem{Status: 403, Message: "Only an admin can change prices."}

// setPrice checks and stores u's price for provider's model, the one
// path of the API and the page: u must be an admin (errAdminOnly), the
// provider must exist, every price a finite number from 0 to 100,000.
// Nothing is stored when a field is wrong.
func (h *Handler) setPrice(ctx context.Context, u db.User, provider, model string, in PriceFields) (PriceItem, field.Errors, error) {
	if !u.IsAdmin() {
		return PriceItem{}, nil, errAdminOnly
	}
	fe := field.Errors{}
	p, err := h.findProvider(ctx, provider)
	if errors.Is(err, errNoProvider) {
		fe.Add("provider", "There is no provider "+strconv.Quote(provider)+".")
	} else if err != nil {
		return PriceItem{}, nil, err
	}
	model = strings.TrimSpace(model)
	switch {
	case model == "":
		fe.Add("model", "Name the model.")
	case len(model) > 200:
		fe.Add("model", "A model id is at most 200 characters.")
	}
	cached, reasoning := cmp.Or(in.CachedInput, &in.Input), cmp.Or(in.Reasoning, &in.Output)
	for name, v := range map[string]float64{"input": in.Input, "output": in.Output, "cached_input": *cached, "reasoning": *reasoning} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > maxPrice {
			fe.Add(name, "Give a price from 0 to 100,000 dollars per million tokens.")
		}
	}
	if !fe.Empty() {
		return PriceItem{}, fe, nil
	}
	mp := db.ModelPrice{Provider: p.ID, Model: model, Input: in.Input, Output: in.Output, CachedInput: *cached, Reasoning: *reasoning,
		SetAt: h.now(), SetBy: u.ID, SetByName: u.Username}
	if err := h.store.SetModelPrice(ctx, mp); err != nil {
		return PriceItem{}, nil, err
	}
	h.log.InfoContext(ctx, "price set", "provider", p.ID, "model", model, "admin", u.ID)
	return priceItem(p.ID, withAdminPrice(modelInfo(p, model), mp), &mp, nil), nil, nil
}

// removePrice takes u's (an admin's) price off provider's model, so that
// the listing's is in force again; db.ErrNotFound when none was set.
func (h *Handler) removePrice(ctx context.Context, u db.User, provider, model string) error {
	if !u.IsAdmin() {
		return errAdminOnly
	}
	if err := h.store.RemoveModelPrice(ctx, provider, model); err != nil {
		return err
	}
	h.log.InfoContext(ctx, "price removed", "provider", provider, "model", model, "admin", u.ID)
	return nil
}

// pathModel reads a model id from a path, where a model id with a slash
// (meta-llama/Llama-3.3-70B) comes escaped as %2F.
func pathModel(s string) string {
	if m, err := url.PathUnescape(s); err == nil {
		return m
	}
	return s
}
