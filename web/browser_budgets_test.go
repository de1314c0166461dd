package web_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"knobs/llm/sim"
)

// The playground warns once a run crosses the admin's share of a monthly
// budget, and a run past the budget shows which cap refused it, with
// nothing sent.
func TestBrowserBudgetBannerAndRefusal(t *testing.T) {
	up := &countingSim{sim: sim.NewHandler(sim.Options{TokensPerSecond: sim.NoPacing})}
	upstream := httptest.NewServer(up)
	t.Cleanup(upstream.Close)
	s := newServer(t, withSim(upstreamConfig(upstream)))
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	api := s.newClient(t)
	api.mustLogIn("ada")
	ada := strconv.FormatInt(s.userID(t, "ada"), 10)
	if a := api.apiCall("POST", "/api/v1/runs", pricedRun("Tell me about glaciers"), true); a.status != http.StatusCreated {
		t.Fatalf("a priced run: %d %s", a.status, a.body)
	}
	var page apiRunPage
	api.apiCall("GET", "/api/v1/runs?limit=1", nil, false).json(t, &page)
	cost := page.Items[0].Cost
	setCap := func(usd float64) {
		t.Helper()
		if a := api.apiCall("PUT", "/api/v1/budgets", map[string]any{"users": map[string]any{ada: usd}}, true); a.status != http.StatusOK {
			t.Fatalf("PUT /api/v1/budgets: %d %s", a.status, a.body)
		}
	}
	setCap(10 * cost)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/"), chromedp.WaitVisible(chromedp.CSS("#pg-run"))); err != nil {
		t.Fatal(err)
	}
	if !evalJS[bool](t, ctx, `document.getElementById("pg-budget").hidden`) {
		t.Errorf("the playground warns at 10%% of the budget")
	}
	// Used to 85% meanwhile: the next run's answer brings the warning.
	setCap(cost / 0.855)
	runUntilIdle(t, ctx)
	if err := chromedp.Do(ctx, waitJS(`!document.getElementById("pg-budget").hidden && document.getElementById("pg-budget").textContent.startsWith("You have used 85% of your monthly budget")`)); err != nil {
		t.Fatalf("no warning after the run: %q", evalJS[string](t, ctx, `document.getElementById("pg-budget").textContent`))
	}
	// Used up: the run is refused with the cap's message, nothing sent.
	setCap(cost)
	sent := up.sent.Load()
	runUntilIdle(t, ctx)
	msg := evalJS[string](t, ctx, `document.getElementById("pg-error").hidden ? "" : document.getElementById("pg-error").textContent`)
	if !strings.HasPrefix(msg, "monthly budget") || !strings.Contains(msg, "Your monthly budget of") || !strings.Contains(msg, "is used up") ||
		!strings.Contains(msg, "It resets on") || strings.Contains(msg, "provider failed") {
		t.Errorf("the refusal shown: %q", msg)
	}
	if got := up.sent.Load(); got != sent {
		t.Errorf("the simulator received %d requests, want %d", got, sent)
	}
	screenshot(t, ctx, "budget-refused.png")
}
