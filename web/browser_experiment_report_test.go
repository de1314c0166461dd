package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"knobs/db"
)

// The owner shares an experiment's report from its page; someone with
// no account opens the link, and the report shows with its styles (the
// page's policy allows its one inline style sheet by hash, and nothing
// else).
func TestBrowserExperimentReportSharedAndOpenedSignedOut(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	_, tok, err := s.store.CreateToken(context.Background(), db.NewTokenInput{User: s.userID(t, "ada"), Name: "t", Scope: db.ScopeWrite}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ds := s.makeDataset(t, "ada", 2)
	a := s.apiCall(t, "POST", "/api/v1/experiments", tok, map[string]any{"name": "Rivers, briefly", "dataset": ds.ID,
		"variants": []any{map[string]any{"name": "brief", "provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "About {{topic}}"}}, "max_tokens": 12}}},
		"graders": []any{map[string]any{"type": "length", "min": 1, "name": "has text"}, map[string]any{"type": "json"}}})
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	var e apiExperiment
	a.json(t, &e)
	s.followExperiment(t, tok, e.Events)

	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+e.Events[len("/api/v1"):len(e.Events)-len("/events")]),
		chromedp.WaitVisible(chromedp.CSS("#experiment"))); err != nil {
		t.Fatal(err)
	}
	link := shareInPlace(t, ctx, "public")
	if !strings.Contains(link, "/e/") {
		t.Fatalf("the share link %q", link)
	}

	// Someone signed out: a browser context of its own, without ada's cookie.
	anyone, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	err = chromedp.Do(anyone, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("h1")))
	if err != nil {
		t.Fatal(err)
	}
	type look struct {
		Title, Pass, Fail string
		Cells             int
	}
	got, err := chromedp.Run(anyone, chromedp.Evaluate[look](`({
		title: document.querySelector("h1").textContent,
		pass: getComputedStyle(document.querySelector(".badge.pass")).backgroundColor,
		fail: getComputedStyle(document.querySelector(".badge.fail")).backgroundColor,
		cells: document.querySelectorAll(".cell").length,
	})`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Rivers, briefly" || got.Cells != 2 || got.Pass != "rgb(218, 251, 225)" || got.Fail != "rgb(255, 235, 233)" {
		t.Errorf("the shared report as seen signed out: %+v", got)
	}
	screenshot(t, anyone, "experiment-report.png")
}
