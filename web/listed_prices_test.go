package web_test

// The prices a provider's own listing gives are kept with the date Knobs
// first read them: after a restart, with the listing unreachable, runs
// are still costed at them and GET /api/v1/prices still shows them with
// that date; an admin's price wins over them and a listing never
// overwrites it; a reasoning price from the listing reaches the runs'
// prices and GET /api/v1/providers.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"knobs/llm/sim"
)

// listingUpstream is the simulator serving as Cerebras, whose
// OpenRouter-format listing prices sim-fast as the test sets it, and
// whose model lists can be made to fail.
type listingUpstream struct {
	sim http.Handler

	mu                       sync.Mutex
	input, output, reasoning float64 // USD per million tokens
	down                     bool
}

func (u *listingUpstream) setPrice(input, output, reasoning float64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.input, u.output, u.reasoning = input, output, reasoning
}

func (u *listingUpstream) setDown(down bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.down = down
}

func (u *listingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/models" {
		u.sim.ServeHTTP(w, r)
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.down {
		http.Error(w, "the model list is down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Get("format") != "openrouter" {
		io.WriteString(w, `{"object":"list","data":[{"id":"sim-fast","object":"model","created":1,"owned_by":"Knobs"}]}`)
		return
	}
	perToken := func(perMillion float64) string { return strconv.FormatFloat(perMillion/1e6, 'g', -1, 64) }
	fmt.Fprintf(w, `{"data":[{"id":"sim-fast","context_length":32768,"max_output_length":4096,"pricing":{"prompt":%q,"completion":%q,"internal_reasoning":%q}}]}`,
		perToken(u.input), perToken(u.output), perToken(u.reasoning))
}

// cerebrasRun is a waited-for run of sim-fast on the Cerebras provider.
func cerebrasRun(prompt string) map[string]any {
	return map[string]any{"provider": "cerebras", "endpoint": "chat", "wait": true, "body": map[string]any{
		"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": prompt}}, "max_completion_tokens": 30}}
}

func TestListedPricesAreKeptWithTheirDateAcrossARestart(t *testing.T) {
	t.Parallel()
	up := &listingUpstream{sim: sim.NewHandler(sim.Options{TokensPerSecond: sim.NoPacing})}
	up.setPrice(2, 6, 10)
	upstream := httptest.NewServer(up)
	t.Cleanup(upstream.Close)
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	env := []serverOption{withEnv("CEREBRAS_API_KEY", "csk-listing-fixture-0123456789"), withEnv("CEREBRAS_BASE_URL", upstream.URL), withClock(clock)}
	first, admin := newTeam(t, env...)
	bob := admin.addMember("bob")
	adminTok, bobTok := admin.makeToken("ci", "write", nil).Token, bob.makeToken("ci", "write", nil).Token

	read := clock.Now()
	p, _ := first.prices(t, adminTok)
	got := p["cerebras/sim-fast"]
	if got.Source != "provider" || got.Input == nil || *got.Input != 2 || *got.Output != 6 || *got.CachedInput != 2 || *got.Reasoning != 10 ||
		got.SetAt == nil || !got.SetAt.Equal(read) {
		t.Fatalf("cerebras/sim-fast as listed: %+v, want $2/$6, reasoning $10, set at %v", got, read)
	}
	var providers struct {
		Providers []struct {
			ID     string `json:"id"`
			Models []struct {
				ID             string  `json:"id"`
				InputPrice     float64 `json:"input_price"`
				ReasoningPrice float64 `json:"reasoning_price"`
			} `json:"models"`
		} `json:"providers"`
	}
	first.apiCall(t, "GET", "/api/v1/providers", adminTok, nil).json(t, &providers)
	reasoningPrice := -1.0
	for _, pr := range providers.Providers {
		for _, m := range pr.Models {
			if pr.ID == "cerebras" && m.ID == "sim-fast" {
				reasoningPrice = m.ReasoningPrice
			}
		}
	}
	if reasoningPrice != 10 {
		t.Fatalf("GET /api/v1/providers gives cerebras/sim-fast a reasoning price of %v, want the listing's 10", reasoningPrice)
	}

	// An admin's price wins, and a listing read afterwards, at a new
	// price, leaves it as it is. Bob's model list is his own client's,
	// so it is read afresh.
	if a := first.apiCall(t, "PUT", "/api/v1/prices/cerebras/sim-fast", adminTok, map[string]any{"input": 1, "output": 1}); a.status != http.StatusOK {
		t.Fatalf("PUT price: %d %s", a.status, a.body)
	}
	adminSet := clock.Now()
	clock.advance(time.Hour)
	up.setPrice(3, 9, 0)
	p, _ = first.prices(t, bobTok)
	if got := p["cerebras/sim-fast"]; got.Source != "admin" || *got.Input != 1 || *got.Output != 1 || got.SetAt == nil || !got.SetAt.Equal(adminSet) {
		t.Fatalf("the admin's price after the listing changed: %+v, want the admin's $1/$1 set at %v", got, adminSet)
	}
	if a := first.apiCall(t, "DELETE", "/api/v1/prices/cerebras/sim-fast", adminTok, nil); a.status != http.StatusNoContent {
		t.Fatalf("DELETE price: %d %s", a.status, a.body)
	}
	changed := clock.Now()
	p, _ = first.prices(t, bobTok)
	if got := p["cerebras/sim-fast"]; got.Source != "provider" || *got.Input != 3 || *got.Output != 9 || *got.Reasoning != 9 ||
		got.SetAt == nil || !got.SetAt.Equal(changed) {
		t.Fatalf("the listing's new price: %+v, want $3/$9 (reasoning as output) set at %v", got, changed)
	}

	// A restart, with the provider's model list down: the kept price
	// costs the run and is listed with its date.
	first.stop()
	up.setDown(true)
	clock.advance(time.Hour)
	second := newServer(t, append(env, withEnv("KNOBS_DB", first.dbPath))...)
	a := second.apiCall(t, "POST", "/api/v1/runs", adminTok, cerebrasRun("Tell me about the sea."))
	if a.status != http.StatusCreated {
		t.Fatalf("POST /api/v1/runs: %d %s", a.status, a.body)
	}
	var run apiRun
	a.json(t, &run)
	r := second.runUsage(t, adminTok, run.ID)
	want := (float64(r.Usage.PromptTokens)*3 + float64(r.Usage.CompletionTokens)*9) / 1e6
	if run.Status != "done" || r.Usage.CompletionTokens == 0 || !near(r.Metrics.CostUSD, want) {
		t.Fatalf("a run after the restart: %s, cost %v, want %v from its usage %+v at the listing's $3/$9", run.Status, r.Metrics.CostUSD, want, r.Usage)
	}
	p, body := second.prices(t, adminTok)
	if got := p["cerebras/sim-fast"]; got.Source != "provider" || *got.Input != 3 || *got.Output != 9 || got.SetAt == nil || !got.SetAt.Equal(changed) {
		t.Fatalf("cerebras/sim-fast after the restart: %+v, want $3/$9 listed since %v", got, changed)
	}
	if strings.Contains(body, "csk-listing-fixture") {
		t.Fatal("the provider's key is in GET /api/v1/prices")
	}
}
