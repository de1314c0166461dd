package web_test

// Issue 17's voting page in Chromium: someone without an account opens
// a public arena's link, votes three times (the names shown only after
// each vote), and the owner's results count the votes. Every byte the
// page received before a reveal is searched for the contestants.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// wireRecord is one answer the browser got through a recordingProxy.
type wireRecord struct {
	method, path string
	status       int
	body         string
}

// recordingProxy stands between the browser and Knobs and keeps every
// answer as it went over the wire (up to 8 MiB each).
type recordingProxy struct {
	mu      sync.Mutex
	records []wireRecord
}

func (p *recordingProxy) start(t testing.TB, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(r *http.Response) error {
		body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		r.Body.Close()
		if err != nil {
			return err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		p.mu.Lock()
		p.records = append(p.records, wireRecord{r.Request.Method, r.Request.URL.Path, r.StatusCode, string(body)})
		p.mu.Unlock()
		return nil
	}
	ts := httptest.NewServer(rp)
	t.Cleanup(ts.Close)
	return ts.URL
}

func (p *recordingProxy) snapshot() []wireRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]wireRecord(nil), p.records...)
}

// revealedSide waits for the reveal and returns what side's heading says.
func revealedSide(t testing.TB, ctx context.Context, side string) string {
	t.Helper()
	head, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { const h = document.getElementById("av-`+side+`-h").textContent; return h.includes(" was ") ? h : ""; })()`, chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		t.Fatalf("waiting for the reveal: %v", err)
	}
	return head
}

func TestBrowserArenaVoteThreeTimesSignedOut(t *testing.T) {
	ctx := newBrowser(t)
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	ar := srv.makeArena(t, tok, "public")
	var wire recordingProxy
	front := wire.start(t, srv.url)

	pairShown := chromedp.Poll[chromedp.Void](`!document.getElementById("av-pair").hidden && !document.getElementById("av-vote").hidden && document.getElementById("av-prompt").textContent.length > 0`, chromedp.WithPollingInterval(20*time.Millisecond))
	err := chromedp.Do(ctx,
		chromedp.Navigate(front+ar.Link),
		pairShown,
		chromedp.SendKeys(chromedp.CSS("#av-voter"), "Grace"),
	)
	if err != nil {
		message, _ := chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[string](`document.getElementById("av-message").textContent`))
		for _, r := range wire.snapshot() {
			t.Logf("the page got: %s %s %d", r.method, r.path, r.status)
		}
		t.Fatalf("opening the voting link: %v (the page says %q)", err, message)
	}
	for _, side := range []string{"a", "b"} {
		if text, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#av-"+side))); strings.TrimSpace(text) == "" {
			t.Errorf("answer %s is empty", side)
		}
	}
	title, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".av-head h1")))
	if title != "Which tone suits support" {
		t.Errorf("the page's heading: %q", title)
	}
	before, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	for _, name := range []string{"Aurora", "Borealis"} {
		if strings.Contains(before, name) {
			t.Errorf("the page shows %s before the vote", name)
		}
	}

	// Three votes: a click, a key, a click; each reveals both names.
	votes := []chromedp.Action[chromedp.Void]{
		chromedp.Click(chromedp.CSS(`#av-vote button[value="a"]`)),
		chromedp.KeyEvent("2"),
		chromedp.Click(chromedp.CSS(`#av-vote button[value="tie"]`)),
	}
	for i, vote := range votes {
		if i > 0 {
			// "n" for the next pair, as the keyboard hint says.
			if err := chromedp.Do(ctx, chromedp.KeyEvent("n"), pairShown); err != nil {
				t.Fatalf("the next pair (%d): %v", i+1, err)
			}
			if h, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#av-a-h"))); h != "A" {
				t.Errorf("a new pair shows a name before the vote: %q", h)
			}
		}
		if i == 2 {
			if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#av-reason"), "both fine")); err != nil {
				t.Fatal(err)
			}
		}
		if err := chromedp.Do(ctx, vote); err != nil {
			t.Fatalf("vote %d: %v", i+1, err)
		}
		a, b := revealedSide(t, ctx, "a"), revealedSide(t, ctx, "b")
		names := map[string]bool{strings.TrimPrefix(a, "A was "): true, strings.TrimPrefix(b, "B was "): true}
		if !names["Aurora"] || !names["Borealis"] {
			t.Errorf("reveal %d: %q and %q, want Aurora and Borealis", i+1, a, b)
		}
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#av-next"))); err != nil {
			t.Fatalf("no Next pair after vote %d: %v", i+1, err)
		}
	}
	verdict, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#av-verdict")))
	if !strings.Contains(verdict, "You chose: Tie.") {
		t.Errorf("the last verdict: %q", verdict)
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "arena-vote.png")

	// On a phone: the next pair, stacked, nothing wider than the screen,
	// and buttons big enough to tap.
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Click(chromedp.CSS("#av-next")),
		pairShown,
	)
	if err != nil {
		t.Fatalf("the next pair on a phone: %v", err)
	}
	width, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if width > 390 {
		t.Errorf("the page is %d px wide on a 390 px phone", width)
	}
	stacked, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("av-side-b").getBoundingClientRect().top >= document.getElementById("av-side-a").getBoundingClientRect().bottom`))
	if !stacked {
		t.Error("A and B are not stacked on a phone")
	}
	smallest, _ := chromedp.Run(ctx, chromedp.Evaluate[float64](`Math.min(...[...document.querySelectorAll("#av-vote button")].map((b) => b.getBoundingClientRect().height))`))
	if smallest < 44 {
		t.Errorf("a vote button is %v px tall on a phone", smallest)
	}
	screenshot(t, ctx, "arena-vote-phone.png")

	// The owner's results count the three votes.
	var res struct {
		Votes int `json:"votes"`
	}
	srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/arenas/%d/results", ar.ID), tok, nil).json(t, &res)
	if res.Votes != 3 {
		t.Errorf("the results count %d votes, want 3", res.Votes)
	}
	if names := arenaVoterNames(t, srv, ar.ID); len(names) != 1 || names[0] != "Grace" {
		t.Errorf("the voter's name: %q", names)
	}

	// Every answer the page got, but the reveals, searched byte by byte
	// for the contestants' names, their model ids and their provider's
	// id; the page and the voting calls also for a "provider" or "model"
	// field (the shared scripts and styles have such words of their own).
	names := regexp.MustCompile(`(?i)aurora|borealis|sim-fast|sim-reasoning|\bsim\b`)
	fields := regexp.MustCompile(`(?i)"provider"|"model"|model_id|provider_id`)
	seen := map[string]int{}
	for _, r := range wire.snapshot() {
		if r.method == http.MethodPost && strings.HasSuffix(r.path, "/vote") {
			if !strings.Contains(r.body, "Aurora") || !strings.Contains(r.body, "Borealis") {
				t.Errorf("a reveal without both names: %s", r.body)
			}
			seen["reveal"]++
			continue
		}
		ours := strings.HasPrefix(r.path, "/a/")
		switch {
		case r.path == ar.Link:
			seen["page"]++
		case r.path == ar.Link+"/pair":
			seen["pair"]++
		case strings.HasSuffix(r.path, ".js"):
			seen["script"]++
		}
		if m := names.FindString(r.body); m != "" {
			t.Errorf("%s %s gives away %q: %s", r.method, r.path, m, r.body)
		}
		if m := fields.FindString(r.body); ours && m != "" {
			t.Errorf("%s %s has a %s field: %s", r.method, r.path, m, r.body)
		}
	}
	if seen["page"] != 1 || seen["pair"] != 4 || seen["reveal"] != 3 || seen["script"] < 2 {
		t.Errorf("the answers the page got: %v, want the page, its scripts, 4 pairs and 3 reveals", seen)
	}
}

func TestBrowserArenaOpenPromptsAndMessagesInPlace(t *testing.T) {
	ctx := newBrowser(t)
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	r := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{
		"name": "Your own questions", "audience": "public", "mode": "live", "budget_calls": 2,
		"contestants": []any{contestant("Aurora", "sim-fast", nil), contestant("Borealis", "sim-fast", map[string]any{"temperature": 1.2})},
		"prompts":     map[string]any{"open": true},
	})
	if r.status != http.StatusCreated {
		t.Fatalf("make an open arena: %d %s", r.status, r.body)
	}
	var ar arenaAPI
	r.json(t, &ar)

	message := func() string {
		t.Helper()
		text, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { const m = document.getElementById("av-message"); return !m.hidden && document.getElementById("av-loading").hidden ? m.textContent : ""; })()`, chromedp.WithPollingInterval(20*time.Millisecond)))
		if err != nil {
			t.Fatalf("waiting for a message: %v", err)
		}
		return text
	}
	// No prompt of the voter's yet: the page asks for one.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.url+ar.Link), chromedp.WaitVisible(chromedp.CSS("#av-write"))); err != nil {
		t.Fatal(err)
	}
	if m := message(); !strings.Contains(strings.ToLower(m), "write") {
		t.Errorf("an open arena without a prompt says %q", m)
	}
	// An empty prompt is refused beside the box, and nothing is sent.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#av-write button")), chromedp.WaitVisible(chromedp.CSS("#av-prompt-error"))); err != nil {
		t.Fatal(err)
	}
	// A prompt gets its pair, made now; a vote reveals it.
	err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#av-prompt-text"), "Name three rivers"),
		chromedp.Click(chromedp.CSS("#av-write button")),
		chromedp.Poll[chromedp.Void](`!document.getElementById("av-pair").hidden && document.getElementById("av-prompt").textContent === "Name three rivers"`, chromedp.WithPollingInterval(20*time.Millisecond)),
		chromedp.KeyEvent("4"),
	)
	if err != nil {
		t.Fatalf("a pair on the voter's prompt: %v", err)
	}
	if a := revealedSide(t, ctx, "a"); a != "A was Aurora" && a != "A was Borealis" {
		t.Errorf("the reveal: %q", a)
	}
	// The budget (two calls) is spent: another prompt gets the server's
	// message in place of a pair.
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#av-prompt-text"), "Name three lakes"),
		chromedp.Click(chromedp.CSS("#av-write button")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if m := message(); !strings.Contains(m, "budget for new answers is spent") {
		t.Errorf("past the budget the page says %q", m)
	}
	if hidden, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("av-pair").hidden`)); !hidden {
		t.Error("a pair is still shown past the budget")
	}
}
