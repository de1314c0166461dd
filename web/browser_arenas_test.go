package web_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserArenasMadeFromTheFormShowResults: the owner makes an arena
// through /arenas/new and lands on its page; after a few votes through
// the voting link the page counts them and ranks both contestants, on a
// desktop and on a phone, and the list shows the arena.
func TestBrowserArenasMadeFromTheFormShowResults(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/arenas/new"),
		chromedp.WaitVisible(chromedp.CSS("#ar-name")),
		chromedp.SendKeys(chromedp.CSS("#ar-name"), "Glacier tone"),
		chromedp.SendKeys(chromedp.CSS("#c-name-0"), "Aurora"),
		chromedp.SetValue(chromedp.CSS("#c-provider-0"), "sim"),
		chromedp.SetValue(chromedp.CSS("#c-body-0"), `{"model": "sim-fast", "max_tokens": 24}`),
		chromedp.SendKeys(chromedp.CSS("#c-name-1"), "Borealis"),
		chromedp.SetValue(chromedp.CSS("#c-provider-1"), "sim"),
		chromedp.SetValue(chromedp.CSS("#c-body-1"), `{"model": "sim-reasoning", "max_tokens": 24}`),
		chromedp.SetValue(chromedp.CSS("#ar-list"), "Tell me about glaciers\nTell me about rivers"),
		chromedp.Click(chromedp.CSS("#ar-create")),
		chromedp.WaitVisible(chromedp.CSS("#arena-status")),
	)
	if err != nil {
		t.Fatalf("make an arena from the form: %v", err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	m := regexp.MustCompile(`/arenas/(\d+)$`).FindStringSubmatch(loc)
	if err != nil || m == nil {
		t.Fatalf("after the form the browser is at %q (%v)", loc, err)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	title, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
	if err != nil || title != "Glacier tone" {
		t.Errorf("the arena's page is titled %q (%v)", title, err)
	}

	ada := s.newClient(t)
	ada.mustLogIn("ada")
	tok := ada.makeToken("votes", "read", nil).Token
	ar := s.waitArenaReady(t, tok, id)
	for i := range 4 {
		v := voter{s.newClient(t)}
		r, p := v.pair(t, ar.Link)
		if r.status != http.StatusOK {
			t.Fatalf("pair %d: %d %s", i, r.status, r.body)
		}
		choice := []string{"a", "b", "tie", "a"}[i]
		if vr, _ := v.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":%q}`, p["pair_id"], choice)); vr.status != http.StatusOK {
			t.Fatalf("vote %d: %d %s", i, vr.status, vr.body)
		}
	}

	type results struct {
		Status string   `json:"status"`
		Votes  string   `json:"votes"`
		Names  []string `json:"names"`
		Bars   int      `json:"bars"`
		Link   string   `json:"link"`
	}
	read := `({status: document.getElementById("arena-status").textContent,
		votes: document.getElementById("arena-votes").textContent,
		names: Array.from(document.querySelectorAll("#arena-ranking .arena-name")).map(e => e.textContent),
		bars: document.querySelectorAll("#arena-ranking svg.arena-whisker").length,
		link: document.getElementById("arena-link").value})`
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/arenas/%d", s.url, id)), chromedp.WaitVisible(chromedp.CSS("#arena-ranking"))); err != nil {
		t.Fatal(err)
	}
	res, err := chromedp.Run(ctx, chromedp.Evaluate[results](read))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "ready" || res.Votes != "4" || len(res.Names) != 2 || res.Bars != 2 || res.Link != s.url+ar.Link {
		t.Errorf("the results page shows %+v", res)
	}
	if got := strings.Join(res.Names, " "); !strings.Contains(got, "Aurora") || !strings.Contains(got, "Borealis") {
		t.Errorf("the ranking names %q", got)
	}
	screenshot(t, ctx, "arena-results.png")

	if err := chromedp.Do(ctx, chromedp.Action[chromedp.Void](phone), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#arena-ranking"))); err != nil {
		t.Fatal(err)
	}
	noHorizontalOverflow(t, ctx, "an arena's page")
	screenshot(t, ctx, "arena-results-phone.png")
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/arenas/new"), chromedp.WaitVisible(chromedp.CSS("#ar-name"))); err != nil {
		t.Fatal(err)
	}
	noHorizontalOverflow(t, ctx, "the new arena form")

	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(s.url+"/arenas"), chromedp.WaitVisible(chromedp.CSS(".arenas-list"))); err != nil {
		t.Fatal(err)
	}
	row, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".arenas-list tbody tr")))
	if err != nil || !strings.Contains(row, "Glacier tone") || !strings.Contains(row, "ready") || !strings.Contains(row, ar.Link) {
		t.Errorf("the list's row says %q (%v)", row, err)
	}
	screenshot(t, ctx, "arenas.png")
}
