package web_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"knobs/db"
	"knobs/runner"
)

// A run that ended but could not be stored is still "running" in the
// database. Its page, open while it ran, must say so and stay: reloading
// would find it running, attach to it again and reload again, forever.
func TestBrowserRunPageOfAnUnstoredRunDoesNotReload(t *testing.T) {
	release := make(chan struct{})
	gated := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk("Hello"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"+"data: [DONE]\n\n")
	}))
	t.Cleanup(gated.Close)
	disk := &diskFullStore{}
	disk.full.Store(true)
	s := newServer(t, withSim(upstreamConfig(gated)), withRunner(runner.Options{StoreRetry: time.Hour, IdleGrace: time.Hour}),
		withRunStore(func(st *db.Store) runner.Store { disk.Store = st; return disk }))
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	api := s.newClient(t)
	api.mustLogIn("ada")
	r, run := api.postRun(runSpec(foreverBody))
	if r.status != http.StatusCreated {
		t.Fatalf("POST /runs = %d %s", r.status, r.body)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/runs/%d", s.url, run.ID)),
		chromedp.WaitVisible(chromedp.CSS(".run-page[data-live]")),
		chromedp.Poll[chromedp.Void](`document.getElementById("run-choices").textContent.includes("Hello")`, chromedp.WithPollingInterval(20*time.Millisecond)),
		// Gone after a reload.
		chromedp.Evaluate[chromedp.Void](`window.knobsTestMark = true`),
	)
	if err != nil {
		t.Fatalf("opening the live run page: %v", err)
	}
	close(release)
	err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.getElementById("run-status").textContent === "not stored"`, chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		t.Fatalf("the page never said the run is not stored (it reloaded, or waits): %v", err)
	}
	marked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.knobsTestMark === true && document.body.textContent.includes("could not be stored")`))
	if err != nil || !marked {
		t.Errorf("the page reloaded or does not say why the run is not stored (%v)", err)
	}
	screenshot(t, ctx, "run-unstored.png")
}
