package web_test

// Browser tests of issue 13's sharing in one click, the history list,
// phones and small screens.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"knobs/db"
)

// grantClipboard lets the pages of origin read and write the clipboard
// without asking, so that a test can read back what a page copied.
func grantClipboard(t testing.TB, ctx context.Context, origin string) {
	t.Helper()
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true},
			Setting:    browser.PermissionSettingGranted,
			Origin:     origin,
		})
		if err != nil {
			t.Fatalf("granting %s: %v", name, err)
		}
	}
}

// clipboard is the text on the clipboard, as the page can read it.
func clipboard(t testing.TB, ctx context.Context) string {
	t.Helper()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("reading the clipboard: %v", err)
	}
	return text
}

// statusOf is the status code a plain GET of link answers, redirects not
// followed.
func statusOf(t testing.TB, link string) int {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	return r.StatusCode
}

// markPage leaves a mark in the page's window: it is gone after a reload.
var markPage = chromedp.Evaluate[chromedp.Void](`window.knobsTestMark = "still here"`)

func pageNotReloaded(t testing.TB, ctx context.Context, after string) {
	t.Helper()
	mark, err := chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.knobsTestMark)`))
	if err != nil {
		t.Fatal(err)
	}
	if mark != "still here" {
		t.Errorf("the page reloaded after %s", after)
	}
}

// shareInPlace opens the page's Share menu, asks for a link for audience
// ("Team members" or "Anyone with the link") and returns the link shown.
func shareInPlace(t testing.TB, ctx context.Context, audience string) string {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".share-menu > summary")),
		chromedp.WaitVisible(chromedp.CSS(`.share-menu button[value="`+audience+`"]`)),
		chromedp.Click(chromedp.CSS(`.share-menu button[value="`+audience+`"]`)),
		chromedp.Poll[chromedp.Void](`(document.querySelector(".share-menu [data-share-list] [data-share-url]") || {}).value`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("sharing in place: %v", err)
	}
	link, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".share-menu [data-share-list] [data-share-url]").value`))
	if err != nil {
		t.Fatal(err)
	}
	return link
}

// revokeInPlace presses the Revoke button of the newest link and waits
// until the list says it is revoked.
func revokeInPlace(t testing.TB, ctx context.Context) string {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".share-menu [data-share-list] li:first-child [data-share-revoke] button")),
		chromedp.Poll[chromedp.Void](`document.querySelector(".share-menu [data-share-list] li:first-child").classList.contains("revoked")`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("revoking in place: %v", err)
	}
	row, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".share-menu [data-share-list] li:first-child")))
	if err != nil {
		t.Fatal(err)
	}
	return row
}

func TestBrowserShareARunInPlace(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("sim", "sim-fast"),
		setMessage("Tell the story of the lighthouse keeper."),
		chromedp.Click(chromedp.CSS("#pg-run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	run, _ := lastRun(t, s, s.userID(t, "ada"))
	grantClipboard(t, ctx, s.url)
	page := fmt.Sprintf("%s/runs/%d", s.url, run.ID)
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(".share-menu")), markPage); err != nil {
		t.Fatal(err)
	}

	link := shareInPlace(t, ctx, "public")
	if !strings.HasPrefix(link, s.url+"/s/") {
		t.Fatalf("the link shown is %q, want a %s/s/ link", link, s.url)
	}
	if got := clipboard(t, ctx); got != link {
		t.Errorf("the clipboard holds %q, want the link %q", got, link)
	}
	box, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".share-menu .share-box")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"copied to the clipboard", "Public link", "Copied", "Revoke"} {
		if !strings.Contains(box, want) {
			t.Errorf("the share box %q lacks %q", box, want)
		}
	}
	pageNotReloaded(t, ctx, "making a link")
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); loc != page {
		t.Errorf("after sharing the browser is at %s, want %s", loc, page)
	}
	screenshot(t, ctx, "run-share.png")

	// Someone signed out opens the public link and sees the run.
	anon, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	if err := chromedp.Do(anon, chromedp.Navigate(link)); err != nil {
		t.Fatalf("opening the link signed out: %v", err)
	}
	seen, err := chromedp.Run(anon, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		t.Fatalf("opening the link signed out: %v", err)
	}
	if !strings.Contains(seen, "Shared run") || !strings.Contains(seen, "lighthouse keeper") {
		t.Errorf("the public link shows a signed-out visitor %.300q, want the shared run", seen)
	}

	// Revoke, in place: the link stops opening.
	if row := revokeInPlace(t, ctx); !strings.Contains(row, "revoked") {
		t.Errorf("the revoked link's row reads %q", row)
	}
	pageNotReloaded(t, ctx, "revoking")
	if got := statusOf(t, link); got != http.StatusNotFound {
		t.Errorf("the revoked link answers %d, want 404", got)
	}
	shares, err := s.store.Shares(context.Background(), s.userID(t, "ada"), db.ShareRun, run.ID)
	if err != nil || len(shares) != 1 || shares[0].Active() {
		t.Errorf("stored shares %+v (%v), want one revoked link", shares, err)
	}
}

func TestBrowserShareAPresetInPlace(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	save := `fetch("/presets", {method: "POST", headers: {"Content-Type": "application/json", Accept: "application/json", "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content},
		body: JSON.stringify({name: "Tide tables", visibility: "private", spec: ` + presetSpecJSON + `})}).then(r => r.json())`
	res, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		ID int64 `json:"id"`
	}](save, chromedp.EvalAwaitPromise))
	if err != nil || res.ID == 0 {
		t.Fatalf("saving a preset: %+v %v", res, err)
	}
	grantClipboard(t, ctx, s.url)
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/presets/%d", s.url, res.ID)), chromedp.WaitVisible(chromedp.CSS(".share-menu")), markPage); err != nil {
		t.Fatal(err)
	}

	link := shareInPlace(t, ctx, "team")
	if !strings.HasPrefix(link, s.url+"/p/") {
		t.Fatalf("the link shown is %q, want a %s/p/ link", link, s.url)
	}
	if got := clipboard(t, ctx); got != link {
		t.Errorf("the clipboard holds %q, want the link %q", got, link)
	}
	pageNotReloaded(t, ctx, "making a link")
	// A team link sends a stranger to sign in; the owner's browser opens it.
	if got := statusOf(t, link); got != http.StatusSeeOther {
		t.Errorf("the team link answers a stranger %d, want 303 to the sign-in", got)
	}
	if row := revokeInPlace(t, ctx); !strings.Contains(row, "Team link") || !strings.Contains(row, "revoked") {
		t.Errorf("the revoked link's row reads %q", row)
	}
	pageNotReloaded(t, ctx, "revoking")
	if got := statusOf(t, link); got != http.StatusNotFound {
		t.Errorf("the revoked link answers %d, want 404", got)
	}
}

// TestShareAnswersJSONToScriptsAndRedirectsForms checks the wire of the
// one share flow: a script gets the link as JSON, a form without scripts
// is sent back to the page, and bad input makes nothing.
func TestShareAnswersJSONToScriptsAndRedirectsForms(t *testing.T) {
	s, admin := newTeam(t)
	id := admin.finishedRun("A run to share", "")
	r, out := admin.jsonPost(fmt.Sprintf("/runs/%d/shares", id), `{"audience":"public"}`)
	if r.status != http.StatusCreated || !strings.HasPrefix(fmt.Sprint(out["url"]), "/s/") || out["audience"] != "public" || !strings.HasPrefix(fmt.Sprint(out["revoke"]), "/shares/") {
		t.Fatalf("POST /runs/%d/shares as a script answered %d %s", id, r.status, r.body)
	}
	if r, out := admin.jsonPost(fmt.Sprint(out["revoke"]), `{}`); r.status != http.StatusOK || out["revoked"] != true {
		t.Errorf("revoking as a script answered %d %s", r.status, r.body)
	}
	r, out = admin.jsonPost(fmt.Sprintf("/runs/%d/shares", id), `{"audience":"everyone"}`)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(out["error"]), "Choose who the link is for") {
		t.Errorf("a bad audience answered %d %s", r.status, r.body)
	}
	wantRedirect(t, admin.postForm(fmt.Sprintf("/runs/%d/shares", id), form("audience", "team")), fmt.Sprintf("/runs/%d", id))
	shares, err := s.store.Shares(context.Background(), s.userID(t, "admin"), db.ShareRun, id)
	if err != nil || len(shares) != 2 {
		t.Fatalf("stored shares %+v (%v), want the public one and the team one, nothing for the bad audience", shares, err)
	}
	// Another user's run and link: 404, nothing made or revoked.
	bob := admin.addMember("bob")
	if r, _ := bob.jsonPost(fmt.Sprintf("/runs/%d/shares", id), `{"audience":"public"}`); r.status != http.StatusNotFound {
		t.Errorf("bob sharing the admin's run answered %d, want 404", r.status)
	}
	if r, _ := bob.jsonPost(fmt.Sprintf("/shares/%d/revoke", shares[0].ID), `{}`); r.status != http.StatusNotFound {
		t.Errorf("bob revoking the admin's link answered %d, want 404", r.status)
	}
}
