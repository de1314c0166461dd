package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The playground's cost estimate prices a model as its runs are priced:
// sim-fast has no listed price, and once an admin sets one the estimate
// is at the admin's price.
func TestBrowserPlaygroundEstimateUsesTheAdminsPrice(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada") // the first account: an admin
	api := s.newClient(t)
	api.mustLogIn("ada")
	estimate := func() string {
		return evalJS[string](t, ctx, `document.getElementById("pg-estimate").textContent`)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/"), choose("sim", "sim-fast"),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "1000"),
		waitJS(`document.getElementById("pg-estimate").textContent.includes("tokens (estimate)")`),
	); err != nil {
		t.Fatal(err)
	}
	if got := estimate(); !strings.Contains(got, "no price known") {
		t.Fatalf("the estimate for sim-fast before any price reads %q, want no price known", got)
	}

	if a := api.apiCall("PUT", "/api/v1/prices/sim/sim-fast", map[string]any{"input": 1000, "output": 2000}, true); a.status != http.StatusOK {
		t.Fatalf("PUT price: %d %s", a.status, a.body)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/"), choose("sim", "sim-fast"),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "1000"),
		waitJS(`document.getElementById("pg-estimate").textContent.includes("1,000 tokens")`),
	); err != nil {
		t.Fatalf("no cost at the admin's price: %v (estimate %q)", err, estimate())
	}
	// 1,000 tokens at $2,000 per million: $2 at most.
	if got := estimate(); !strings.Contains(got, "input ≈ $") || !strings.Contains(got, "output at most $2 (1,000 tokens)") {
		t.Errorf("the estimate at the admin's $1,000 in / $2,000 out per million reads %q", got)
	}
}
