package handlers

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"knobs/db"
	"knobs/field"
)

// BudgetCaps are the monthly caps, as PUT /api/v1/budgets takes them and
// GET answers them. A cap left out (or null) is no cap.
type BudgetCaps struct {
	TeamUSD        *float64           `json:"team_usd,omitempty" doc:"What the whole team may spend in a calendar month (UTC), in US dollars."`
	UserDefaultUSD *float64           `json:"user_default_usd,omitempty" doc:"What each user may spend in a month, unless users gives them their own cap."`
	Users          map[string]float64 `json:"users,omitempty" doc:"Caps of single users over the default, in US dollars a month, by user id."`
	Providers      map[string]float64 `json:"providers,omitempty" doc:"What the team may spend on one provider in a month, by provider id (as GET /api/v1/providers lists them)."`
	WarnAt         *float64           `json:"warn_at,omitempty" doc:"The share of a cap, above 0 and at most 1, at which users are warned (default 0.8)."`
	TokenCap       *int64             `json:"token_cap,omitempty" doc:"The tokens the team may use in a month on models without a price, whose cost Knobs cannot count."`
	Exempt         []int64            `json:"exempt,omitempty" doc:"Users no cap applies to, by id."`
}

// BudgetSpend is one cap with what was spent under it this month.
type BudgetSpend struct {
	Scope       string   `json:"scope" enum:"team,user,provider,tokens" doc:"team, a user's (their own or the default), a provider's, or the token cap on models without a price."`
	UserID      int64    `json:"user_id,omitempty"`
	Username    string   `json:"username,omitempty"`
	Provider    string   `json:"provider,omitempty"`
	LimitUSD    *float64 `json:"limit_usd" nullable:"true" doc:"The cap in US dollars; null for the token cap, and for a user without one (a member's own spend)."`
	SpentUSD    float64  `json:"spent_usd" doc:"What was spent under it this month, in US dollars."`
	LimitTokens int64    `json:"limit_tokens,omitempty"`
	SpentTokens int64    `json:"spent_tokens,omitempty"`
	Exempt      bool     `json:"exempt,omitempty" doc:"The user is exempt: no cap applies to them."`
}

// BudgetsAnswer is GET /api/v1/budgets: the caps and what was spent.
type BudgetsAnswer struct {
	BudgetCaps
	Spent      []BudgetSpend `json:"spent" doc:"Every cap that applies (to the caller, for a member) with what was spent under it this month."`
	MonthStart time.Time     `json:"month_start" doc:"The first instant of this month (UTC), from which spend is counted."`
	ResetsAt   time.Time     `json:"resets_at" doc:"When this month ends and spend counts from zero again (UTC)."`
}

// ShowBudgetsInput is GET /api/v1/budgets.
type ShowBudgetsInput struct{}

// ShowBudgetsOutput is the answer to GET /api/v1/budgets.
type ShowBudgetsOutput struct {
	Body BudgetsAnswer
}

// ShowAPIBudgets answers the monthly caps with what was spent under
// each: every cap to an admin; to a member, the caps that apply to them
// and their own spend.
func (h *Handler) ShowAPIBudgets(ctx context.Context, _ *ShowBudgetsInput) (*ShowBudgetsOutput, error) {
	a, err := h.budgetsAnswer(ctx, apiUser(ctx))
	if err != nil {
		return nil, err
	}
	return &ShowBudgetsOutput{Body: a}, nil
}

// budgetsAnswer is the caps and what was spent under them, as u may see
// them.
func (h *Handler) budgetsAnswer(ctx context.Context, u db.User) (BudgetsAnswer, error) {
	b, err := h.store.Budgets(ctx)
	if err != nil {
		return BudgetsAnswer{}, err
	}
	from, resets := monthOf(h.now())
	out := BudgetsAnswer{BudgetCaps: capsOf(b), Spent: []BudgetSpend{}, MonthStart: from, ResetsAt: resets}
	users, err := h.store.Users(ctx)
	if err != nil {
		return BudgetsAnswer{}, err
	}
	if !u.IsAdmin() {
		// A member sees the caps on them, not their colleagues'.
		users = slices.DeleteFunc(users, func(x db.User) bool { return x.ID != u.ID })
		mine := BudgetCaps{TeamUSD: b.TeamUSD, UserDefaultUSD: b.UserDefaultUSD, Providers: out.Providers, WarnAt: out.WarnAt, TokenCap: b.TokenCap}
		if usd, ok := b.Users[u.ID]; ok {
			mine.Users = map[string]float64{strconv.FormatInt(u.ID, 10): usd}
		}
		if b.IsExempt(u.ID) {
			mine.Exempt = []int64{u.ID}
		}
		out.BudgetCaps = mine
	}
	spent, err := h.spend.SpendByScope(ctx, from)
	if err != nil {
		return BudgetsAnswer{}, err
	}
	if b.TeamUSD != nil {
		out.Spent = append(out.Spent, BudgetSpend{Scope: scopeTeam, LimitUSD: b.TeamUSD, SpentUSD: spent.TeamUSD})
	}
	for _, x := range users {
		limit := b.UserCap(x.ID)
		if limit == nil && !b.IsExempt(x.ID) && u.IsAdmin() {
			continue
		}
		out.Spent = append(out.Spent, BudgetSpend{Scope: scopeUser, UserID: x.ID, Username: x.Username, LimitUSD: limit,
			SpentUSD: spent.ByUser[x.ID], Exempt: b.IsExempt(x.ID)})
	}
	for _, p := range slices.Sorted(maps.Keys(b.Providers)) {
		limit := b.Providers[p]
		out.Spent = append(out.Spent, BudgetSpend{Scope: scopeProvider, Provider: p, LimitUSD: &limit, SpentUSD: spent.ByProvider[p]})
	}
	if b.TokenCap != nil {
		out.Spent = append(out.Spent, BudgetSpend{Scope: scopeTokens, LimitTokens: *b.TokenCap, SpentTokens: spent.TeamTokens})
	}
	return out, nil
}

// capsOf is b as the API writes it.
func capsOf(b db.Budgets) BudgetCaps {
	warn := b.WarnAt
	c := BudgetCaps{TeamUSD: b.TeamUSD, UserDefaultUSD: b.UserDefaultUSD, WarnAt: &warn, TokenCap: b.TokenCap, Exempt: b.Exempt}
	if len(b.Users) > 0 {
		c.Users = map[string]float64{}
		for id, usd := range b.Users {
			c.Users[strconv.FormatInt(id, 10)] = usd
		}
	}
	if len(b.Providers) > 0 {
		c.Providers = maps.Clone(b.Providers)
	}
	return c
}

// checkBudgets turns caps as sent into the caps to store: amounts not
// negative, users and providers that exist, warn_at in (0, 1]. Each
// mistake is named by its field (users.42, providers.acme, exempt[1]).
func (h *Handler) checkBudgets(ctx context.Context, in BudgetCaps) (db.Budgets, field.Errors, error) {
	fe := field.Errors{}
	b := db.Budgets{Users: map[int64]float64{}, Providers: map[string]float64{}, WarnAt: db.DefaultWarnAt,
		TeamUSD: in.TeamUSD, UserDefaultUSD: in.UserDefaultUSD, TokenCap: in.TokenCap}
	amount := func(name string, v float64) {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			fe.Add(name, "Give an amount in US dollars of 0 or more.")
		}
	}
	if in.TeamUSD != nil {
		amount("team_usd", *in.TeamUSD)
	}
	if in.UserDefaultUSD != nil {
		amount("user_default_usd", *in.UserDefaultUSD)
	}
	if in.WarnAt != nil {
		if w := *in.WarnAt; !(w > 0 && w <= 1) {
			fe.Add("warn_at", "Give the share of a cap to warn at, above 0 and at most 1 (0.8 warns at 80%).")
		} else {
			b.WarnAt = w
		}
	}
	if in.TokenCap != nil && *in.TokenCap < 0 {
		fe.Add("token_cap", "Give a number of tokens of 0 or more.")
	}
	users, err := h.store.Users(ctx)
	if err != nil {
		return db.Budgets{}, nil, err
	}
	known := map[int64]bool{}
	for _, u := range users {
		known[u.ID] = true
	}
	// A body names each user or provider once at most: more entries than
	// there are is refused whole, before a message per unknown one.
	if len(in.Users) > len(users) {
		fe.Add("users", fmt.Sprintf("This Knobs has %d users: give a cap for at most each of them once.", len(users)))
		in.Users = nil
	}
	if len(in.Exempt) > len(users) {
		fe.Add("exempt", fmt.Sprintf("This Knobs has %d users: name each one to exempt at most once.", len(users)))
		in.Exempt = nil
	}
	for key, usd := range in.Users {
		name := "users." + key
		id, err := strconv.ParseInt(key, 10, 64)
		switch {
		case err != nil || !known[id]:
			fe.Add(name, "There is no user with the id "+strconv.Quote(key)+".")
		default:
			amount(name, usd)
			b.Users[id] = usd
		}
	}
	providers, err := h.providerList(ctx)
	if err != nil {
		return db.Budgets{}, nil, err
	}
	if len(in.Providers) > len(providers) {
		fe.Add("providers", fmt.Sprintf("This Knobs has %d providers: give a cap for at most each of them once.", len(providers)))
		in.Providers = nil
	}
	for name, usd := range in.Providers {
		if _, ok := providerByID(providers, name); !ok {
			fe.Add("providers."+name, "There is no provider "+strconv.Quote(name)+".")
			continue
		}
		amount("providers."+name, usd)
		b.Providers[name] = usd
	}
	for i, id := range in.Exempt {
		if !known[id] {
			fe.Add("exempt["+strconv.Itoa(i)+"]", "There is no user with the id "+strconv.FormatInt(id, 10)+".")
		} else if !slices.Contains(b.Exempt, id) {
			b.Exempt = append(b.Exempt, id)
		}
	}
	slices.SortFunc(b.Exempt, cmp.Compare)
	if !fe.Empty() {
		return db.Budgets{}, fe, nil
	}
	return b, nil, nil
}
