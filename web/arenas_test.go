package web_test

// The arena pages over real HTTP: an arena made through the new arena
// form (bad input refused at its fields, nothing stored), its page with
// the ranking, matrix and position bias after votes made through the
// voting link, the revoke button, and the list.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// arenaForm is a good new arena form: two contestants on the simulator,
// two prompts, public, answers made ahead.
func arenaForm() url.Values {
	return url.Values{"action": {"create"}, "name": {"Which tone"}, "source": {"list"}, "list": {"Tell me about glaciers\n\nTell me about rivers\n"},
		"audience": {"public"}, "mode": {"pregenerated"},
		"c_name": {"Aurora", "Borealis"}, "c_preset": {"", ""}, "c_label": {"", ""}, "c_version": {"", ""},
		"c_provider": {"sim", "sim"}, "c_endpoint": {"chat", "chat"},
		"c_body": {`{"model": "sim-fast", "max_tokens": 24}`, `{"model": "sim-reasoning", "max_tokens": 24}`}}
}

func TestArenaFormRefusesBadInputAtItsFieldsThenMakesTheArena(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	wantPage(t, admin.get("/arenas/new"), http.StatusOK, "New arena", "Contestant 1", "Contestant 2", "Who votes")
	noArenas := func(what string) {
		t.Helper()
		if as, _ := srv.store.Arenas(context.Background(), 0, 10); len(as) != 0 {
			t.Errorf("%s: %d arenas stored", what, len(as))
		}
	}
	with := func(change func(f url.Values)) url.Values {
		f := arenaForm()
		change(f)
		return f
	}
	cases := []struct {
		what   string
		form   url.Values
		errAt  string // the id of the message's element
		errMsg string
	}{
		{"no prompts", with(func(f url.Values) { f.Set("list", "\n  \n") }), "err-prompts.list", "Write at least one prompt"},
		{"a budget that is not a number", with(func(f url.Values) { f.Set("budget_usd", "lots") }), "err-budget_usd", "Give an amount in dollars"},
		{"no name", with(func(f url.Values) { f.Set("name", "  ") }), "err-name", "Give the arena a name"},
		{"live without a budget", with(func(f url.Values) { f.Set("mode", "live") }), "err-budget_usd", "A live arena needs a budget"},
		{"open prompts made ahead", with(func(f url.Values) { f.Set("source", "open") }), "err-mode", "answered live"},
		{"one contestant", with(func(f url.Values) { f["c_body"] = []string{f["c_body"][0], ""}; f["c_name"] = []string{"Aurora", ""} }), "err-contestants", "2 to 8 contestants"},
		{"a body that is not JSON", with(func(f url.Values) { f["c_body"] = []string{f["c_body"][0], `{"model": `} }), "c-err-1", "not JSON"},
		{"two of the same name", with(func(f url.Values) { f["c_name"] = []string{"Aurora", "aurora"} }), "c-err-1", "Two contestants have this name"},
		{"an unknown provider", with(func(f url.Values) { f["c_provider"] = []string{"sim", "nowhere"} }), "c-err-1", "There is no provider"},
		{"an end in the past", with(func(f url.Values) { f.Set("ends_on", "2020-01-01") }), "err-ends_at", "The end is in the past"},
		{"a speed demo made ahead", with(func(f url.Values) { f.Set("show_streaming", "on") }), "err-show_streaming", "needs live answers"},
	}
	for _, tc := range cases {
		r := admin.postForm("/arenas", tc.form)
		wantPage(t, r, http.StatusUnprocessableEntity, "Nothing was made", `id="`+tc.errAt+`"`, tc.errMsg)
		// What was typed is still there.
		if tc.form.Get("name") != "  " && !r.has(`value="`+tc.form.Get("name")+`"`) {
			t.Errorf("%s: the form lost its name", tc.what)
		}
		noArenas(tc.what)
	}

	// A contestant in the third slot, after an empty one, has its message
	// at its own slot.
	r := admin.postForm("/arenas", with(func(f url.Values) { f.Set("action", "add_contestant") }))
	wantPage(t, r, http.StatusOK, "Contestant 3")
	f := arenaForm()
	f["c_name"] = []string{"Aurora", "", "Cirrus"}
	f["c_body"] = []string{f["c_body"][0], "", `[1, 2`}
	f["c_provider"] = []string{"sim", "sim", "sim"}
	f["c_endpoint"] = []string{"chat", "chat", "chat"}
	r = admin.postForm("/arenas", f)
	wantPage(t, r, http.StatusUnprocessableEntity, `id="c-err-2"`, "not JSON")
	if r.has(`id="c-err-1"`) {
		t.Errorf("the empty slot has a message")
	}
	noArenas("a bad third slot")

	r = admin.postForm("/arenas", arenaForm())
	if r.status != http.StatusSeeOther || !regexp.MustCompile(`^/arenas/\d+$`).MatchString(r.location) {
		t.Fatalf("a good form: %d to %q; %s", r.status, r.location, errorText(r))
	}
	page := admin.follow(r)
	wantPage(t, page, http.StatusOK, "Which tone", `id="arena-link"`, srv.url+"/a/", "Revoke the link", "Download votes (CSV)", "How the ranking works")
	if !page.has(">preparing<") && !page.has(">ready<") {
		t.Errorf("the new arena's status is not shown: %s", errorText(page))
	}
	as, _ := srv.store.Arenas(context.Background(), 0, 10)
	if len(as) != 1 || as[0].Name != "Which tone" || as[0].Audience != "public" || as[0].Mode != "pregenerated" || as[0].PromptsKind != "list" {
		t.Fatalf("stored: %+v", as)
	}
	cs, _ := srv.store.ArenaContestants(context.Background(), as[0].ID)
	if len(cs) != 2 || cs[0].Name != "Aurora" || cs[1].Name != "Borealis" || !strings.Contains(cs[1].Spec, "sim-reasoning") {
		t.Errorf("contestants: %+v", cs)
	}
}

func TestArenaPageRanksVotesAndRevokes(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	a := srv.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{
		"name": "Three tones", "audience": "public", "mode": "pregenerated",
		"contestants": []any{contestant("Cirrus", "sim-fast", nil), contestant("Aurora", "sim-reasoning", nil), contestant("Borealis", "sim-fast", map[string]any{"temperature": 1.5})},
		"prompts":     map[string]any{"list": []string{"Tell me about glaciers", "Tell me about rivers"}},
	})
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	var ar arenaAPI
	a.json(t, &ar)
	ar = srv.waitArenaReady(t, tok, ar.ID)
	// Voters who always prefer Aurora, then Borealis, then Cirrus: each
	// looks at which contestant is on which side as only the test can.
	better := map[int]int{1: 3, 2: 2, 0: 1} // contestant index -> how much the voters like it
	votes := 0
	for range 3 {
		v := voter{srv.newClient(t)}
		for range 6 {
			r, p := v.pair(t, ar.Link)
			if r.status != http.StatusOK {
				break
			}
			pairs, err := srv.store.ArenaPairs(context.Background(), ar.ID, false)
			if err != nil {
				t.Fatal(err)
			}
			choice := ""
			for _, x := range pairs {
				if fmt.Sprint(x.ID) == fmt.Sprint(p["pair_id"]) {
					choice = "a"
					if better[x.B] > better[x.A] {
						choice = "b"
					}
				}
			}
			if vr, _ := v.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":%q}`, p["pair_id"], choice)); vr.status != http.StatusOK {
				t.Fatalf("vote: %d %s", vr.status, vr.body)
			}
			votes++
		}
	}
	if votes < 12 {
		t.Fatalf("only %d votes were possible", votes)
	}

	page := admin.get(fmt.Sprintf("/arenas/%d", ar.ID))
	wantPage(t, page, http.StatusOK, `id="arena-votes">`+fmt.Sprint(votes)+`<`, "A won ", "decisive votes (95%: ")
	// The ranking, in order, each with the interval the API gives.
	var res struct {
		Contestants []struct {
			Name        string
			Score       float64
			Low         float64 `json:"ci_low"`
			High        float64 `json:"ci_high"`
			Wins, Votes int
		} `json:"contestants"`
	}
	srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/arenas/%d/results", ar.ID), tok, nil).json(t, &res)
	ranking := section(page.body, `id="arena-ranking"`, "</table>")
	names := regexp.MustCompile(`class="arena-name">([^<]+)<`).FindAllStringSubmatch(ranking, -1)
	var order []string
	for _, n := range names {
		order = append(order, n[1])
	}
	if got := strings.Join(order, ", "); got != "Aurora, Borealis, Cirrus" {
		t.Errorf("the ranking reads %s", got)
	}
	for _, c := range res.Contestants {
		ci := fmt.Sprintf("%.0f–%.0f", c.Low, c.High)
		if !strings.Contains(ranking, ci) || c.Low >= c.High {
			t.Errorf("%s: the page lacks its interval %s", c.Name, ci)
		}
	}
	if n := strings.Count(ranking, `class="arena-whisker"`); n != 3 {
		t.Errorf("%d interval drawings, want 3", n)
	}
	// The matrix: Aurora beat each of the others every time they met, with
	// the counts of those meetings.
	pairs, _ := srv.store.ArenaPairs(context.Background(), ar.ID, true)
	met := map[[2]int]int{}
	for _, p := range pairs {
		met[[2]int{min(p.A, p.B), max(p.A, p.B)}]++
	}
	matrix := section(page.body, `id="arena-matrix"`, "</table>")
	aurora := section(matrix, `<th scope="row">Aurora</th>`, "</tr>")
	for _, other := range []int{0, 2} {
		n := met[[2]int{min(1, other), max(1, other)}]
		if n == 0 {
			if !strings.Contains(aurora, "—") {
				t.Errorf("Aurora never met %d, but its row has no —", other)
			}
			continue
		}
		if want := fmt.Sprintf("%d won, 0 tied of %d", n, n); !strings.Contains(aurora, want) || !strings.Contains(aurora, "100%") {
			t.Errorf("Aurora's row lacks %q: %s", want, aurora)
		}
	}
	cirrus := section(matrix, `<th scope="row">Cirrus</th>`, "</tr>")
	if strings.Contains(cirrus, "100%") || !strings.Contains(cirrus, "0%") {
		t.Errorf("Cirrus lost every meeting, its row says: %s", cirrus)
	}
	wantPage(t, page, http.StatusOK, "By prompt", "Tell me about glaciers", "By voter", "voter 3")

	// The list shows it, with its votes.
	list := admin.get("/arenas")
	wantPage(t, list, http.StatusOK, "Three tones", fmt.Sprintf(`href="/arenas/%d"`, ar.ID), ar.Link, ">ready<")

	// A member sees the page but cannot revoke; the owner can.
	bob := admin.addMember("bob")
	bp := bob.get(fmt.Sprintf("/arenas/%d", ar.ID))
	wantPage(t, bp, http.StatusOK, "Three tones", "Aurora")
	if bp.has("Revoke the link") {
		t.Errorf("a member is offered the revoke button")
	}
	if r := bob.postForm(fmt.Sprintf("/arenas/%d/revoke", ar.ID), nil); r.status != http.StatusForbidden {
		t.Errorf("a member revoking: %d", r.status)
	}
	if r, _ := (voter{srv.newClient(t)}).pair(t, ar.Link); r.status != http.StatusOK {
		t.Errorf("the link after a member's try: %d", r.status)
	}
	r := admin.submit(fmt.Sprintf("/arenas/%d/revoke", ar.ID), nil)
	wantPage(t, r, http.StatusOK, "The voting link no longer opens", `id="arena-revoked"`)
	if r.has(`id="arena-link"`) {
		t.Errorf("a revoked arena still shows its link")
	}
	if r, _ := (voter{srv.newClient(t)}).pair(t, ar.Link); r.status != http.StatusNotFound {
		t.Errorf("a pair after the revoke: %d", r.status)
	}
	wantPage(t, admin.get("/arenas"), http.StatusOK, "revoked")
}

// section is the part of s from the first start to the next end after it.
func section(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, end); j >= 0 {
		return s[:j]
	}
	return s
}
