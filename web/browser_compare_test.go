package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"knobs/db"
)

// comparePanesReady waits until the compare page shows n panes, each with
// its parameter panel loaded.
func comparePanesReady(n int) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll(".cmp-pane").length === %d && !document.querySelector(".cmp-pane[data-busy]") && document.querySelectorAll(".cmp-pane [data-panel] .panel").length === %[1]d`, n),
		chromedp.WithPollingInterval(20*time.Millisecond))
}

func TestBrowserCompareThreeSimPanesRunAllAtOnce(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/compare"),
		comparePanesReady(2),
		chromedp.Click(chromedp.CSS("#cmp-add")),
		comparePanesReady(3),
		// sim-fast in every pane, 100 tokens, three temperatures.
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".cmp-pane").forEach((p, i) => {
			p.querySelector("[data-model]").value = "sim-fast";
			p.querySelector('[data-param="temperature"] input').value = ["0", "0.7", "1.2"][i];
			p.querySelector('[data-param="max_completion_tokens"] input').value = "100";
		})`),
		chromedp.Click(chromedp.CSS("#cmp-run")),
		chromedp.Poll[chromedp.Void](`!document.getElementById("cmp-summary").hidden && !document.getElementById("compare").classList.contains("running")`,
			chromedp.WithPollingInterval(50*time.Millisecond)),
	)
	if err != nil {
		t.Fatal(err)
	}
	texts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".cmp-pane")).map(p => p.querySelector(".pane-output .content").textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 3 {
		t.Fatalf("%d panes show an answer, want 3", len(texts))
	}
	for i, text := range texts {
		if len(strings.TrimSpace(text)) < 20 {
			t.Errorf("pane %d shows %q, want its answer", i+1, text)
		}
	}
	summary, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#cmp-summary")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(summary, "Fastest first token: temperature ") {
		t.Errorf("the summary %q names no fastest first token", summary)
	}
	metrics, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".cmp-pane [data-metrics]")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"First token", "Tokens/s", "done"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("pane 1 metrics %q lack %q", metrics, want)
		}
	}
	screenshot(t, ctx, "compare.png")

	user := s.userID(t, "ada")
	var group int64
	for i := int64(1); i <= 3; i++ {
		run, err := s.store.Run(context.Background(), user, i)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if run.GroupID == 0 || (group != 0 && run.GroupID != group) {
			t.Errorf("run %d is in group %d, want every run in one group (%d)", i, run.GroupID, group)
		}
		group = run.GroupID
		if run.Pane != int(i-1) {
			t.Errorf("run %d is pane %d, want %d", i, run.Pane, i-1)
		}
	}
	if _, err := s.store.Run(context.Background(), user, 4); err == nil {
		t.Error("Run all stored a fourth run")
	}

	// The saved comparison opens with its outputs; its public link replays them.
	summaryShown := chromedp.Poll[chromedp.Void](`!document.getElementById("cmp-summary").hidden && document.querySelectorAll(".cmp-pane .pane-output .content").length === 3 && !document.getElementById("compare").classList.contains("running")`,
		chromedp.WithPollingInterval(50*time.Millisecond))
	err = chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/groups/%d", s.url, group)),
		summaryShown,
		chromedp.Click(chromedp.CSS(`#cmp-share button[value="public"]`)),
		chromedp.Poll[chromedp.Void](`(document.querySelector("#cmp-share [data-share-url]") || {}).value`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("the saved comparison: %v", err)
	}
	link, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#cmp-share [data-share-url]").value`))
	if err != nil {
		t.Fatalf("the saved comparison: %v", err)
	}
	if !strings.HasPrefix(link, s.url+"/g/") {
		t.Fatalf("the share link is %q", link)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS("#cmp-replay")),
		chromedp.Click(chromedp.CSS("#cmp-replay")),
		summaryShown,
	)
	if err != nil {
		t.Fatalf("replaying the shared comparison: %v", err)
	}
	screenshot(t, ctx, "compare-shared.png")
}

// getHTML asks for path as a browser does, without following redirects.
func (c *client) getHTML(path string) *response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.srv.url+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	return c.do(req)
}

func TestComparePagesSavedAndShared(t *testing.T) {
	s, admin := newTeam(t)
	r := admin.get("/compare")
	wantPage(t, r, http.StatusOK, "<h1>Compare</h1>", `id="cmp-run"`, `data-mode="edit"`, `src="/static/js/compare.js"`, `id="cmp-pane-tpl"`, "sim-fast")
	if r := admin.get("/compare?run=999"); r.status != http.StatusNotFound {
		t.Errorf("/compare?run=999 answered %d, want 404", r.status)
	}

	_, cmp := admin.postCompare("Glaciers, twice", simPane(1, 20), simPane(2, 20))
	if cmp.Group == 0 {
		t.Fatalf("no comparison: %+v", cmp)
	}
	admin.readGroup(cmp.Events, "", nil)
	if r := admin.get(fmt.Sprintf("/compare?run=%d", cmp.Runs[1])); r.status != http.StatusOK || !r.has("Loaded the setup of run") {
		t.Errorf("/compare?run=%d answered %d", cmp.Runs[1], r.status)
	}

	page := fmt.Sprintf("/groups/%d", cmp.Group)
	r = admin.get(page)
	wantPage(t, r, http.StatusOK, `data-mode="saved"`, "Glaciers, twice", `data-replay="`+page+`/replay"`, `data-events="`+page+`/events"`, `action="`+page+`/shares"`)
	bob := admin.addMember("bob")
	for _, path := range []string{page, "/groups/999", "/groups/abc"} {
		if r := bob.get(path); r.status != http.StatusNotFound {
			t.Errorf("bob: GET %s answered %d, want 404", path, r.status)
		}
	}

	// A public link opens as a page for anyone, and as JSON for a program.
	sh, err := s.store.CreateShare(context.Background(), s.userID(t, "admin"), db.ShareGroup, cmp.Group, db.SharePublic)
	if err != nil {
		t.Fatal(err)
	}
	anon := s.newClient(t)
	r = anon.getHTML("/g/" + sh.Token)
	wantPage(t, r, http.StatusOK, `data-mode="shared"`, "Glaciers, twice", `data-replay="/g/`+sh.Token+`/replay"`, `id="cmp-replay"`, "sim-fast")
	for _, absent := range []string{`id="cmp-run"`, `data-share`, `class="mainnav"`} {
		if r.has(absent) {
			t.Errorf("the shared page has %s", absent)
		}
	}
	if r := anon.get("/g/" + sh.Token); r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("GET /g/:token without Accept: text/html answered %d %s", r.status, r.header.Get("Content-Type"))
	}
	// A team link sends a signed-out browser to sign in.
	team, err := s.store.CreateShare(context.Background(), s.userID(t, "admin"), db.ShareGroup, cmp.Group, db.ShareTeam)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.newClient(t).getHTML("/g/" + team.Token); r.status != http.StatusSeeOther || !strings.HasPrefix(r.location, "/login") {
		t.Errorf("a team link signed out answered %d %s", r.status, r.location)
	}
	if r := bob.getHTML("/g/" + team.Token); r.status != http.StatusOK || !r.has(`data-mode="shared"`) {
		t.Errorf("a team link for a member answered %d", r.status)
	}
}

func TestBrowserCompareCompletionPrompts(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/compare"),
		comparePanesReady(2),
		chromedp.Click(chromedp.CSS(`input[name="cmp-endpoint"][value="completion"]`)),
		chromedp.WaitVisible(chromedp.CSS("#cmp-prompt")),
		// The panels reload for the completions endpoint: echo is one of its fields.
		chromedp.Poll[chromedp.Void](`!document.querySelector(".cmp-pane[data-busy]") && document.querySelectorAll('.cmp-pane [data-param="echo"]').length === 2`, chromedp.WithPollingInterval(20*time.Millisecond)),
		chromedp.SetValue(chromedp.CSS("#cmp-prompt"), "The lighthouse keeper opened the door and"),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".cmp-pane").forEach((p, i) => {
			p.querySelector("[data-model]").value = "sim-fast";
			p.querySelector('[data-param="max_tokens"] input').value = "40";
			p.querySelector('[data-param="seed"] input').value = String(i + 1);
		})`),
		chromedp.Click(chromedp.CSS("#cmp-run")),
		chromedp.Poll[chromedp.Void](`!document.getElementById("cmp-summary").hidden && !document.getElementById("compare").classList.contains("running")`,
			chromedp.WithPollingInterval(50*time.Millisecond)),
	)
	if err != nil {
		t.Fatal(err)
	}
	user := s.userID(t, "ada")
	for id := int64(1); id <= 2; id++ {
		run, err := s.store.Run(context.Background(), user, id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Endpoint != "completion" || !strings.Contains(run.Spec, `"prompt":"The lighthouse keeper opened the door and"`) || run.Status != db.RunDone {
			t.Errorf("run %d: %s %s %s, want a done completion of the shared prompt", id, run.Endpoint, run.Status, run.Spec)
		}
	}
	hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("cmp-continue").hidden`))
	if err != nil || !hidden {
		t.Errorf("a completion comparison offers to continue a conversation (%v)", err)
	}
}

func TestBrowserPresenterModeIsDrivenFromTheKeyboard(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	classOf := func(js string) bool {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/compare"),
		comparePanesReady(2),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".cmp-pane").forEach(p => {
			p.querySelector("[data-model]").value = "sim-fast";
			p.querySelector('[data-param="max_completion_tokens"] input').value = "30";
		}); document.activeElement.blur()`),
		chromedp.KeyEvent("p"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !classOf(`document.getElementById("cmp-stage").classList.contains("presenting")`) {
		t.Fatal(`"p" did not enter presenter mode`)
	}
	// Enter runs every pane; the summary appears on the stage.
	err = chromedp.Do(ctx,
		chromedp.KeyEvent("\r"),
		chromedp.Poll[chromedp.Void](`!document.getElementById("cmp-summary").hidden && !document.getElementById("compare").classList.contains("running")`, chromedp.WithPollingInterval(50*time.Millisecond)),
		chromedp.KeyEvent("s"),
	)
	if err != nil {
		t.Fatalf("running from presenter mode: %v", err)
	}
	if !classOf(`document.getElementById("cmp-summary").hidden`) {
		t.Error(`"s" did not hide the summary`)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight)); err != nil {
		t.Fatal(err)
	}
	if !classOf(`document.activeElement.classList.contains("cmp-pane")`) {
		t.Error("→ did not move to a pane")
	}
	// In full screen the browser takes Esc itself and leaves full screen;
	// the page follows on fullscreenchange, so wait for it.
	err = chromedp.Do(ctx,
		chromedp.KeyEvent(kb.Escape),
		chromedp.Poll[chromedp.Void](`!document.getElementById("cmp-stage").classList.contains("presenting")`, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(5*time.Second)),
	)
	if err != nil {
		t.Errorf("Esc did not leave presenter mode: %v", err)
	}
}
