package handlers

import (
	"context"
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/views"
)

// SaveBudgets sets the monthly budgets from the settings page's form:
// checked as PUT /api/v1/budgets checks them, in effect for the next run.
// A refused form is shown again as typed, with each mistake under its
// field, and nothing changed.
func (h *Handler) SaveBudgets(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	form := map[string]string{}
	var exempt []string
	c.Request().PostArgs().VisitAll(func(k, v []byte) {
		switch key := string(k); {
		case key == "exempt":
			exempt = append(exempt, string(v))
		case key == "_csrf":
		default:
			form[key] = strings.TrimSpace(string(v))
		}
	})
	in, fe := budgetForm(form, exempt)
	b, more, err := h.checkBudgets(ctx(c), in)
	if err != nil {
		return err
	}
	maps.Copy(fe, more)
	if !fe.Empty() {
		return h.renderSettingsView(c, fiber.StatusUnprocessableEntity, views.SettingsView{Errors: fe, BudgetForm: formWithExempt(form, exempt)})
	}
	if err := h.store.SaveBudgets(ctx(c), b, h.now()); err != nil {
		return err
	}
	h.log.InfoContext(ctx(c), "budgets changed", "by", u.ID)
	return redirectWith(c, "/settings#budgets", "The budgets are saved; they apply from the next run.")
}

// budgetForm reads the form's fields into caps: an empty amount is no
// cap; what is not a number is a mistake named as the API names it.
func budgetForm(form map[string]string, exempt []string) (BudgetCaps, field.Errors) {
	fe := field.Errors{}
	amount := func(name, v string) *float64 {
		if v == "" {
			return nil
		}
		f, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			fe.Add(name, "Give an amount in US dollars, such as 50 or 12.50, or leave it empty for no cap.")
			return nil
		}
		return &f
	}
	in := BudgetCaps{TeamUSD: amount("team_usd", form["team_usd"]), UserDefaultUSD: amount("user_default_usd", form["user_default_usd"]),
		Users: map[string]float64{}, Providers: map[string]float64{}}
	if v := form["warn_pct"]; v != "" {
		pct, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil || !(pct > 0 && pct <= 100) {
			fe.Add("warn_at", "Give a percentage above 0 and at most 100, such as 80.")
		} else {
			share := pct / 100
			in.WarnAt = &share
		}
	}
	if v := form["token_cap"]; v != "" {
		n, err := strconv.ParseInt(strings.ReplaceAll(v, ",", ""), 10, 64)
		if err != nil {
			fe.Add("token_cap", "Give a whole number of tokens, or leave it empty for no cap.")
		} else {
			in.TokenCap = &n
		}
	}
	for k, v := range form {
		if id, ok := strings.CutPrefix(k, "users."); ok {
			if usd := amount(k, v); usd != nil {
				in.Users[id] = *usd
			}
		} else if p, ok := strings.CutPrefix(k, "providers."); ok {
			if usd := amount(k, v); usd != nil {
				in.Providers[p] = *usd
			}
		}
	}
	for _, v := range exempt {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			fe.Add("exempt", "A member to exempt is not known.")
			continue
		}
		in.Exempt = append(in.Exempt, id)
	}
	return in, fe
}

// formWithExempt is the form as typed, with the exempt boxes ticked as
// "exempt.<id>".
func formWithExempt(form map[string]string, exempt []string) map[string]string {
	out := maps.Clone(form)
	for _, id := range exempt {
		out["exempt."+id] = "on"
	}
	return out
}

// budgetsView is the budgets' form and this month's spend: the caps as
// stored, or as typed when form is not nil.
func (h *Handler) budgetsView(ctx context.Context, users []db.User, form map[string]string) (views.BudgetsView, error) {
	b, err := h.store.Budgets(ctx)
	if err != nil {
		return views.BudgetsView{}, err
	}
	from, resets := monthOf(h.now())
	spent, err := h.spend.SpendByScope(ctx, from)
	if err != nil {
		return views.BudgetsView{}, err
	}
	amount := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	used := func(usd float64, limit *float64) string {
		if limit == nil {
			return ""
		}
		if *limit <= 0 {
			return "100%"
		}
		return strconv.Itoa(int(math.Floor(usd/(*limit)*100))) + "%"
	}
	v := views.BudgetsView{Team: amount(b.TeamUSD), UserDefault: amount(b.UserDefaultUSD),
		WarnPct: strconv.FormatFloat(b.WarnAt*100, 'f', -1, 64), ResetsAt: resets.Format("2 January 2006 at 15:04 UTC")}
	if b.TokenCap != nil {
		v.TokenCap = strconv.FormatInt(*b.TokenCap, 10)
	}
	teamUSD, tokens := spent.TeamUSD, spent.TeamTokens
	if b.TeamUSD != nil {
		v.TeamSpent = dollars(teamUSD) + " (" + used(teamUSD, b.TeamUSD) + ")"
	}
	if b.TokenCap != nil {
		v.TokensSpent = grouped(tokens) + " tokens"
	}
	for _, u := range users {
		usd := spent.ByUser[u.ID]
		row := views.BudgetUserRow{ID: u.ID, Name: u.Username, Exempt: b.IsExempt(u.ID), Spent: dollars(usd)}
		if own, ok := b.Users[u.ID]; ok {
			row.Cap = amount(&own)
		}
		if !row.Exempt {
			row.Used = used(usd, b.UserCap(u.ID))
		}
		v.Users = append(v.Users, row)
	}
	providers, err := h.providerList(ctx)
	if err != nil {
		return views.BudgetsView{}, err
	}
	for _, p := range providers {
		usd := spent.ByProvider[p.ID]
		row := views.BudgetProviderRow{ID: p.ID, Name: p.Name, Spent: dollars(usd)}
		if limit, ok := b.Providers[p.ID]; ok {
			row.Cap = amount(&limit)
			row.Used = used(usd, &limit)
		}
		v.Providers = append(v.Providers, row)
	}
	if form != nil {
		v.Team, v.UserDefault, v.WarnPct, v.TokenCap = form["team_usd"], form["user_default_usd"], form["warn_pct"], form["token_cap"]
		for i := range v.Users {
			id := strconv.FormatInt(v.Users[i].ID, 10)
			v.Users[i].Cap, v.Users[i].Exempt = form["users."+id], form["exempt."+id] != ""
		}
		for i := range v.Providers {
			v.Providers[i].Cap = form["providers."+v.Providers[i].ID]
		}
	}
	return v, nil
}
