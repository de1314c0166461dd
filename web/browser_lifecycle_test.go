package web_test

// What happens to a run when its page goes away: closed, it stops the
// run (nobody is left to watch); hidden in the back/forward cache and
// shown again, it reads on from the last event it saw.

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"knobs/db"
	"knobs/llm/sim"
	"knobs/runner"
)

func TestBrowserClosingThePageStopsItsRun(t *testing.T) {
	s := newServer(t, withSim(sim.NewConfig(sim.Options{TokensPerSecond: 50})), withRunner(runner.Options{IdleGrace: 100 * time.Millisecond}))
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	// The run is started in a tab of its own, which is then closed.
	tab, closeTab := chromedp.NewContext(ctx)
	err := chromedp.Do(tab,
		chromedp.Navigate(s.url+"/"),
		chromedp.Poll[chromedp.Void](`document.getElementById("playground").dataset.ready && !document.getElementById("playground").dataset.busy`, chromedp.WithPollingInterval(20*time.Millisecond)),
		choose("sim", "sim-fast"),
		setMessage("Write at length about lighthouses."),
		chromedp.Evaluate[chromedp.Void](`for (const f of ["max_completion_tokens", "min_completion_tokens"]) document.getElementById("p-" + f).value = "3000"`),
		chromedp.Click(chromedp.CSS("#pg-run")),
		chromedp.Poll[chromedp.Void](`(document.querySelector(".choice .content") || {textContent: ""}).textContent.length > 20`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatal(err)
	}
	closeTab()
	user := s.userID(t, "ada")
	var run db.Run
	var res runResult
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if run, res = lastRun(t, s, user); run.Status != db.RunRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run still streams 20s after its page was closed")
		}
	}
	if run.Status != db.RunCancelled || len(res.Choices) != 1 || len(res.Choices[0].Content) < 20 {
		t.Errorf("after the page closed the run was stored %q with %+v; want cancelled with the text shown so far", run.Status, res.Choices)
	}
}

// The back/forward cache: pagehide closes the page's stream (so that a
// page nobody sees does not hold a run open), pageshow with persisted
// reads on with ?after= the last event id seen. Headless Chromium does
// not keep pages in the cache, so the test sends the two events the
// browser sends.
func TestBrowserBackForwardCacheResumesAfterTheLastEvent(t *testing.T) {
	s := newServer(t, withSim(sim.NewConfig(sim.Options{TokensPerSecond: 400})))
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`(() => {
			const RealES = window.EventSource;
			window.__opened = [];
			window.EventSource = class extends RealES {
				constructor(url, opts) { super(url, opts); window.__opened.push(String(url)); }
			};
		})()`),
		choose("sim", "sim-fast"),
		setMessage("Write about the history of lighthouses, in several paragraphs."),
		chromedp.Evaluate[chromedp.Void](`for (const f of ["max_completion_tokens", "min_completion_tokens"]) document.getElementById("p-" + f).value = "600"`),
		chromedp.Click(chromedp.CSS("#pg-run")),
		chromedp.Poll[chromedp.Void](`(document.querySelector(".choice .content") || {textContent: ""}).textContent.length > 40`, chromedp.WithPollingInterval(10*time.Millisecond)),
		chromedp.Evaluate[chromedp.Void](`window.dispatchEvent(new PageTransitionEvent("pagehide", { persisted: true }))`),
	)
	if err != nil {
		t.Fatal(err)
	}
	// How much the page had when it was hidden, for the message below.
	shownWhileHidden, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelector(".choice .content").textContent.length`))
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.dispatchEvent(new PageTransitionEvent("pageshow", { persisted: true }))`))
	if err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	run, res := lastRun(t, s, s.userID(t, "ada"))
	if run.Status != db.RunDone || len(res.Choices) != 1 {
		t.Fatalf("stored %q with %d choices, want done", run.Status, len(res.Choices))
	}
	var seen struct {
		Opened []string `json:"opened"`
		Text   string   `json:"text"`
	}
	seen, err = chromedp.Run(ctx, chromedp.Evaluate[struct {
		Opened []string `json:"opened"`
		Text   string   `json:"text"`
	}](`(() => { document.getElementById("pg-show-raw").click();
		return { opened: window.__opened, text: document.querySelector(".choice .content").textContent }; })()`))
	if err != nil {
		t.Fatal(err)
	}
	prefix := "/runs/" + strconv.FormatInt(run.ID, 10) + "/events?after="
	if len(seen.Opened) != 1 || !strings.Contains(seen.Opened[0], prefix) {
		t.Fatalf("back from the cache the page opened %q, want one EventSource on %s<last id>", seen.Opened, prefix)
	}
	after, _ := strconv.Atoi(seen.Opened[0][strings.Index(seen.Opened[0], prefix)+len(prefix):])
	if after < 2 {
		t.Errorf("the page resumed after event %d, want after the last one it had seen", after)
	}
	if want := res.Choices[0].Content; seen.Text != want {
		t.Errorf("the page shows %d characters (%d before it was hidden), the run sent %d; they differ", len(seen.Text), shownWhileHidden, len(want))
	}
}
