package web_test

// The voting page in Chromium: answers rendered from Markdown as a run's
// answer is, hostile Markdown left inert, before the vote (masked) and in
// the reveal; and a speed demo, whose answers stream side by side under
// its banner, the vote closed until both are complete.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// hostileAnswer is an answer in Markdown with what must stay inert: a
// script, raw HTML with a handler, a javascript: link and an image on
// another host. "Nimbus" is one of the arena's masked terms.
const hostileAnswer = "# Glacier facts\n\n" +
	"- They **flow** like Nimbus rivers\n" +
	"- They carve valleys\n\n" +
	"```go\nfmt.Println(\"ice\")\n```\n\n" +
	"<script>window.knobsPwned = \"script\"</script>\n\n" +
	"<img src=\"x\" onerror=\"window.knobsPwned = 'img'\">\n\n" +
	"[a link](javascript:window.knobsPwned='link')\n\n" +
	"![a pixel](https://tracker.example/pixel.png)\n"

// answerBox is what a side's answer box holds, as the page has it.
type answerBox struct {
	Rendered bool     `json:"rendered"`
	Heading  string   `json:"heading"`
	Items    int      `json:"items"`
	Code     string   `json:"code"`
	Active   int      `json:"active"` // script, img, iframe, object, or an on* attribute
	JSLinks  int      `json:"jsLinks"`
	Links    []string `json:"links"`
	Text     string   `json:"text"`
	Pwned    string   `json:"pwned"`
}

func readAnswerBox(t testing.TB, ctx context.Context, side string) answerBox {
	t.Helper()
	js := `JSON.stringify((() => {
		const box = document.getElementById("av-` + side + `");
		const all = [...box.querySelectorAll("*")];
		return {
			rendered: box.classList.contains("md"),
			heading: (box.querySelector("h1") || {}).textContent || "",
			items: box.querySelectorAll("li").length,
			code: (box.querySelector("pre") || {}).textContent || "",
			active: box.querySelectorAll("script, img, iframe, object, embed, svg").length + all.filter((el) => [...el.attributes].some((a) => a.name.startsWith("on"))).length,
			jsLinks: [...box.querySelectorAll("a")].filter((a) => !/^https?:/.test(a.href)).length,
			links: [...box.querySelectorAll("a")].map((a) => a.href),
			text: box.textContent,
			pwned: String(window.knobsPwned || ""),
		};
	})())`
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("reading answer %s: %v", side, err)
	}
	var b answerBox
	if err := json.Unmarshal([]byte(s), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// checkRendered checks an answer box holds hostileAnswer rendered and
// inert, its term shown as want.
func checkRendered(t testing.TB, when, side string, b answerBox, want, hidden string) {
	t.Helper()
	if !b.Rendered || b.Heading != "Glacier facts" || b.Items != 2 || !strings.Contains(b.Code, `fmt.Println("ice")`) {
		t.Errorf("%s, answer %s is not rendered: %+v", when, side, b)
	}
	if b.Active != 0 || b.JSLinks != 0 || b.Pwned != "" {
		t.Errorf("%s, answer %s has live markup: %+v", when, side, b)
	}
	// The image is a link to click, not a picture fetched by every voter.
	if len(b.Links) != 1 || b.Links[0] != "https://tracker.example/pixel.png" {
		t.Errorf("%s, answer %s's links: %q", when, side, b.Links)
	}
	// The script and the raw HTML are shown as the text they are.
	if !strings.Contains(b.Text, `<script>window.knobsPwned = "script"</script>`) || !strings.Contains(b.Text, "like "+want+" rivers") || strings.Contains(b.Text, hidden) {
		t.Errorf("%s, answer %s's text: %q", when, side, b.Text)
	}
}

func TestBrowserArenaAnswersRenderAsSafeMarkdown(t *testing.T) {
	ctx := newBrowser(t)
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	// Completions that echo the prompt and add nothing (or a word): the
	// answer is the prompt, as written.
	echo := func(name string, more int) map[string]any {
		return map[string]any{"name": name, "provider": "sim", "endpoint": "completion",
			"body": map[string]any{"model": "sim-fast", "prompt": "{{prompt}}", "echo": true, "max_tokens": more}}
	}
	r := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{
		"name": "Markdown", "audience": "public", "mode": "pregenerated", "mask_terms": []string{"Nimbus"},
		"contestants": []any{echo("Aurora", 0), echo("Borealis", 0)},
		"prompts":     map[string]any{"list": []string{hostileAnswer}},
	})
	if r.status != http.StatusCreated {
		t.Fatalf("make the arena: %d %s", r.status, r.body)
	}
	var ar arenaAPI
	r.json(t, &ar)
	if ar = srv.waitArenaReady(t, tok, ar.ID); ar.Status != "ready" {
		t.Fatalf("the arena is %s", ar.Status)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.url+ar.Link),
		chromedp.Poll[chromedp.Void](`!document.getElementById("av-pair").hidden && document.getElementById("av-a").classList.contains("md") && document.getElementById("av-b").classList.contains("md")`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("the pair: %v", err)
	}
	for _, side := range []string{"a", "b"} {
		checkRendered(t, "before the vote", side, readAnswerBox(t, ctx, side), "[model]", "Nimbus")
	}
	screenshot(t, ctx, "arena-markdown.png")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#av-vote button[value="a"]`))); err != nil {
		t.Fatal(err)
	}
	revealedSide(t, ctx, "a")
	for _, side := range []string{"a", "b"} {
		checkRendered(t, "in the reveal", side, readAnswerBox(t, ctx, side), "Nimbus", "[model]")
	}
}

// gateProxy stands between the browser and Knobs and holds a speed
// demo's stream just before its pair event until open is closed: the
// page can be seen with both answers streamed and the pair not yet come.
type gateProxy struct {
	open chan struct{}
}

func (g *gateProxy) start(t testing.TB, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(r *http.Response) error {
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
			return nil
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		r.Body.Close()
		if err != nil {
			return err
		}
		at := bytes.LastIndex(body, []byte("id: "))
		if at < 0 || !bytes.Contains(body[at:], []byte("\nevent: pair\n")) {
			at = len(body)
		}
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body[:at]), &gated{g.open, bytes.NewReader(body[at:])}))
		return nil
	}
	ts := httptest.NewServer(rp)
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		select {
		case <-g.open:
		default:
			close(g.open)
		}
	})
	return ts.URL
}

// gated reads r once open is closed.
type gated struct {
	open <-chan struct{}
	r    io.Reader
}

func (g *gated) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}

func TestBrowserArenaSpeedDemoStreamsSideBySide(t *testing.T) {
	ctx := newBrowser(t)
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	r := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{
		"name": "Speed", "audience": "public", "mode": "live", "budget_calls": 4, "show_streaming": true,
		"contestants": []any{contestant("Aurora", "sim-fast", map[string]any{"max_tokens": 120, "min_tokens": 80}),
			contestant("Borealis", "sim-fast", map[string]any{"temperature": 1.2, "max_tokens": 120, "min_tokens": 80})},
		"prompts": map[string]any{"list": []string{"Tell me about glaciers"}},
	})
	if r.status != http.StatusCreated {
		t.Fatalf("make the arena: %d %s", r.status, r.body)
	}
	var ar arenaAPI
	r.json(t, &ar)
	gate := &gateProxy{open: make(chan struct{})}
	front := gate.start(t, srv.url)

	// Both answers streamed, as plain text, the vote closed: the pair
	// has not come.
	err := chromedp.Do(ctx,
		chromedp.Navigate(front+ar.Link),
		chromedp.Poll[chromedp.Void](`["a", "b"].every((s) => document.getElementById("av-" + s).textContent.length > 0) && document.getElementById("av-prompt").textContent === "Tell me about glaciers"`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("the streamed answers: %v", err)
	}
	var streamed struct {
		Banner   string `json:"banner"`
		InView   bool   `json:"inView"`
		Closed   bool   `json:"closed"`
		Rendered bool   `json:"rendered"`
		Page     string `json:"page"`
	}
	state := func() {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({
			banner: (document.getElementById("av-speed") || {}).textContent || "",
			inView: (() => {
				const banner = document.getElementById("av-speed"), b = banner.getBoundingClientRect();
				const seen = (x, y) => banner.contains(document.elementFromPoint(x, y));
				return b.height > 0 && b.top >= 0 && b.bottom <= innerHeight && seen(b.left + 4, b.top + 4) && seen(b.right - 4, b.bottom - 4);
			})(),
			closed: [...document.querySelectorAll("#av-vote button")].every((b) => b.disabled),
			rendered: document.getElementById("av-a").classList.contains("md"),
			page: document.documentElement.outerHTML,
		})`))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(s), &streamed); err != nil {
			t.Fatal(err)
		}
	}
	state()
	if streamed.Banner != "Speed demo — not blind: the streaming speed can reveal which model is which." || !streamed.InView {
		t.Errorf("the banner: %q, in view %v", streamed.Banner, streamed.InView)
	}
	if !streamed.Closed || streamed.Rendered {
		t.Errorf("while the answers stream: vote closed %v, rendered %v", streamed.Closed, streamed.Rendered)
	}
	for _, name := range []string{"Aurora", "Borealis", "sim-fast"} {
		if strings.Contains(streamed.Page, name) {
			t.Errorf("the page shows %s while the answers stream", name)
		}
	}
	// Scrolled down a long page, the banner stays in view.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 600, chromedp.EmulateMobile), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.body.scrollHeight)`)); err != nil {
		t.Fatal(err)
	}
	state()
	if !streamed.InView {
		t.Error("the speed demo's banner scrolls out of view")
	}
	screenshot(t, ctx, "arena-speed-streaming.png")

	// The pair comes: the answers rendered, the vote open; a vote
	// reveals the names.
	close(gate.open)
	err = chromedp.Do(ctx,
		chromedp.Poll[chromedp.Void](`document.getElementById("av-a").classList.contains("md") && document.getElementById("av-b").classList.contains("md") && [...document.querySelectorAll("#av-vote button")].every((b) => !b.disabled)`, chromedp.WithPollingInterval(20*time.Millisecond)),
		chromedp.KeyEvent("1"),
	)
	if err != nil {
		t.Fatalf("the pair after the stream: %v", err)
	}
	if a := revealedSide(t, ctx, "a"); a != "A was Aurora" && a != "A was Borealis" {
		t.Errorf("the reveal: %q", a)
	}
	state()
	if streamed.Banner == "" {
		t.Error("the banner is gone after the vote")
	}
}
