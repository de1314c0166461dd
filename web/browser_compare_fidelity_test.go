package web_test

// Browser tests of provider fidelity (issue 12) on the compare page: a
// completion prompt that is an array goes to every pane as the array, and
// each pane shows what the provider said about its answer.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestBrowserCompareFromARunSendsItsArrayPromptToEveryPane(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	api := s.newClient(t)
	api.mustLogIn("ada")
	const prompt = `["The lighthouse keeper","The old clock tower"]`
	r, run := api.postRun(`{"provider":"sim","endpoint":"completion","body":{"model":"sim-fast","prompt":` + prompt + `,"max_tokens":6,"n":2}}`)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /runs = %d %s", r.status, r.body)
	}
	api.readEvents(run.Events, 0, nil)
	err := chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/compare?run=%d", s.url, run.ID)),
		comparePanesReady(2),
	)
	if err != nil {
		t.Fatal(err)
	}
	form, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.getElementById("cmp-prompt-form").value, document.getElementById("cmp-prompt").value]`))
	if err != nil || len(form) != 2 || form[0] != "rows" || form[1] != "The lighthouse keeper\nThe old clock tower" {
		t.Fatalf("the shared prompt shows as %q (%v), want the two prompts, one per row", form, err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#cmp-run")),
		chromedp.Poll[chromedp.Void](`!document.getElementById("cmp-summary").hidden && !document.getElementById("compare").classList.contains("running")`,
			chromedp.WithPollingInterval(50*time.Millisecond)),
	)
	if err != nil {
		t.Fatal(err)
	}
	user := s.userID(t, "ada")
	for id := run.ID + 1; id <= run.ID+2; id++ {
		stored, err := s.store.Run(context.Background(), user, id)
		if err != nil {
			t.Fatal(err)
		}
		var spec struct {
			Endpoint string `json:"endpoint"`
			Body     struct {
				Prompt json.RawMessage `json:"prompt"`
			} `json:"body"`
		}
		if err := json.Unmarshal([]byte(stored.Spec), &spec); err != nil {
			t.Fatalf("run %d's spec %s: %v", id, stored.Spec, err)
		}
		if spec.Endpoint != "completion" || string(spec.Body.Prompt) != prompt {
			t.Errorf("run %d is a %s of prompt %s, want a completion of the array %s", id, spec.Endpoint, spec.Body.Prompt, prompt)
		}
		if !strings.Contains(stored.RawRequest, `"prompt":`+prompt) {
			t.Errorf("run %d sent %s, want the prompt as an array", id, stored.RawRequest)
		}
	}
	want := "Prompt 1 · choice 0|Prompt 1 · choice 1|Prompt 2 · choice 0|Prompt 2 · choice 1"
	checkLabels := func(where string) {
		t.Helper()
		labels, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".cmp-pane")).map(p => Array.from(p.querySelectorAll(".pane-output .choice-index")).map(e => e.textContent).join("|"))`))
		if err != nil {
			t.Fatal(err)
		}
		if len(labels) != 2 {
			t.Fatalf("%s: %d panes, want 2", where, len(labels))
		}
		for i, l := range labels {
			if l != want {
				t.Errorf("%s: pane %d labels its choices %q, want %q", where, i+1, l, want)
			}
		}
	}
	checkAnswers := func(where string) {
		t.Helper()
		answers, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".cmp-pane")).map(p => { const dl = p.querySelector(".pane-metrics .answer-labels"); return dl ? dl.textContent : ""; })`))
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range answers {
			if !strings.Contains(a, "Model") || !strings.Contains(a, "sim-fast") || !strings.Contains(a, "Id") {
				t.Errorf("%s: pane %d shows %q under its metrics, want the model that answered and the response id", where, i+1, a)
			}
		}
	}
	checkLabels("the live comparison")
	checkAnswers("the live comparison")
	// The saved comparison, loaded from its stream, labels them and shows
	// the answers' labels the same.
	saved, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("cmp-saved-link").getAttribute("href")`))
	if err != nil || saved == "" {
		t.Fatalf("no link to the saved comparison (%v)", err)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+saved),
		chromedp.Poll[chromedp.Void](`!document.getElementById("cmp-summary").hidden && !document.getElementById("compare").classList.contains("running")`,
			chromedp.WithPollingInterval(50*time.Millisecond)),
	)
	if err != nil {
		t.Fatal(err)
	}
	checkLabels("the saved comparison")
	checkAnswers("the saved comparison")
}
