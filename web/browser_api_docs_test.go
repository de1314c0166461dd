package web_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// tryItAnswer opens Try it on the operation with anchor id, sets its
// body (when body is not ""), sends it and returns the status and the
// answer the page shows.
func tryItAnswer(t *testing.T, ctx context.Context, id, body string) (status, answer string) {
	t.Helper()
	form := "#" + id + " form[data-try]"
	actions := []chromedp.Action[chromedp.Void]{
		chromedp.Click(chromedp.CSS("#" + id + " details.api-try > summary")),
		chromedp.WaitVisible(chromedp.CSS(form + ` button[type="submit"]`)),
	}
	if body != "" {
		actions = append(actions, chromedp.SetValue(chromedp.CSS(form+" textarea[data-body]"), body))
	}
	sel, _ := json.Marshal(form + " [data-try-status]")
	actions = append(actions,
		chromedp.Click(chromedp.CSS(form+` button[type="submit"]`)),
		chromedp.Poll[chromedp.Void](`(() => { const s = document.querySelector(`+string(sel)+`).textContent; return /^\d{3}/.test(s); })()`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("Try it on #%s: %v", id, err)
	}
	status = evalString(t, ctx, `document.querySelector(`+string(sel)+`).textContent`)
	answerSel, _ := json.Marshal(form + " [data-try-answer]")
	answer = evalString(t, ctx, `document.querySelector(`+string(answerSel)+`).textContent`)
	return status, answer
}

// A signed-in user reads the API's docs and tries two operations from
// the page, with the session the page has: the providers list, and a
// token with a bad body that is refused field by field. On a phone the
// page is no wider than the screen.
func TestBrowserAPIDocsTryItAndPhone(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")

	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/api"),
		chromedp.WaitVisible(chromedp.CSS("#list-providers")),
	)
	if err != nil {
		t.Fatalf("opening /api: %v", err)
	}

	status, answer := tryItAnswer(t, ctx, "list-providers", "")
	if !strings.HasPrefix(status, "200") || !strings.Contains(answer, `"id": "sim"`) || !strings.Contains(answer, "Simulator") {
		t.Errorf("Try it on GET /providers: %q, answer %.400s; want 200 and the simulator", status, answer)
	}

	status, answer = tryItAnswer(t, ctx, "create-token", `{"name": "", "scope": "admin"}`)
	if !strings.HasPrefix(status, "422") {
		t.Errorf("Try it on POST /tokens with a bad body: %q, want 422; answer %.400s", status, answer)
	}
	var refused struct {
		Error  string            `json:"error"`
		Fields map[string]string `json:"fields"`
	}
	if err := json.Unmarshal([]byte(answer), &refused); err != nil || refused.Fields["name"] == "" || refused.Fields["scope"] == "" {
		t.Errorf("the page shows %q as the refusal, want the fields name and scope (%v)", answer, err)
	}
	// Refused, nothing changed.
	if toks, err := s.store.Tokens(context.Background(), s.userID(t, "ada"), 0, 10); err != nil || len(toks) != 0 {
		t.Errorf("after the refused body ada has tokens %+v (%v), want none", toks, err)
	}
	evalJS[bool](t, ctx, `scrollTo(0, 0), true`)
	viewShot(t, ctx, "api-docs.png")
	evalJS[bool](t, ctx, `document.querySelector("#create-token form[data-try]").scrollIntoView({block: "end"}), true`)
	viewShot(t, ctx, "api-docs-try-it.png")

	// A phone: nothing wider than the screen; long code scrolls inside
	// its block.
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(s.url+"/api#create-run"),
		chromedp.WaitVisible(chromedp.CSS("#create-run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if wide := evalJS[bool](t, ctx, `document.documentElement.scrollWidth > innerWidth`); wide {
		t.Errorf("the API docs are wider than a 390 px phone: %v px", evalJS[int](t, ctx, `document.documentElement.scrollWidth`))
	}
	if !evalJS[bool](t, ctx, `[...document.querySelectorAll("pre.api-code")].some(p => p.scrollWidth > p.clientWidth && getComputedStyle(p).overflowX === "auto")`) {
		t.Errorf("no code block scrolls on a phone: a long curl line would widen the page")
	}
	viewShot(t, ctx, "api-docs-phone.png")
}
