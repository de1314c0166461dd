package web_test

// Monthly budgets over real HTTP with the simulator as the upstream: each
// cap refuses the next run with a 402 that says which cap, what was spent
// and when it resets, and the simulator's handler proves nothing was
// sent; the warning at the admin's share; runs racing past a cap; an
// exempt admin; a cap raised; experiment cells and live arena answers
// refused; the caps' validation.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
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

// lastRunTokens is the prompt and completion tokens of token's latest run.
func (b budgetTeam) lastRunTokens(t *testing.T, token string) int {
	t.Helper()
	var page apiRunPage
	b.srv.apiCall(t, "GET", "/api/v1/runs?limit=1", token, nil).json(t, &page)
	if len(page.Items) != 1 {
		t.Fatalf("no run in history")
	}
	var r apiRun
	b.srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/runs/%d", page.Items[0].ID), token, nil).json(t, &r)
	if r.Usage == nil {
		t.Fatalf("run %d has no usage", r.ID)
	}
	return r.Usage.PromptTokens + r.Usage.CompletionTokens
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

func TestBudgetEachCapRefusesTheNextRunWithNothingSent(t *testing.T) {
	t.Parallel()
	b := newBudgetTeam(t)
	cost, _ := b.mustRun(t, b.bobTok, pricedRun("Tell me about glaciers"))
	if cost <= 0 {
		t.Fatalf("a run of the priced model cost %v", cost)
	}
	b.mustRun(t, b.bobTok, unpricedRun("Tell me about rivers"))
	// A run without a price counts its prompt and its answer.
	tokens := b.lastRunTokens(t, b.bobTok)
	if tokens <= 40 {
		t.Fatalf("a run of the unpriced model used %d tokens, want its 40 and its prompt's", tokens)
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

// newBudgetTeamAt is newBudgetTeam with a simulator that streams at tps
// tokens a second.
func newBudgetTeamAt(t *testing.T, tps float64) budgetTeam {
	t.Helper()
	b := newBudgetTeam(t)
	b.up.sim = sim.NewHandler(sim.Options{TokensPerSecond: tps})
	return b
}

func TestBudgetRunsRacingPastACapOvershootByOneRunAtMost(t *testing.T) {
	t.Parallel()
	// Slow enough that the runs are all still going when the last starts:
	// without what they hold, each would see only the first run's cost.
	b := newBudgetTeamAt(t, 100)
	cost, _ := b.mustRun(t, b.bobTok, pricedRun("Tell me about glaciers"))
	// Room for two and a half more runs of the same cost.
	limit := cost + 2.5*cost
	b.setBudgets(t, map[string]any{"users": map[string]any{strconv.FormatInt(b.bobID, 10): limit}})
	before := b.up.sent.Load()
	const n = 6
	statuses := make([]int, n)
	bodies := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := b.run(t, b.bobTok, pricedRun("Tell me about glaciers"))
			statuses[i], bodies[i] = a.status, a.body
		}()
	}
	wg.Wait()
	passed, refused := 0, 0
	for i, st := range statuses {
		switch st {
		case http.StatusCreated:
			passed++
		case http.StatusPaymentRequired:
			refused++
			if !strings.Contains(bodies[i], "in runs still going") && !strings.Contains(bodies[i], "spent this month") {
				t.Errorf("refusal: %s", bodies[i])
			}
		default:
			t.Errorf("run %d: %d %s", i, st, bodies[i])
		}
	}
	// Each run holds what it may cost until it is stored: the third
	// crosses the cap, the rest are refused; at most n-1 could overshoot,
	// and here only the one that crossed does.
	if passed != 3 || refused != n-3 {
		t.Errorf("%d runs passed and %d were refused; want 3 and %d", passed, refused, n-3)
	}
	if got := b.up.sent.Load() - before; got != int64(passed) {
		t.Errorf("the simulator received %d requests for %d runs that passed", got, passed)
	}
	var caps budgetsAnswer
	b.srv.apiCall(t, "GET", "/api/v1/budgets", b.bobTok, nil).json(t, &caps)
	mine := caps.spend("user", b.bobID)
	if mine == nil || mine.SpentUSD > limit+cost+1e-12 {
		t.Errorf("bob spent %+v against a cap of %v: more than one run over", mine, limit)
	}
}

// budgetsAnswer is GET /api/v1/budgets.
type budgetsAnswer struct {
	TeamUSD        *float64           `json:"team_usd"`
	UserDefaultUSD *float64           `json:"user_default_usd"`
	Users          map[string]float64 `json:"users"`
	Providers      map[string]float64 `json:"providers"`
	WarnAt         float64            `json:"warn_at"`
	TokenCap       *int64             `json:"token_cap"`
	Exempt         []int64            `json:"exempt"`
	Spent          []struct {
		Scope       string   `json:"scope"`
		UserID      int64    `json:"user_id"`
		Username    string   `json:"username"`
		Provider    string   `json:"provider"`
		LimitUSD    *float64 `json:"limit_usd"`
		SpentUSD    float64  `json:"spent_usd"`
		LimitTokens int64    `json:"limit_tokens"`
		SpentTokens int64    `json:"spent_tokens"`
		Exempt      bool     `json:"exempt"`
	} `json:"spent"`
	ResetsAt time.Time `json:"resets_at"`
}

// spend is the figure for scope (and user, for scope user), or nil.
func (a budgetsAnswer) spend(scope string, user int64) *struct {
	Scope       string   `json:"scope"`
	UserID      int64    `json:"user_id"`
	Username    string   `json:"username"`
	Provider    string   `json:"provider"`
	LimitUSD    *float64 `json:"limit_usd"`
	SpentUSD    float64  `json:"spent_usd"`
	LimitTokens int64    `json:"limit_tokens"`
	SpentTokens int64    `json:"spent_tokens"`
	Exempt      bool     `json:"exempt"`
} {
	for i, s := range a.Spent {
		if s.Scope == scope && s.UserID == user {
			return &a.Spent[i]
		}
	}
	return nil
}

func TestBudgetWarnsAtTheAdminsShare(t *testing.T) {
	t.Parallel()
	b := newBudgetTeam(t)
	bob := strconv.FormatInt(b.bobID, 10)
	cost, _ := b.mustRun(t, b.bobTok, pricedRun("Tell me about glaciers"))
	// Below the share: no warning on the next run or the page.
	b.setBudgets(t, map[string]any{"users": map[string]any{bob: cost / 0.5}})
	if p := b.bob.open("/"); p.has("monthly budget") {
		t.Errorf("the playground warns at 50%%")
	}
	a := b.run(t, b.bobTok, pricedRun("Tell me about glaciers"))
	if a.status != http.StatusCreated || a.header.Get("X-Knobs-Budget-Warning") != "" {
		t.Fatalf("a run at 50%% of the cap: %d, warning %q", a.status, a.header.Get("X-Knobs-Budget-Warning"))
	}
	// Past it: 85% of the cap is used (two runs' cost).
	b.setBudgets(t, map[string]any{"users": map[string]any{bob: 2 * cost / 0.855}})
	want := "You have used 85% of your monthly budget"
	a = b.run(t, b.bobTok, pricedRun("Tell me about glaciers"))
	if a.status != http.StatusCreated || !strings.HasPrefix(a.header.Get("X-Knobs-Budget-Warning"), want) {
		t.Errorf("a run at 85%% of the cap: %d, warning %q", a.status, a.header.Get("X-Knobs-Budget-Warning"))
	}
	// The page's own run (its event stream) carries it too, and the
	// playground shows it when opened. (Three runs are spent now; the
	// page's is of a model without a price, which adds no cost.)
	b.setBudgets(t, map[string]any{"users": map[string]any{bob: 3 * cost / 0.855}})
	r := b.bob.post("/runs", "application/json", strings.NewReader(`{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"max_tokens":5}}`),
		http.Header{"Accept": {"text/event-stream"}, "X-CSRF-Token": {b.bob.token()}})
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("X-Knobs-Budget-Warning"), "You have used") {
		t.Errorf("the page's run: %d, warning %q", r.status, r.header.Get("X-Knobs-Budget-Warning"))
	}
	if p := b.bob.open("/"); !p.has("You have used") || !p.has("of your monthly budget") {
		t.Errorf("the playground does not warn at 85%%:\n%s", errorText(p))
	}
	// A share set higher stops the warning.
	b.setBudgets(t, map[string]any{"users": map[string]any{bob: 3 * cost / 0.855}, "warn_at": 0.95})
	if a := b.run(t, b.bobTok, pricedRun("Tell me about glaciers")); a.header.Get("X-Knobs-Budget-Warning") != "" {
		t.Errorf("warned below a share of 95%%: %q", a.header.Get("X-Knobs-Budget-Warning"))
	}
}

func TestBudgetExemptAdminPasses(t *testing.T) {
	t.Parallel()
	b := newBudgetTeam(t)
	b.setBudgets(t, map[string]any{"team_usd": 0, "exempt": []int64{b.adminID}})
	cost, _ := b.mustRun(t, b.adminTok, pricedRun("Tell me about glaciers"))
	before := b.up.sent.Load()
	if before != 1 {
		t.Fatalf("the exempt admin's run was not sent: %d requests", before)
	}
	// What the exempt admin spends still counts as the team's.
	b.wantRefused(t, b.run(t, b.bobTok, pricedRun("Tell me about glaciers")), before, "team", 0, cost, "The team's monthly budget of")
	// The page refuses with the same message, as JSON to its script.
	r := b.bob.post("/runs", "application/json", strings.NewReader(`{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"hi"}]}}`),
		http.Header{"Accept": {"text/event-stream"}, "X-CSRF-Token": {b.bob.token()}})
	if r.status != http.StatusPaymentRequired || !strings.Contains(r.body, "The team's monthly budget") || !strings.Contains(r.body, `"scope":"team"`) {
		t.Errorf("the page's run: %d %s", r.status, r.body)
	}
	if got := b.up.sent.Load(); got != before {
		t.Errorf("the simulator received %d requests, want %d", got, before)
	}
}

func TestBudgetRefusesExperimentCells(t *testing.T) {
	t.Parallel()
	b := newBudgetTeam(t)
	b.setBudgets(t, map[string]any{"team_usd": 0})
	ds := b.srv.makeDataset(t, "bob", 3)
	a := b.srv.apiCall(t, "POST", "/api/v1/experiments", b.bobTok, map[string]any{
		"name": "capped", "dataset": ds.ID, "concurrency": 2,
		"variants": []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "About {{topic}}"}}, "max_tokens": 20}}},
		"graders": []any{map[string]any{"type": "length", "min": 1}},
	})
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	var e apiExperiment
	a.json(t, &e)
	if _, status := b.srv.followExperiment(t, b.bobTok, e.Events); status != "done" {
		t.Errorf("the experiment ended %q", status)
	}
	cells := b.srv.results(t, b.bobTok, e.ID)
	if len(cells) != 3 {
		t.Fatalf("%d cells", len(cells))
	}
	for _, c := range cells {
		if c.Status != "error" || !strings.HasPrefix(c.Error, "The team's monthly budget of") || !strings.Contains(c.Error, "Nothing was sent") {
			t.Errorf("cell %d: %s %q", c.Row, c.Status, c.Error)
		}
	}
	if got := b.up.sent.Load(); got != 0 {
		t.Errorf("the simulator received %d requests", got)
	}
}

func TestBudgetRefusesLiveArenaAnswersAndKeepsMadePairsVotable(t *testing.T) {
	t.Parallel()
	b := newBudgetTeam(t)
	a := b.srv.apiCall(t, "POST", "/api/v1/arenas", b.adminTok, map[string]any{
		"name": "Live", "audience": "public", "mode": "live", "budget_calls": 20,
		"contestants": []any{contestant("Aurora", "sim-fast", nil), contestant("Borealis", "sim-fast", map[string]any{"temperature": 1.2}),
			contestant("Cirrus", "sim-fast", map[string]any{"temperature": 0.2})},
		"prompts": map[string]any{"list": []string{"Tell me about glaciers"}}})
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	var ar arenaAPI
	a.json(t, &ar)
	first := voter{b.srv.newClient(t)}
	if r, _ := first.pair(t, ar.Link); r.status != http.StatusOK {
		t.Fatalf("the first pair: %d %s", r.status, r.body)
	}
	made := b.up.sent.Load()
	if made != 2 {
		t.Fatalf("the first pair made %d answers", made)
	}
	b.setBudgets(t, map[string]any{"team_usd": 0})
	// A second voter still gets the pair whose answers are made, and votes.
	second := voter{b.srv.newClient(t)}
	r, p := second.pair(t, ar.Link)
	if r.status != http.StatusOK {
		t.Fatalf("the made pair: %d %s", r.status, r.body)
	}
	if r, _ := second.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"a"}`, p["pair_id"])); r.status != http.StatusOK {
		t.Fatalf("vote: %d %s", r.status, r.body)
	}
	// A pair that needs a new answer is refused, with nothing sent.
	r, _ = second.pair(t, ar.Link)
	if r.status != http.StatusPaymentRequired || !strings.Contains(r.body, "This arena cannot generate more answers now") {
		t.Errorf("a pair needing new answers: %d %s", r.status, r.body)
	}
	if got := b.up.sent.Load(); got != made {
		t.Errorf("the simulator received %d requests, want %d", got, made)
	}
}

func TestBudgetCapsAreCheckedAndMembersSeeTheirOwn(t *testing.T) {
	t.Parallel()
	b := newBudgetTeam(t)
	bob := strconv.FormatInt(b.bobID, 10)
	b.setBudgets(t, map[string]any{"team_usd": 50, "user_default_usd": 5, "users": map[string]any{bob: 2},
		"providers": map[string]any{"sim": 10}, "warn_at": 0.75, "token_cap": 1000, "exempt": []int64{b.adminID}})
	get := func(token string) (apiAnswer, budgetsAnswer) {
		a := b.srv.apiCall(t, "GET", "/api/v1/budgets", token, nil)
		var out budgetsAnswer
		a.json(t, &out)
		return a, out
	}
	before, caps := get(b.adminTok)
	if caps.TeamUSD == nil || *caps.TeamUSD != 50 || caps.Users[bob] != 2 || caps.Providers["sim"] != 10 || caps.WarnAt != 0.75 ||
		caps.TokenCap == nil || *caps.TokenCap != 1000 || len(caps.Exempt) != 1 || caps.Exempt[0] != b.adminID {
		t.Errorf("the caps read back: %s", before.body)
	}
	if s := caps.spend("user", b.adminID); s == nil || !s.Exempt {
		t.Errorf("the admin's figure: %+v", s)
	}

	bad := map[string]any{"team_usd": -1, "user_default_usd": 5, "users": map[string]any{"9999": 3, bob: -2}, "providers": map[string]any{"nope": 1},
		"warn_at": 0, "token_cap": -5, "exempt": []int64{9999}}
	a := b.srv.apiCall(t, "PUT", "/api/v1/budgets", b.adminTok, bad)
	wantAPIError(t, "bad caps", a, http.StatusUnprocessableEntity, "team_usd", "users.9999", "users."+bob, "providers.nope", "warn_at", "token_cap", "exempt[0]")
	if a := b.srv.apiCall(t, "PUT", "/api/v1/budgets", b.adminTok, map[string]any{"warn_at": 1.5}); a.status != http.StatusUnprocessableEntity {
		t.Errorf("warn_at 1.5: %d %s", a.status, a.body)
	}
	if after, _ := get(b.adminTok); after.body != before.body {
		t.Errorf("refused caps changed something:\n%s\n%s", before.body, after.body)
	}

	// A member cannot set caps, and sees those on them only.
	a = b.srv.apiCall(t, "PUT", "/api/v1/budgets", b.bobTok, map[string]any{})
	wantAPIError(t, "a member's PUT", a, http.StatusForbidden)
	a, mine := get(b.bobTok)
	if a.status != http.StatusOK || len(mine.Exempt) != 0 || len(mine.Users) != 1 || mine.Users[bob] != 2 {
		t.Errorf("bob's caps: %s", a.body)
	}
	for _, s := range mine.Spent {
		if s.Scope == "user" && s.UserID != b.bobID {
			t.Errorf("bob sees %s's figure", s.Username)
		}
	}
	if s := mine.spend("user", b.bobID); s == nil || s.LimitUSD == nil || *s.LimitUSD != 2 {
		t.Errorf("bob's own figure: %+v", s)
	}
}

func TestBudgetSettingsFormSetsTheCapsAtOnce(t *testing.T) {
	t.Parallel()
	b := newBudgetTeam(t)
	cost, _ := b.mustRun(t, b.bobTok, pricedRun("Tell me about glaciers"))
	bob := strconv.FormatInt(b.bobID, 10)
	page := b.admin.open("/settings")
	if !page.has("Monthly budgets") || !page.has(`name="users.`+bob+`"`) || !page.has(`name="providers.sim"`) {
		t.Fatalf("the settings page has no budgets form:\n%s", errorText(page))
	}
	// A mistake is shown under its field, and nothing is saved.
	r := b.admin.postForm("/settings/budgets", form("team_usd", "lots", "warn_pct", "150", "users."+bob, "-3"))
	wantPage(t, r, http.StatusUnprocessableEntity, "Give an amount in US dollars", "Give a percentage above 0 and at most 100", "of 0 or more")
	if !strings.Contains(r.body, `value="lots"`) {
		t.Errorf("the refused form does not keep what was typed")
	}
	var caps budgetsAnswer
	b.srv.apiCall(t, "GET", "/api/v1/budgets", b.adminTok, nil).json(t, &caps)
	if caps.TeamUSD != nil || len(caps.Users) != 0 || caps.WarnAt != 0.8 {
		t.Errorf("a refused form changed the caps: %+v", caps)
	}
	if r := b.bob.postForm("/settings/budgets", form("team_usd", "0")); r.status != http.StatusForbidden {
		t.Errorf("a member's budgets form: %d", r.status)
	}
	// Saved, bob's own cap refuses his next run at once.
	r = b.admin.submit("/settings/budgets", form("team_usd", "50", "warn_pct", "90", "users."+bob, strconv.FormatFloat(cost, 'f', -1, 64), "exempt", strconv.FormatInt(b.adminID, 10)))
	wantPage(t, r, http.StatusOK, "The budgets are saved")
	b.srv.apiCall(t, "GET", "/api/v1/budgets", b.adminTok, nil).json(t, &caps)
	if caps.TeamUSD == nil || *caps.TeamUSD != 50 || caps.WarnAt != 0.9 || !near(caps.Users[bob], cost) || len(caps.Exempt) != 1 {
		t.Errorf("the caps saved: %+v", caps)
	}
	before := b.up.sent.Load()
	b.wantRefused(t, b.run(t, b.bobTok, pricedRun("again")), before, "user", cost, cost, "Your monthly budget of")
	if !r.has("100%") {
		t.Errorf("the page does not show bob's cap used")
	}
}

func TestBudgetRefusesAComparisonWhole(t *testing.T) {
	t.Parallel()
	b := newBudgetTeam(t)
	cost, _ := b.mustRun(t, b.bobTok, pricedRun("Tell me about glaciers"))
	// The cap on sim is used up: both panes are checked, and neither is
	// sent.
	b.setBudgets(t, map[string]any{"providers": map[string]any{"sim": cost}})
	pane := `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"max_tokens":5}}`
	before := b.up.sent.Load()
	r := b.bob.post("/compare/runs", "application/json", strings.NewReader(`{"panes":[`+pane+`,`+pane+`]}`),
		http.Header{"X-Csrf-Token": {b.bob.token()}, "Accept": {"application/json"}})
	if r.status != http.StatusPaymentRequired || !strings.Contains(r.body, "The team's monthly budget for sim") || !strings.Contains(r.body, `"scope":"provider"`) {
		t.Errorf("a comparison past the sim cap: %d %s", r.status, r.body)
	}
	if got := b.up.sent.Load(); got != before {
		t.Errorf("the simulator received %d requests, want %d", got, before)
	}
	// Raised, the comparison starts whole.
	b.setBudgets(t, map[string]any{"providers": map[string]any{"sim": 1}})
	r = b.bob.post("/compare/runs", "application/json", strings.NewReader(`{"panes":[`+pane+`,`+pane+`]}`),
		http.Header{"X-Csrf-Token": {b.bob.token()}, "Accept": {"application/json"}})
	if r.status != http.StatusOK && r.status != http.StatusCreated {
		t.Errorf("the comparison after raising the cap: %d %s", r.status, r.body)
	}
}

// A run stopped before the provider's last chunk, which carries the
// usage, is billed all the same: Knobs counts its tokens itself, and its
// cost reaches the history, the budgets and the caps. Otherwise pressing
// Stop just before the end would make every run free.
func TestBudgetCountsARunStoppedBeforeItsUsage(t *testing.T) {
	t.Parallel()
	b := newBudgetTeamAt(t, 40)
	b.setBudgets(t, map[string]any{"team_usd": 100})
	body := `{"provider":"sim","endpoint":"chat","body":{"model":"sim-reasoning","reasoning_effort":"low","max_completion_tokens":400,"min_completion_tokens":400,"messages":[{"role":"user","content":"A long tale of glaciers"}]}}`
	_, run := b.bob.postRun(body)
	deltas := 0
	b.bob.readEvents(run.Events, 0, func(e sseEvent) bool {
		if e.event == "delta" || e.event == "reasoning" {
			deltas++
		}
		return deltas >= 5
	})
	r := b.bob.post(fmt.Sprintf("/runs/%d/cancel", run.ID), "application/json", nil, http.Header{"X-Csrf-Token": {b.bob.token()}, "Accept": {"application/json"}})
	if r.status != http.StatusAccepted {
		t.Fatalf("cancel answered %d %s", r.status, r.body)
	}
	_, events := b.bob.readEvents(run.Events, 0, nil)
	last := events[len(events)-1]
	if last.event != "done" || !strings.Contains(last.data, `"status":"cancelled"`) || !strings.Contains(last.data, `"estimated":true`) {
		t.Fatalf("last event %+v, want done, cancelled, with estimated usage", last)
	}

	var page apiRunPage
	b.srv.apiCall(t, "GET", "/api/v1/runs?limit=1", b.bobTok, nil).json(t, &page)
	if len(page.Items) != 1 || page.Items[0].ID != run.ID || page.Items[0].Cost <= 0 {
		t.Fatalf("the cancelled run in history: %+v, want a cost", page.Items)
	}
	cost := page.Items[0].Cost
	var a budgetsAnswer
	b.srv.apiCall(t, "GET", "/api/v1/budgets", b.adminTok, nil).json(t, &a)
	if s := a.spend("team", 0); s == nil || !near(s.SpentUSD, cost) {
		t.Fatalf("team spend %+v, want the cancelled run's $%v", s, cost)
	}
	// A cap below it refuses the next run, with nothing sent.
	b.setBudgets(t, map[string]any{"team_usd": cost / 2})
	sent := b.up.sent.Load()
	b.wantRefused(t, b.run(t, b.bobTok, pricedRun("One more")), sent, "team", cost/2, cost)
}

// Deleting runs from history does not give their spend back: the cap
// that refused a run still refuses it after the runs are gone.
func TestBudgetSpendSurvivesDeletingRuns(t *testing.T) {
	t.Parallel()
	b := newBudgetTeam(t)
	cost, _ := b.mustRun(t, b.bobTok, pricedRun("Tell me about glaciers"))
	b.setBudgets(t, map[string]any{"user_default_usd": cost / 2})
	sent := b.up.sent.Load()
	b.wantRefused(t, b.run(t, b.bobTok, pricedRun("Again")), sent, "user", cost/2, cost)

	var page apiRunPage
	b.srv.apiCall(t, "GET", "/api/v1/runs", b.bobTok, nil).json(t, &page)
	if len(page.Items) == 0 {
		t.Fatal("bob has no runs to delete")
	}
	for _, r := range page.Items {
		if a := b.srv.apiCall(t, "DELETE", fmt.Sprintf("/api/v1/runs/%d", r.ID), b.bobTok, nil); a.status != http.StatusNoContent {
			t.Fatalf("DELETE run %d: %d %s", r.ID, a.status, a.body)
		}
	}
	b.srv.apiCall(t, "GET", "/api/v1/runs", b.bobTok, nil).json(t, &page)
	if len(page.Items) != 0 {
		t.Fatalf("runs left after deleting: %+v", page.Items)
	}
	b.wantRefused(t, b.run(t, b.bobTok, pricedRun("Once more")), sent, "user", cost/2, cost)
}

// Each pane of a comparison is checked with what the panes before it
// would cost: three priced panes with room for one and a half are refused
// whole, with nothing sent, where checking once would let all three by.
func TestBudgetCountsEachPaneOfAComparison(t *testing.T) {
	t.Parallel()
	b := newBudgetTeam(t)
	cost, _ := b.mustRun(t, b.bobTok, pricedRun("Tell me about glaciers"))
	b.setBudgets(t, map[string]any{"user_default_usd": 2.5 * cost})
	pane, _ := json.Marshal(pricedRun("Tell me about glaciers")["body"])
	p := `{"provider":"sim","endpoint":"chat","body":` + string(pane) + `}`
	before := b.up.sent.Load()
	r := b.bob.post("/compare/runs", "application/json", strings.NewReader(`{"panes":[`+p+`,`+p+`,`+p+`]}`),
		http.Header{"X-Csrf-Token": {b.bob.token()}, "Accept": {"application/json"}})
	if r.status != http.StatusPaymentRequired || !strings.Contains(r.body, `"scope":"user"`) {
		t.Errorf("three panes with room for one and a half: %d %s", r.status, r.body)
	}
	if got := b.up.sent.Load(); got != before {
		t.Errorf("the simulator received %d requests, want %d", got, before)
	}
	// Two fit, and start.
	r = b.bob.post("/compare/runs", "application/json", strings.NewReader(`{"panes":[`+p+`,`+p+`]}`),
		http.Header{"X-Csrf-Token": {b.bob.token()}, "Accept": {"application/json"}})
	if r.status != http.StatusOK && r.status != http.StatusCreated {
		t.Errorf("two panes with room for them: %d %s", r.status, r.body)
	}
}

// A model an admin priced at $0 is free, not unpriced: the token cap for
// models without a price does not hold its runs, as the usage page does
// not list it among them.
func TestBudgetTokenCapLeavesAnAdminsFreeModel(t *testing.T) {
	t.Parallel()
	b := newBudgetTeam(t)
	b.setBudgets(t, map[string]any{"token_cap": 0})
	before := b.up.sent.Load()
	b.wantRefused(t, b.run(t, b.bobTok, unpricedRun("unpriced")), before, "tokens", 0, 0)
	free := map[string]any{"input": 0, "output": 0, "cached_input": 0, "reasoning": 0}
	if a := b.srv.apiCall(t, "PUT", "/api/v1/prices/sim/sim-fast", b.adminTok, free); a.status != http.StatusOK {
		t.Fatalf("PUT a free price: %d %s", a.status, a.body)
	}
	if cost, _ := b.mustRun(t, b.bobTok, unpricedRun("now free")); cost != 0 {
		t.Errorf("a run of a free model cost %v", cost)
	}
}

// A body naming more users, providers or exemptions than this Knobs has
// is refused with one message each, not one per entry, and changes
// nothing.
func TestBudgetCapsForMoreThanThereAreAreRefusedWhole(t *testing.T) {
	t.Parallel()
	b := newBudgetTeam(t)
	users, providers := map[string]any{}, map[string]any{}
	var exempt []int64
	for i := range 5000 {
		users[strconv.Itoa(100000+i)] = 1
		providers["p"+strconv.Itoa(i)] = 1
		exempt = append(exempt, int64(100000+i))
	}
	before := b.srv.apiCall(t, "GET", "/api/v1/budgets", b.adminTok, nil)
	a := b.srv.apiCall(t, "PUT", "/api/v1/budgets", b.adminTok, map[string]any{"users": users, "providers": providers, "exempt": exempt})
	wantAPIError(t, "caps for 5,000 unknown users and providers", a, http.StatusUnprocessableEntity, "users", "providers", "exempt")
	if len(a.body) > 4096 {
		t.Errorf("the refusal is %d bytes: a message per entry", len(a.body))
	}
	if after := b.srv.apiCall(t, "GET", "/api/v1/budgets", b.adminTok, nil); after.body != before.body {
		t.Errorf("refused caps changed something:\n%s\n%s", before.body, after.body)
	}
}
