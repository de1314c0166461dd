package web_test

// The arena's voting page over HTTP: a public link opens for anyone
// signed out and gives no contestant away; a team link sends a stranger
// to sign in; a revoked or unknown link is a 404 page, an ended one 410; a voter's name
// is kept with their votes, within bounds.

import (
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// arenaLeaks are what would give a contestant away in the arenas these
// tests make: names, model ids and the provider.
var arenaLeaks = []string{"aurora", "borealis", "sim-fast", "sim-reasoning", "simulator", `"sim"`, `"provider"`, `"model"`}

// makeArena has the owner (token tok) make an arena of Aurora and
// Borealis and waits until its answers are made.
func (s *server) makeArena(t testing.TB, tok, audience string) arenaAPI {
	t.Helper()
	r := s.apiCall(t, "POST", "/api/v1/arenas", tok, map[string]any{
		"name": "Which tone suits support", "audience": audience, "mode": "pregenerated",
		"contestants": []any{contestant("Aurora", "sim-fast", nil), contestant("Borealis", "sim-reasoning", map[string]any{"max_tokens": 400})},
		"prompts":     map[string]any{"list": []string{"Tell me about glaciers", "Tell me about rivers", "Tell me about lakes", "Tell me about the sea"}},
	})
	if r.status != http.StatusCreated {
		t.Fatalf("make an arena: %d %s", r.status, r.body)
	}
	var a arenaAPI
	r.json(t, &a)
	if a = s.waitArenaReady(t, tok, a.ID); a.Status != "ready" {
		t.Fatalf("the arena is %s", a.Status)
	}
	return a
}

func TestArenaPageOpensForAnyoneAndGivesNothingAway(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	ar := srv.makeArena(t, tok, "public")

	anyone := srv.newClient(t)
	page := anyone.get(ar.Link)
	wantPage(t, page, http.StatusOK, "Which tone suits support", `data-base="`+ar.Link+`"`, "/static/js/arena_vote.js", `id="av-voter"`)
	for _, leak := range arenaLeaks {
		if strings.Contains(strings.ToLower(page.body), strings.ToLower(leak)) {
			t.Errorf("the voting page gives away %q", leak)
		}
	}
	if cc := page.header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
		t.Errorf("the voting page may be cached: %q", cc)
	}

	// A name given with a vote is kept with the voter; one too long is
	// refused and the vote not counted.
	v := voter{anyone}
	_, p := v.pair(t, ar.Link)
	long := strings.Repeat("n", 61)
	if r, _ := v.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"a","name":%q}`, p["pair_id"], long)); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `"name"`) {
		t.Errorf("a name of 61 characters: %d %s", r.status, r.body)
	}
	if r, _ := v.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%v,"choice":"a","name":" Grace Hopper "}`, p["pair_id"])); r.status != http.StatusOK {
		t.Fatalf("a vote with a name: %d %s", r.status, r.body)
	}
	if names := arenaVoterNames(t, srv, ar.ID); len(names) != 1 || names[0] != "Grace Hopper" {
		t.Errorf("the voters' names kept: %q, want the one given, trimmed", names)
	}
	// The results name the voter as they named themselves.
	if r := srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/arenas/%d/results", ar.ID), tok, nil); !strings.Contains(r.body, `"voter":"Grace Hopper (voter 1)"`) {
		t.Errorf("the results' voters: %s", r.body)
	}

	// Past its end, the page says voting has ended (410).
	raw, err := sql.Open("sqlite", "file:"+srv.dbPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE arenas SET ends_at = 1 WHERE id = ?`, ar.ID); err != nil {
		t.Fatal(err)
	}
	wantPage(t, anyone.get(ar.Link), http.StatusGone, "Voting has ended", "Voting in this arena has ended")
	if _, err := raw.Exec(`UPDATE arenas SET ends_at = NULL WHERE id = ?`, ar.ID); err != nil {
		t.Fatal(err)
	}

	// Revoked, the page is a 404 that says why; an unknown link too.
	if rv := srv.apiCall(t, "POST", fmt.Sprintf("/api/v1/arenas/%d/revoke", ar.ID), tok, nil); rv.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", rv.status, rv.body)
	}
	wantPage(t, anyone.get(ar.Link), http.StatusNotFound, "unknown or was revoked")
	wantPage(t, anyone.get("/a/nothing-here"), http.StatusNotFound, "unknown or was revoked")
}

// arenaVoterNames are the names an arena's voters gave, as stored.
func arenaVoterNames(t testing.TB, srv *server, arena int64) []string {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+srv.dbPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query(`SELECT name FROM arena_voters WHERE arena_id = ? ORDER BY created_at`, arena)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

func TestArenaPageTeamLinkNeedsSignIn(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	ar := srv.makeArena(t, tok, "team")

	wantRedirect(t, srv.newClient(t).get(ar.Link), "/login?next="+url.QueryEscape(ar.Link))
	bob := admin.addMember("bob")
	page := bob.get(ar.Link)
	wantPage(t, page, http.StatusOK, "Which tone suits support", "Voting as <strong>bob</strong>")
	if page.has(`id="av-voter"`) {
		t.Error("a team link asks a signed-in member for a name")
	}
	for _, leak := range arenaLeaks {
		if strings.Contains(strings.ToLower(page.body), strings.ToLower(leak)) {
			t.Errorf("the team's voting page gives away %q", leak)
		}
	}
}
