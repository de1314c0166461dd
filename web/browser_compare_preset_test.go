package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"knobs/db"
)

// Loading a preset into a compare pane fetches its setup from the server
// (the page lists only names) and fills that pane's model and parameters.
func TestBrowserCompareLoadsAPresetIntoAPane(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	spec := strings.Replace(presetSpecJSON, `"temperature":0.2`, `"temperature":0.35`, 1)
	p, err := s.store.CreatePreset(context.Background(), db.Preset{OwnerID: s.userID(t, "ada"), Name: "Terse summariser", Visibility: db.PresetTeam, Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/compare"),
		comparePanesReady(2),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("details.cmp-start").open = true`),
		chromedp.SetValue(chromedp.CSS("#cmp-preset"), fmt.Sprint(p.ID)),
		chromedp.SetValue(chromedp.CSS("#cmp-preset-pane"), "1"),
		chromedp.Click(chromedp.CSS("#cmp-preset-load")),
		chromedp.Poll[chromedp.Void](`(() => {
			const p = document.querySelectorAll(".cmp-pane")[1];
			const t = p && p.querySelector('[data-param="temperature"] input');
			return !p.hasAttribute("data-busy") && t && t.value === "0.35" && p.querySelector("[data-model]").value === "sim-fast";
		})()`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatal(err)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#cmp-status")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status, "Loaded preset “Terse summariser”") {
		t.Errorf("the status says %q", status)
	}
	// The other pane is untouched.
	other, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelectorAll(".cmp-pane")[0].querySelector('[data-param="temperature"] input').value`))
	if err != nil || other == "0.35" {
		t.Errorf("the first pane's temperature is %q (%v), want it unchanged", other, err)
	}
}
