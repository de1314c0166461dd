package web_test

// Monthly budgets over real HTTP with the simulator as the upstream: each
// cap refuses the next run with a 402 that says which cap, what was spent
// and when it resets, and the simulator's handler proves nothing was
// sent; the warning at the admin's share; runs racing past a cap; an
// exempt admin; a cap raised; experiment cells and live arena answers
// refused; the caps' validation.

import (
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"knobs/llm/sim"
)

// countingSim is the simulator, counting the completions asked of it.
type countingSim struct {
	sim  http.Handler
	sent atomic.Int64
}

func (u *countingSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/completions") {
		u.sent.Add(1)
	}
	u.sim.ServeHTTP(w, r)
}

// budgetTeam is a team (admin and bob, each with a write token) whose
// sim provider is a counting simulator.
type budgetTeam struct {
	srv              *server
	admin, bob       *client
	adminTok, bobTok string
	bobID, adminID   int64
	up               *countingSim
}

func newBudgetTeam(t *testing.T, opts ...serverOption) budgetTeam {
	t.Helper()
	up := &countingSim{sim: sim.NewHandler(sim.Options{TokensPerSecond: sim.NoPacing})}
	upstream := httptest.NewServer(up)
	t.Cleanup(upstream.Close)
	srv, admin := newTeam(t, append([]serverOption{withSim(upstreamConfig(upstream))}, opts...)...)
	bob := admin.addMember("bob")
	return budgetTeam{srv: srv, admin: admin, bob: bob, up: up,
		adminTok: admin.makeToken("ci", "write", nil).Token, bobTok: bob.makeToken("ci", "write", nil).Token,
		bobID: srv.userID(t, "bob"), adminID: srv.userID(t, "admin")}
}

// pricedRun is a run of the simulator's priced model that answers exactly
// 40 tokens, waited for.
func pricedRun(prompt string) map[string]any {
	return map[string]any{"provider": "sim", "endpoint": "chat", "wait": true, "body": map[string]any{
		"model": "sim-reasoning", "messages": []any{map[string]any{"role": "user", "content": prompt}},
		"max_completion_tokens": 40, "min_completion_tokens": 40, "reasoning_effort": "low"}}
}

// unpricedRun is the same on a model without a price.
func unpricedRun(prompt string) map[string]any {
	r := pricedRun(prompt)
	body := r["body"].(map[string]any)
	body["model"] = "sim-fast"
	delete(body, "reasoning_effort")
	return r
}

// budgetAnswer is a refused run's body.
type budgetAnswer struct {
	Error  string `json:"error"`
	Budget *struct {
		Scope       string    `json:"scope"`
		Provider    string    `json:"provider"`
		LimitUSD    float64   `json:"limit_usd"`
		SpentUSD    float64   `json:"spent_usd"`
		HeldUSD     float64   `json:"held_usd"`
		LimitTokens int64     `json:"limit_tokens"`
		SpentTokens int64     `json:"spent_tokens"`
		ResetsAt    time.Time `json:"resets_at"`
	} `json:"budget"`
}

// setBudgets is PUT /api/v1/budgets as the admin, which must answer 200.
func (b budgetTeam) setBudgets(t *testing.T, caps map[string]any) {
	t.Helper()
	if a := b.srv.apiCall(t, "PUT", "/api/v1/budgets", b.adminTok, caps); a.status != http.StatusOK {
		t.Fatalf("PUT /api/v1/budgets %v: %d %s", caps, a.status, a.body)
	}
}

// run is POST /api/v1/runs with token.
func (b budgetTeam) run(t *testing.T, token string, spec map[string]any) apiAnswer {
	t.Helper()
	return b.srv.apiCall(t, "POST", "/api/v1/runs", token, spec)
}

// mustRun runs spec, which must pass, and answers the run's cost and
// tokens as its history line gives them.
func (b budgetTeam) mustRun(t *testing.T, token string, spec map[string]any) (cost float64, tokens int) {
	t.Helper()
	a := b.run(t, token, spec)
	if a.status != http.StatusOK && a.status != http.StatusCreated {
		t.Fatalf("run: %d %s", a.status, a.body)
	}
	var r apiRun
	a.json(t, &r)
	if r.Status != "done" {
		t.Fatalf("run ended %q: %s", r.Status, a.body)
	}
	var page apiRunPage
	b.srv.apiCall(t, "GET", "/api/v1/runs?limit=1", token, nil).json(t, &page)
	if len(page.Items) != 1 || page.Items[0].ID != r.ID {
		t.Fatalf("history does not start with run %d: %+v", r.ID, page.Items)
	}
	return page.Items[0].Cost, page.Items[0].Tokens
}

// wantRefused checks that a is a 402 for the cap scope with its limit,
// spend and reset, says so in words, and that nothing was sent.
func (b budgetTeam) wantRefused(t *testing.T, a apiAnswer, sentBefore int64, scope string, limit, spent float64, words ...string) budgetAnswer {
	t.Helper()
	var out budgetAnswer
	a.json(t, &out)
	if a.status != http.StatusPaymentRequired || out.Budget == nil {
		t.Fatalf("want a 402 with a budget, got %d %s", a.status, a.body)
	}
	if out.Budget.Scope != scope {
		t.Errorf("scope %q, want %q", out.Budget.Scope, scope)
	}
	if scope != "tokens" && (!near(out.Budget.LimitUSD, limit) || !near(out.Budget.SpentUSD, spent)) {
		t.Errorf("limit %v spent %v, want %v and %v", out.Budget.LimitUSD, out.Budget.SpentUSD, limit, spent)
	}
	now := time.Now().UTC()
	next := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	if !out.Budget.ResetsAt.Equal(next) {
		t.Errorf("resets_at %v, want %v", out.Budget.ResetsAt, next)
	}
	words = append(words, "is used up", "Nothing was sent", "It resets on "+next.Format("2 January 2006"))
	for _, w := range words {
		if !strings.Contains(out.Error, w) {
			t.Errorf("the message %q does not say %q", out.Error, w)
		}
	}
	if got := b.up.sent.Load(); got != sentBefore {
		t.Errorf("the simulator received %d requests, want %d: something was sent", got, sentBefore)
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestBudgetEachCapRefusesTheNextRunWithNothingSent(t *testing.T) {
	t.Parallel()
	b := newBudgetTeam(t)
	cost, _ := b.mustRun(t, b.bobTok, pricedRun("Tell me about glaciers"))
	if cost <= 0 {
		t.Fatalf("a run of the priced model cost %v", cost)
	}
	_, tokens := b.mustRun(t, b.bobTok, unpricedRun("Tell me about rivers"))
	if tokens <= 0 {
		t.Fatalf("a run of the unpriced model used %d tokens", tokens)
	}
	bob := strconv.FormatInt(b.bobID, 10)
	spent := cost // every run is bob's, on sim
	for _, tt := range []struct {
		name   string
		caps   map[string]any
		run    map[string]any
		scope  string
		limit  float64
		words  []string
		raised map[string]any
	}{
		{"team", map[string]any{"team_usd": cost}, pricedRun("again"), "team", cost,
			[]string{"The team's monthly budget of"}, map[string]any{"team_usd": 1}},
		{"user default", map[string]any{"user_default_usd": cost}, pricedRun("again"), "user", cost,
			[]string{"Your monthly budget of"}, map[string]any{"user_default_usd": 1}},
		{"user override", map[string]any{"user_default_usd": 100, "users": map[string]any{bob: cost / 2}}, pricedRun("again"), "user", cost / 2,
			[]string{"Your monthly budget of"}, map[string]any{"user_default_usd": 100, "users": map[string]any{bob: 1}}},
		{"provider", map[string]any{"providers": map[string]any{"sim": cost}}, pricedRun("again"), "provider", cost,
			[]string{"The team's monthly budget for sim of"}, map[string]any{"providers": map[string]any{"sim": 1}}},
		{"token cap", map[string]any{"token_cap": tokens}, unpricedRun("again"), "tokens", 0,
			[]string{"The team's monthly cap of " + strconv.Itoa(tokens) + " tokens for models without a price"}, map[string]any{"token_cap": 1_000_000}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b.setBudgets(t, tt.caps)
			before := b.up.sent.Load()
			out := b.wantRefused(t, b.run(t, b.bobTok, tt.run), before, tt.scope, tt.limit, spent, tt.words...)
			if tt.scope == "tokens" && (out.Budget.LimitTokens != int64(tokens) || out.Budget.SpentTokens != int64(tokens)) {
				t.Errorf("token cap %d, used %d; want %d and %d", out.Budget.LimitTokens, out.Budget.SpentTokens, tokens, tokens)
			}
			// Raised, the cap lets the next run through at once.
			b.setBudgets(t, tt.raised)
			c, _ := b.mustRun(t, b.bobTok, tt.run)
			spent += c
			if got := b.up.sent.Load(); got != before+1 {
				t.Errorf("after raising the cap the simulator received %d requests, want %d", got, before+1)
			}
			b.setBudgets(t, map[string]any{})
		})
	}

	// The token cap counts runs without a price only: a priced run passes it.
	b.setBudgets(t, map[string]any{"token_cap": 0})
	b.mustRun(t, b.bobTok, pricedRun("priced"))
	before := b.up.sent.Load()
	b.wantRefused(t, b.run(t, b.bobTok, unpricedRun("unpriced")), before, "tokens", 0, 0)
}
