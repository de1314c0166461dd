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
	"github.com/chromedp/cdproto/emulation"
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

	// On a phone the share box is on the screen, whole.
	if err := chromedp.Do(ctx, chromedp.Action[chromedp.Void](phone), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(".share-menu"))); err != nil {
		t.Fatal(err)
	}
	shareInPlace(t, ctx, "team")
	noHorizontalOverflow(t, ctx, "the run page")
	edges, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const r = document.querySelector(".share-menu .more-panel").getBoundingClientRect(); return [r.left, r.right]; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if edges[0] < 0 || edges[1] > 390 {
		t.Errorf("on a phone the share box spans %v px of a 390 px screen", edges)
	}
	screenshot(t, ctx, "run-share-phone.png")
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

// phone is the screen of a common phone: 390 px wide, touch and no mouse
// (EmulateMobile alone leaves CSS's pointer: fine in headless Chromium).
func phone(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		return chromedp.Void{}, err
	}
	_, err := chromedp.Call(ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true, MaxTouchPoints: 5})
	return chromedp.Void{}, err
}

// noHorizontalOverflow fails when the page is wider than the screen.
func noHorizontalOverflow(t testing.TB, ctx context.Context, what string) {
	t.Helper()
	var m struct {
		Scroll int `json:"scroll"`
		Inner  int `json:"inner"`
	}
	m, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		Scroll int `json:"scroll"`
		Inner  int `json:"inner"`
	}](`({scroll: document.documentElement.scrollWidth, inner: innerWidth})`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Scroll > m.Inner {
		t.Errorf("%s is %d px wide in a %d px screen", what, m.Scroll, m.Inner)
	}
}

func TestBrowserHistoryTellsRunsApartAndIsCardsOnAPhone(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	ada := s.newClient(t)
	ada.mustLogIn("ada")
	ada.finishedRun("Name three rivers of Europe and say what they carry.", `,"temperature":0.2`)
	ada.finishedRun("Name three rivers of Europe and say what they carry.", `,"temperature":0.9`)
	ada.finishedRun("Name three rivers of Europe and say what they carry.", `,"temperature":0.9,"top_p":0.5`)

	type row struct {
		When  string   `json:"when"`
		Chips []string `json:"chips"`
	}
	rows := func() []row {
		t.Helper()
		rs, err := chromedp.Run(ctx, chromedp.Evaluate[[]row](`Array.from(document.querySelectorAll(".table.runs tbody tr")).map(tr => ({
			when: tr.querySelector(".when").textContent.trim(),
			chips: Array.from(tr.querySelectorAll(".chip")).map(c => c.textContent.trim())}))`))
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/history"), chromedp.WaitVisible(chromedp.CSS(".table.runs"))); err != nil {
		t.Fatal(err)
	}
	// Newest first: the parameters that differ tell the three runs apart.
	want := [][]string{{"t 0.9", "max 30", "top_p 0.5"}, {"t 0.9", "max 30"}, {"t 0.2", "max 30"}}
	got := rows()
	if len(got) != len(want) {
		t.Fatalf("the list shows %d runs, want %d", len(got), len(want))
	}
	for i, r := range got {
		if strings.Join(r.Chips, " · ") != strings.Join(want[i], " · ") {
			t.Errorf("run %d shows the parameters %q, want %q", i+1, r.Chips, want[i])
		}
		if !strings.HasPrefix(r.When, "Today ") {
			t.Errorf("run %d was made today and shows when %q, want Today hh:mm", i+1, r.When)
		}
	}
	// The list stays within the page: long prompts end in an ellipsis.
	fits, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector(".table.runs").getBoundingClientRect().right <= document.querySelector(".history").getBoundingClientRect().right + 0.5`))
	if err != nil || !fits {
		t.Errorf("on a desktop the history list is wider than the page (%v)", err)
	}
	screenshot(t, ctx, "history-desktop.png")

	err = chromedp.Do(ctx, chromedp.Action[chromedp.Void](phone), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(".table.runs")))
	if err != nil {
		t.Fatal(err)
	}
	noHorizontalOverflow(t, ctx, "the history page")
	type card struct {
		Display string `json:"display"`
		Left    int    `json:"left"`
		Right   int    `json:"right"`
		Text    string `json:"text"`
	}
	cards, err := chromedp.Run(ctx, chromedp.Evaluate[[]card](`Array.from(document.querySelectorAll(".table.runs tbody tr")).map(tr => {
		const r = tr.getBoundingClientRect();
		// The metrics' labels are drawn by CSS, which innerText leaves out.
		const labels = Array.from(tr.querySelectorAll("td")).map(td => getComputedStyle(td, "::before").content).filter(c => c !== "none");
		return {display: getComputedStyle(tr).display, left: Math.floor(r.left), right: Math.ceil(r.right), text: tr.innerText + "\n" + labels.join("\n")};
	})`))
	if err != nil {
		t.Fatal(err)
	}
	headers, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector(".table.runs thead")).display`))
	if err != nil {
		t.Fatal(err)
	}
	if headers != "none" {
		t.Errorf("on a phone the list still shows its column headers (display %s)", headers)
	}
	for i, c := range cards {
		if c.Display == "table-row" || c.Left < 0 || c.Right > 390 {
			t.Errorf("on a phone run %d is laid out as %s from %d to %d px, want a card within the 390 px screen", i+1, c.Display, c.Left, c.Right)
		}
		for _, w := range append(want[i], "Tokens", "Tokens/s", "Cost", "Today") {
			if !strings.Contains(c.Text, w) {
				t.Errorf("on a phone run %d's card lacks %q: %q", i+1, w, c.Text)
			}
		}
	}
	screenshot(t, ctx, "history-phone.png")
}

func TestBrowserOnAPhoneTheNavigationReachesEveryPage(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	if err := chromedp.Do(ctx, chromedp.Action[chromedp.Void](phone), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#pg-run"))); err != nil {
		t.Fatal(err)
	}
	noHorizontalOverflow(t, ctx, "the playground")
	// Each link of the navigation is on the screen, whole, and on top:
	// a tap at its middle lands on it.
	type link struct {
		Label string `json:"label"`
		Href  string `json:"href"`
		Shown bool   `json:"shown"`
	}
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]link](`Array.from(document.querySelectorAll(".mainnav a")).map(a => {
		const r = a.getBoundingClientRect();
		const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
		return {label: a.textContent.trim(), href: a.getAttribute("href"),
			shown: r.width > 0 && r.left >= 0 && r.right <= innerWidth && r.top >= 0 && r.bottom <= innerHeight && a.contains(hit)};
	})`))
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, l := range links {
		labels = append(labels, l.Label)
		if !l.Shown {
			t.Errorf("on a phone the navigation's %q is cut off or covered", l.Label)
		}
	}
	if got := strings.Join(labels, ", "); got != "Playground, Compare, Presets, Datasets, History, Experiments, Arenas, Usage, Settings" {
		t.Errorf("the navigation has %s", got)
	}
	// Keyboard hints mean nothing on a touch screen.
	kbd, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#pg-run kbd")).display`))
	if err != nil {
		t.Fatal(err)
	}
	if kbd != "none" {
		t.Errorf("on a touch screen the Run button shows its keyboard hint (display %s)", kbd)
	}

	// Settings, reached by a tap: every row keeps its labels.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`.mainnav a[href="/settings"]`)),
		chromedp.WaitVisible(chromedp.CSS("table.keys")),
	)
	if err != nil {
		t.Fatalf("tapping Settings: %v", err)
	}
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); loc != s.url+"/settings" {
		t.Errorf("tapping Settings led to %s", loc)
	}
	noHorizontalOverflow(t, ctx, "the settings page")
	// A cell whose column has a heading, hidden on a phone, says it itself.
	unlabelled, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("main table tbody td")).filter(td => {
		const head = td.closest("table").querySelector("thead");
		const heading = head.querySelectorAll("th")[td.cellIndex];
		const before = getComputedStyle(td, "::before").content;
		return getComputedStyle(head).display === "none" && heading && heading.textContent.trim() !== "" && (before === "none" || before === '""');
	}).map(td => td.closest("tr").textContent.trim().slice(0, 40) + ": " + td.textContent.trim().slice(0, 40))`))
	if err != nil {
		t.Fatal(err)
	}
	for _, cell := range unlabelled {
		t.Errorf("on a phone a settings cell has lost its column's label: %q", cell)
	}
	screenshot(t, ctx, "settings-phone.png")
}

func TestBrowserFirstStartSignInNoticeIsOneLine(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/login"), chromedp.WaitVisible(chromedp.CSS(".auth .notice"))); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Text  string  `json:"text"`
		Lines float64 `json:"lines"`
	}
	m, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		Text  string  `json:"text"`
		Lines float64 `json:"lines"`
	}](`(() => {
		const p = document.querySelector(".auth .notice");
		const cs = getComputedStyle(p);
		const inner = p.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
		return {text: p.textContent, lines: inner / parseFloat(cs.lineHeight === "normal" ? parseFloat(cs.fontSize) * 1.2 : cs.lineHeight)};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Text, "create the first, the admin") {
		t.Errorf("the sign-in page of a Knobs without accounts says %q", m.Text)
	}
	if m.Lines > 1.5 {
		t.Errorf("the no-account notice %q takes %.1f lines, want one", m.Text, m.Lines)
	}
}

// TestSavedComparisonListsItsShareLinks: a comparison's links stay on its
// page, each with Copy and Revoke, as a run's and a preset's do.
func TestSavedComparisonListsItsShareLinks(t *testing.T) {
	s, admin := newTeam(t)
	_, cmp := admin.postCompare("Tides, twice", simPane(1, 20), simPane(2, 20))
	admin.readGroup(cmp.Events, "", nil)
	page := fmt.Sprintf("/groups/%d", cmp.Group)
	r, out := admin.jsonPost(page+"/shares", `{"audience":"public"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("sharing the comparison answered %d %s", r.status, r.body)
	}
	link := s.url + fmt.Sprint(out["url"])
	shown := admin.open(page)
	wantPage(t, shown, http.StatusOK, `value="`+link+`"`, "data-copy", `action="`+fmt.Sprint(out["revoke"])+`"`, "Public link")
	admin.jsonPost(fmt.Sprint(out["revoke"]), `{}`)
	wantPage(t, admin.open(page), http.StatusOK, "revoked.")
	if admin.open(page).has(`value="` + link + `"`) {
		t.Error("a revoked link is still offered for copying")
	}
}
