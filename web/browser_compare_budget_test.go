package web_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"knobs/llm/sim"
)

// The compare page warns, as the playground does, once a comparison's
// answer says the admin's share of a monthly budget is passed; a
// comparison past the budget shows which cap refused it, with nothing
// sent; the page opened then says the budget is used up.
func TestBrowserCompareBudgetWarningAndRefusal(t *testing.T) {
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
	// runAll runs both panes on model and waits until done holds.
	runAll := func(model, done string) {
		t.Helper()
		err := chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".cmp-pane").forEach((p) => {
				p.querySelector("[data-model]").value = "`+model+`";
				p.querySelector('[data-param="max_completion_tokens"] input').value = "20";
			})`),
			chromedp.Click(chromedp.CSS("#cmp-run")),
			chromedp.Poll[chromedp.Void](done+` && !document.getElementById("compare").classList.contains("running")`, chromedp.WithPollingInterval(50*time.Millisecond)),
		)
		if err != nil {
			t.Fatalf("running the comparison: %v", err)
		}
	}
	setCap(10 * cost)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/compare"), comparePanesReady(2)); err != nil {
		t.Fatal(err)
	}
	if !evalJS[bool](t, ctx, `document.getElementById("cmp-budget").hidden`) {
		t.Errorf("the compare page warns at 10%% of the budget")
	}
	// Used to 85% meanwhile: the comparison's answer brings the warning
	// (its panes on sim-fast, which has no price and so holds no dollars).
	setCap(cost / 0.855)
	runAll("sim-fast", `!document.getElementById("cmp-summary").hidden`)
	if err := chromedp.Do(ctx, waitJS(`!document.getElementById("cmp-budget").hidden && document.getElementById("cmp-budget").textContent.startsWith("You have used 85% of your monthly budget")`)); err != nil {
		t.Fatalf("no warning after the comparison: %q", evalJS[string](t, ctx, `document.getElementById("cmp-budget").textContent`))
	}
	if !evalJS[bool](t, ctx, `document.getElementById("cmp-error").hidden`) {
		t.Errorf("a comparison that ran shows an error: %q", evalJS[string](t, ctx, `document.getElementById("cmp-error").textContent`))
	}
	// Used up: the comparison is refused with the cap's message, as the
	// playground words it, and nothing is sent.
	setCap(cost)
	sent := up.sent.Load()
	runAll("sim-reasoning", `!document.getElementById("cmp-error").hidden`)
	msg := evalJS[string](t, ctx, `document.getElementById("cmp-error").hidden ? "" : document.getElementById("cmp-error").textContent`)
	if !strings.HasPrefix(msg, "monthly budget") || !strings.Contains(msg, "Your monthly budget of") || !strings.Contains(msg, "is used up") ||
		!strings.Contains(msg, "It resets on") {
		t.Errorf("the refusal shown: %q", msg)
	}
	if got := up.sent.Load(); got != sent {
		t.Errorf("the simulator received %d requests, want %d", got, sent)
	}
	screenshot(t, ctx, "compare-budget-refused.png")
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/compare"), comparePanesReady(2)); err != nil {
		t.Fatal(err)
	}
	if notice := evalJS[string](t, ctx, `document.getElementById("cmp-budget").hidden ? "" : document.getElementById("cmp-budget").textContent`); !strings.Contains(notice, "is used up") {
		t.Errorf("the compare page opened with the budget used up says %q", notice)
	}
}
