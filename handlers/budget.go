package handlers

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/llm/sim"
	"knobs/runner"
)

// spendSource is where budgets read what has been spent: the usd cost of
// runs finished since from, and the tokens of those whose cost is not
// known, for one user (0: everyone) and one provider ("": all). It is the
// usage roll-ups (db.Store.SpentSince), which deleting runs or purging
// history does not lower: the provider's bill does not shrink either.
type spendSource interface {
	SpentSince(ctx context.Context, from time.Time, userID int64, provider string) (usd float64, unpricedTokens int64, err error)
	// SpendByScope is every scope's figure at once, for the pages that
	// list them all.
	SpendByScope(ctx context.Context, from time.Time) (db.MonthSpend, error)
}

// Budget scopes: which cap a refusal or a figure is about.
const (
	scopeTeam     = "team"
	scopeUser     = "user"
	scopeProvider = "provider"
	scopeTokens   = "tokens"
)

// BudgetRefusal is the cap that refused a run, as the API answers it.
type BudgetRefusal struct {
	Scope       string    `json:"scope" enum:"team,user,provider,tokens" doc:"Which cap: the team's, the user's own, a provider's, or the team's token cap on runs of models without a price."`
	Provider    string    `json:"provider,omitempty" doc:"The provider, for a provider's cap."`
	LimitUSD    float64   `json:"limit_usd" doc:"The monthly cap in US dollars (0 for the token cap)."`
	SpentUSD    float64   `json:"spent_usd" doc:"What was spent this month under the cap, in US dollars."`
	HeldUSD     float64   `json:"held_usd,omitempty" doc:"What runs still going may cost at most, counted against the cap until they end."`
	LimitTokens int64     `json:"limit_tokens,omitempty" doc:"The token cap, for scope tokens."`
	SpentTokens int64     `json:"spent_tokens,omitempty" doc:"The tokens used this month by runs without a price, for scope tokens."`
	ResetsAt    time.Time `json:"resets_at" doc:"When the month ends and the spend counts from zero again (UTC)."`
}

// budgetError is a run refused by a cap. It is a refusal to the
// experiment executor (a cell ends with its message) and reads as a 402
// Problem to the pages and the API.
type budgetError struct {
	BudgetRefusal
}

func (e *budgetError) Error() string { return budgetMessage(e.BudgetRefusal) }

// Refused marks a run Knobs will not send now (experiment.Refusal).
func (e *budgetError) Refused() {}

// Unwrap is the Problem the user is answered with.
func (e *budgetError) Unwrap() error {
	r := e.BudgetRefusal
	return &Problem{Status: fiber.StatusPaymentRequired, Message: e.Error(), Budget: &r}
}

// budgetMessage says which cap refused a run, what was spent and when it
// resets.
func budgetMessage(r BudgetRefusal) string {
	return usedUp(r) + " Nothing was sent. It resets on " + resetsOn(r) + "; an admin can raise it in Settings."
}

// usedUp says which cap is used up and what was spent under it.
func usedUp(r BudgetRefusal) string {
	var what, spent string
	switch r.Scope {
	case scopeUser:
		what = "Your monthly budget of " + dollars(r.LimitUSD)
	case scopeProvider:
		what = "The team's monthly budget for " + r.Provider + " of " + dollars(r.LimitUSD)
	case scopeTokens:
		what = "The team's monthly cap of " + grouped(r.LimitTokens) + " tokens for models without a price"
	default:
		what = "The team's monthly budget of " + dollars(r.LimitUSD)
	}
	if r.Scope == scopeTokens {
		spent = grouped(r.SpentTokens) + " tokens used this month"
	} else {
		spent = dollars(r.SpentUSD) + " spent this month"
	}
	if r.HeldUSD > 0 {
		spent += " and up to " + dollars(r.HeldUSD) + " in runs still going"
	}
	return what + " is used up (" + spent + ")."
}

func resetsOn(r BudgetRefusal) string { return r.ResetsAt.UTC().Format("2 January 2006 at 15:04 UTC") }

// monthOf is the calendar month (UTC) that t falls in: its first instant
// and the next month's.
func monthOf(t time.Time) (from, resets time.Time) {
	t = t.UTC()
	from = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return from, from.AddDate(0, 1, 0)
}

// budgetGate checks runs against the caps one start at a time, and holds
// what runs that passed may cost at most until they are stored: a run
// racing another past a cap sees it. A run is let through while what
// was spent and what is held stays under the cap, so that a cap is
// passed by at most the run that crosses it (by its own cost, not by
// its estimate, which only others see); where a run's cost cannot be
// bounded beforehand (no price, no max tokens) the overshoot is at most
// the runs already going.
type budgetGate struct {
	mu   sync.Mutex
	held map[*heldRun]struct{}
}

// heldRun is what one started run may cost at most, until it is stored.
type heldRun struct {
	user     int64
	provider string
	usd      float64
	tokens   int64 // for a run without a price
}

func newBudgetGate() *budgetGate {
	return &budgetGate{held: map[*heldRun]struct{}{}}
}

// heldFor sums what runs going may cost, for a user (0: all) and a
// provider ("": all); the caller holds g.mu.
func (g *budgetGate) heldFor(user int64, provider string) (usd float64, tokens int64) {
	for r := range g.held {
		if (user == 0 || r.user == user) && (provider == "" || r.provider == provider) {
			usd += r.usd
			tokens += r.tokens
		}
	}
	return usd, tokens
}

func (g *budgetGate) drop(r *heldRun) {
	g.mu.Lock()
	delete(g.held, r)
	g.mu.Unlock()
}

// budgetHold is what the runs of one start (a run, a comparison's panes)
// hold against the caps: each pane's until its run is stored, or until
// release when it never started. An exempt user's hold is empty.
type budgetHold struct {
	g       *budgetGate
	runs    []*heldRun // by pane
	started []bool
}

// start ties pane i's hold to run: it is dropped once the run is
// stored, when its cost counts as spent.
func (b *budgetHold) start(i int, run *runner.Run) {
	if i >= len(b.runs) {
		return
	}
	b.started[i] = true
	r := b.runs[i]
	go func() { // ends with the run: Settled is closed however it ends
		// Settled, not Kept: an ending a full disk refused is retried
		// in the background, and until it is stored its cost is in no
		// roll-up, so the hold stays in its place.
		<-run.Settled()
		b.g.drop(r)
	}()
}

// release drops what panes that never started held.
func (b *budgetHold) release() {
	for i, r := range b.runs {
		if !b.started[i] {
			b.g.drop(r)
		}
	}
}

// runCost is what a prepared run may cost at most: usd when its model
// has a price, else tokens. The input is counted as the playground
// counts it (exact for the simulator); the output is the request's
// max tokens, else the model's, else defaultOutputGuess.
func runCost(p preparedRun) (usd float64, tokens int64) {
	in := sim.EstimatePromptTokens(p.spec.Endpoint, p.spec.Body)
	limit, n := outputLimit(p.spec.Body)
	if limit <= 0 {
		limit = p.model.MaxOutput
	}
	if limit <= 0 {
		limit = defaultOutputGuess
	}
	out := limit * n
	price := runner.PriceOf(p.model)
	if price == nil {
		return 0, int64(in + out)
	}
	// The output may be all reasoning, at its own price: hold the dearer.
	return (float64(in)*price.Input + float64(out)*max(price.Output, price.Reasoning)) / 1e6, 0
}

// defaultOutputGuess is the output a run that sets no bound and whose
// model has none is held at.
const defaultOutputGuess = 4096

// priced reports whether p's model has a price, an admin's free one
// included: the test runs, usage and budgets share (llm.Model.Priced).
func priced(p preparedRun) bool { return p.model.Priced() }

// budgetFigure is one cap and what was spent under it this month.
type budgetFigure struct {
	BudgetRefusal
	heldTokens int64 // for scope tokens: what runs going may use
}

// share is how much of the cap is used, counting what runs going hold.
func (f budgetFigure) share() float64 {
	if f.Scope == scopeTokens {
		if f.LimitTokens <= 0 {
			return math.Inf(1)
		}
		return float64(f.SpentTokens+f.heldTokens) / float64(f.LimitTokens)
	}
	if f.LimitUSD <= 0 {
		return math.Inf(1)
	}
	return (f.SpentUSD + f.HeldUSD) / f.LimitUSD
}

// usedUp reports whether nothing more may start under the cap.
func (f budgetFigure) usedUp() bool { return f.share() >= 1 }

// warning is what a user is told once the cap is used to warnAt.
func (f budgetFigure) warning() string {
	pct := int(math.Floor(f.share() * 100))
	switch f.Scope {
	case scopeUser:
		return fmt.Sprintf("You have used %d%% of your monthly budget (%s of %s).", pct, dollars(f.SpentUSD+f.HeldUSD), dollars(f.LimitUSD))
	case scopeProvider:
		return fmt.Sprintf("The team has used %d%% of its monthly budget for %s (%s of %s).", pct, f.Provider, dollars(f.SpentUSD+f.HeldUSD), dollars(f.LimitUSD))
	case scopeTokens:
		return fmt.Sprintf("The team has used %d%% of its monthly %s tokens for models without a price (%s).", pct, grouped(f.LimitTokens), grouped(f.SpentTokens+f.heldTokens))
	}
	return fmt.Sprintf("The team has used %d%% of its monthly budget (%s of %s).", pct, dollars(f.SpentUSD+f.HeldUSD), dollars(f.LimitUSD))
}

// budgetFigures reads the caps that apply to user's runs on providers
// (every provider with a cap when providers is nil), with what was
// spent and what runs going hold; unpriced says whether the token cap
// applies. The caller holds h.budget.mu.
func (h *Handler) budgetFigures(ctx context.Context, b db.Budgets, user int64, providers []string, unpriced bool, from, resets time.Time) ([]budgetFigure, error) {
	var out []budgetFigure
	add := func(scope, provider string, uid int64, limit *float64) error {
		if limit == nil {
			return nil
		}
		spent, _, err := h.spend.SpentSince(ctx, from, uid, provider)
		if err != nil {
			return err
		}
		held, _ := h.budget.heldFor(uid, provider)
		out = append(out, budgetFigure{BudgetRefusal: BudgetRefusal{Scope: scope, Provider: provider, LimitUSD: *limit, SpentUSD: spent, HeldUSD: held, ResetsAt: resets}})
		return nil
	}
	if err := add(scopeUser, "", user, b.UserCap(user)); err != nil {
		return nil, err
	}
	if providers == nil {
		for p := range b.Providers {
			providers = append(providers, p)
		}
	}
	seen := map[string]bool{}
	for _, p := range providers {
		if limit, ok := b.Providers[p]; ok && !seen[p] {
			seen[p] = true
			if err := add(scopeProvider, p, 0, &limit); err != nil {
				return nil, err
			}
		}
	}
	if err := add(scopeTeam, "", 0, b.TeamUSD); err != nil {
		return nil, err
	}
	if b.TokenCap != nil && unpriced {
		_, tokens, err := h.spend.SpentSince(ctx, from, 0, "")
		if err != nil {
			return nil, err
		}
		_, held := h.budget.heldFor(0, "")
		out = append(out, budgetFigure{BudgetRefusal: BudgetRefusal{Scope: scopeTokens, LimitTokens: *b.TokenCap, SpentTokens: tokens, ResetsAt: resets}, heldTokens: held})
	}
	return out, nil
}

// holdBudget checks the runs one start of user's would send against
// every cap that applies, before anything is sent: a cap used up
// refuses them all (a *budgetError). Else it holds what they may cost
// until they are stored, and says the warning for a cap used past the
// admin's share, if any. Every run starts with a hold (launchRun takes
// one); its release is the caller's, deferred.
func (h *Handler) holdBudget(ctx context.Context, user int64, runs []preparedRun) (*budgetHold, string, error) {
	hold := &budgetHold{g: h.budget}
	b, err := h.store.Budgets(ctx)
	if err != nil {
		return nil, "", err
	}
	if b.IsExempt(user) {
		return hold, "", nil
	}
	var providers []string
	held := make([]*heldRun, len(runs))
	for i, p := range runs {
		providers = append(providers, p.provider)
		usd, tokens := runCost(p) // counted outside the lock: a body may be large
		held[i] = &heldRun{user: user, provider: p.provider, usd: usd, tokens: tokens}
	}
	from, resets := monthOf(h.now())
	h.budget.mu.Lock()
	defer h.budget.mu.Unlock()
	// Each run is checked with what the ones before it hold, so that a
	// comparison of four expensive panes at $49.99 of $50 is refused
	// rather than let through whole on the first pane's room; a refusal
	// takes back what this call held, so a comparison goes whole or not.
	warn, most := "", 0.0
	for i, r := range held {
		figs, err := h.budgetFigures(ctx, b, user, providers[i:i+1], !priced(runs[i]), from, resets)
		if err == nil {
			for _, f := range figs {
				if f.usedUp() {
					err = &budgetError{f.BudgetRefusal}
					break
				}
				if s := f.share(); s >= b.WarnAt && s > most {
					warn, most = f.warning(), s
				}
			}
		}
		if err != nil {
			for _, r := range held[:i] {
				delete(h.budget.held, r)
			}
			return nil, "", err
		}
		h.budget.held[r] = struct{}{}
	}
	hold.runs, hold.started = held, make([]bool, len(held))
	return hold, warn, nil
}

// budgetNotice is what the playground tells user of the caps when it
// opens: the cap used up, else the warning of the cap used most past the
// admin's share; "" when neither.
func (h *Handler) budgetNotice(ctx context.Context, user int64) (string, error) {
	b, err := h.store.Budgets(ctx)
	if err != nil || b.IsExempt(user) {
		return "", err
	}
	from, resets := monthOf(h.now())
	h.budget.mu.Lock()
	figs, err := h.budgetFigures(ctx, b, user, nil, true, from, resets)
	h.budget.mu.Unlock()
	if err != nil {
		return "", err
	}
	notice, most := "", 0.0
	for _, f := range figs {
		if f.usedUp() {
			refused := "New runs are refused"
			if f.Scope == scopeTokens {
				// Priced runs count dollars, not this cap.
				refused = "Runs of models without a price are refused"
			}
			return usedUp(f.BudgetRefusal) + " " + refused + " until it resets on " + resetsOn(f.BudgetRefusal) + ".", nil
		}
		if s := f.share(); s >= b.WarnAt && s > most {
			notice, most = f.warning(), s
		}
	}
	return notice, nil
}

// budgetWarningHeader carries a run's budget warning on its answer (the
// event stream or JSON), so that a user who crosses the share mid-session
// is told at their next run.
const budgetWarningHeader = "X-Knobs-Budget-Warning"

// budgetUsedUp is the cap, if any, that would refuse user's runs on
// providers now (unpriced: some have no price), for callers that must
// know before they claim or promise anything; the runs themselves are
// still checked as they start.
func (h *Handler) budgetUsedUp(ctx context.Context, user int64, providers []string, unpriced bool) (*budgetError, error) {
	b, err := h.store.Budgets(ctx)
	if err != nil || b.IsExempt(user) {
		return nil, err
	}
	from, resets := monthOf(h.now())
	h.budget.mu.Lock()
	defer h.budget.mu.Unlock()
	figs, err := h.budgetFigures(ctx, b, user, providers, unpriced, from, resets)
	if err != nil {
		return nil, err
	}
	for _, f := range figs {
		if f.usedUp() {
			return &budgetError{f.BudgetRefusal}, nil
		}
	}
	return nil, nil
}
