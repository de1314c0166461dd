package web_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"knobs/db"
	"knobs/llm/sim"
)

// TestBrowserExperimentFillsLiveFiltersAndRates starts an experiment from
// the form (a dataset made here, two variants, a grader), watches the
// grid fill over the experiment's events without a reload, filters to
// the failures, rates a cell, and checks that on a phone the page does
// not scroll sideways (the grid scrolls in its own box).
func TestBrowserExperimentFillsLiveFiltersAndRates(t *testing.T) {
	// Paced so that cells end after the page is open: 30 tokens at 20/s.
	s := newServer(t, withSim(sim.NewConfig(sim.Options{TokensPerSecond: 20})))
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	user := s.userID(t, "ada")
	// The grader looks for the row's marker in the answer, which the
	// prompt never shows: any English answer has an "e", none has "Ωπ".
	ds, err := s.store.CreateDataset(context.Background(), db.Dataset{OwnerID: user, Name: "Rivers", Columns: []string{"topic", "marker"}},
		[]db.DatasetRow{{Vars: map[string]string{"topic": "the Rhine", "marker": "e"}}, {Vars: map[string]string{"topic": "the Nile", "marker": "Ωπ"}}})
	if err != nil {
		t.Fatal(err)
	}
	poll := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/experiments/new"),
		chromedp.WaitVisible(chromedp.CSS("#exp-name")),
		chromedp.SendKeys(chromedp.CSS("#exp-name"), "live grid"),
		chromedp.SetValue(chromedp.CSS("#exp-dataset"), strconv.FormatInt(ds.ID, 10)),
		chromedp.SetValue(chromedp.CSS("#exp-conc"), "1"),
		chromedp.SetValue(chromedp.CSS("#v-provider-0"), "sim"),
		chromedp.SetValue(chromedp.CSS("#v-body-0"), simBody("Tell me about {{topic}}")),
		chromedp.SetValue(chromedp.CSS("#v-provider-1"), "sim"),
		chromedp.SetValue(chromedp.CSS("#v-body-1"), simBody("Write a line on {{topic}}")),
		chromedp.SetValue(chromedp.CSS("#grader-0"), `{"type": "regex", "pattern": "{{marker}}", "name": "has marker"}`),
	)
	if err != nil {
		t.Fatalf("fill the form: %v", err)
	}
	screenshot(t, ctx, "experiment-new.png")
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#exp-start")),
		chromedp.WaitVisible(chromedp.CSS("#exp-grid")),
		chromedp.Evaluate[chromedp.Void](`window.knobsStayed = true`),
	)
	if err != nil {
		t.Fatalf("start from the form: %v", err)
	}
	live, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#experiment"), "data-live"))
	if err != nil || live.Value != "true" {
		t.Fatalf("the page is not live (%q, %v): the experiment ended before it opened", live.Value, err)
	}
	// Cells fill in from the events, on the page as it was loaded.
	poll("a cell filled live", `document.querySelectorAll('.exp-run[data-filled="1"] .grade').length > 0`)
	poll("the end", `document.getElementById("experiment").dataset.ended === "done"`)
	type endState struct {
		Stayed bool `json:"stayed"`
		Done   int  `json:"done"`
		Failed int  `json:"failed"`
	}
	st, err := chromedp.Run(ctx, chromedp.Evaluate[endState](`({stayed: window.knobsStayed === true,
		done: document.querySelectorAll('.exp-run.st-done').length,
		failed: document.querySelectorAll('.exp-run .grade.g-fail').length})`))
	if err != nil {
		t.Fatal(err)
	}
	stayed, done, failed := st.Stayed, st.Done, st.Failed
	if !stayed || done != 4 || failed != 2 {
		if es, _ := s.store.Experiments(context.Background(), user, 0, 1); len(es) == 1 {
			cs, _ := s.store.ExperimentCells(context.Background(), user, es[0].ID, 0, 10)
			for _, c := range cs {
				t.Logf("row %d variant %d: %q %+v", c.Row, c.Variant, c.Output, c.Grades)
			}
		}
		t.Fatalf("after the end: page kept %v, %d cells done (want 4), %d failed grades (want 2, the Ωπ row's)", stayed, done, failed)
	}

	// Failures only: the Ωπ row alone.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#f-failures"))); err != nil {
		t.Fatal(err)
	}
	// RunResponse waits for the page the click navigates to.
	if resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#f-apply"))); err != nil || resp == nil || !strings.Contains(resp.URL, "failures=1") {
		t.Fatalf("filter: %v", err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#exp-grid tbody tr")).map(r => r.dataset.row)`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows, ",") != "1" {
		t.Fatalf("failures only shows rows %v, want [1]", rows)
	}

	// Rate the first cell shown: saved without leaving the page.
	cellAttr, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`#exp-grid .exp-run`), "data-cell-id"))
	if err != nil {
		t.Fatal(err)
	}
	cellID := cellAttr.Value
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#exp-grid .exp-run input[name="note"]`), "no topic at all"),
		chromedp.Click(chromedp.CSS(`#exp-grid .exp-run button[value="down"]`)),
	)
	if err != nil {
		t.Fatalf("rate: %v", err)
	}
	poll("the rating saved", `(document.querySelector("#exp-grid .exp-rate-status") || {}).textContent === "Saved"`)
	id, _ := strconv.ParseInt(cellID, 10, 64)
	var e []db.Experiment
	if e, err = s.store.Experiments(context.Background(), user, 0, 10); err != nil || len(e) != 1 {
		t.Fatalf("experiments: %d %v", len(e), err)
	}
	cells, err := s.store.ExperimentCells(context.Background(), user, e[0].ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	rated := false
	for _, c := range cells {
		if c.ID == id {
			rated = len(c.Ratings) == 1 && c.Ratings[0].Thumbs != nil && !*c.Ratings[0].Thumbs && c.Ratings[0].Note == "no topic at all"
		}
	}
	if !rated {
		t.Fatalf("the rating of cell %d is not stored: %+v", id, cells)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/experiments/"+strconv.FormatInt(e[0].ID, 10)), chromedp.WaitVisible(chromedp.CSS("#exp-grid"))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "experiment.png")

	// On a phone the page itself does not scroll sideways; the grid does,
	// inside its box.
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(s.url+"/experiments/"+strconv.FormatInt(e[0].ID, 10)),
		chromedp.WaitVisible(chromedp.CSS("#exp-grid")),
	)
	if err != nil {
		t.Fatal(err)
	}
	type widths struct {
		Page   int `json:"page"`
		Window int `json:"window"`
		Box    int `json:"box"`
		Grid   int `json:"grid"`
	}
	w, err := chromedp.Run(ctx, chromedp.Evaluate[widths](`(() => { const b = document.querySelector(".exp-grid-box");
		return {page: document.documentElement.scrollWidth, window: window.innerWidth, box: b.clientWidth, grid: b.scrollWidth}; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if w.Page > w.Window || w.Grid <= w.Box {
		t.Errorf("at 390 px: the page is %d px wide in a %d px window; the grid is %d px in a %d px box", w.Page, w.Window, w.Grid, w.Box)
	}
}
