package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"knobs/db"
)

// finishedRun runs a short chat on the simulator and waits for it to end.
func (c *client) finishedRun(prompt string, extra string) int64 {
	c.t.Helper()
	spec := fmt.Sprintf(`{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":%q}],"max_completion_tokens":30%s}}`, prompt, extra)
	r, run := c.postRun(spec)
	if r.status != http.StatusCreated {
		c.t.Fatalf("POST /runs = %d %s", r.status, r.body)
	}
	c.readEvents(run.Events, 0, nil)
	return run.ID
}

var markRE = regexp.MustCompile(`<mark>([^<]*)</mark>`)

func TestHistoryListsSearchesAndFilters(t *testing.T) {
	_, admin := newTeam(t)
	first := admin.finishedRun("Tell me about volcanoes in Iceland", "")
	second := admin.finishedRun("Explain the tides of the Bay of Fundy", `,"temperature":0.3`)

	page := admin.open("/history")
	wantPage(t, page, http.StatusOK, "Explain the tides of the Bay of Fundy", "Tell me about volcanoes in Iceland")
	if strings.Index(page.body, "Fundy") > strings.Index(page.body, "volcanoes") {
		t.Error("the list is not newest first")
	}

	search := admin.open("/history?q=" + url.QueryEscape("volcanoes"))
	if !search.has(fmt.Sprintf(`href="/runs/%d"`, first)) || search.has(fmt.Sprintf(`href="/runs/%d"`, second)) {
		t.Errorf("searching volcanoes did not list only run %d", first)
	}
	if m := markRE.FindStringSubmatch(search.body); m == nil || !strings.EqualFold(m[1], "volcanoes") {
		t.Errorf("the match is not highlighted: %v", m)
	}
	// Characters FTS5 treats specially are only text.
	for _, q := range []string{`"`, `volcanoes"`, `*`, `tid*`, `NEAR(a b)`, `-x`, `col:value`, `(`, `a OR`} {
		r := admin.get("/history?q=" + url.QueryEscape(q))
		if r.status != http.StatusOK {
			t.Errorf("search %q answered %d", q, r.status)
		}
	}
	if r := admin.open("/history?q=" + url.QueryEscape("tid*")); !r.has(fmt.Sprintf(`href="/runs/%d"`, second)) {
		t.Error("a prefix search did not find tides")
	}
	if r := admin.open("/history?status=error"); r.has(fmt.Sprintf(`href="/runs/%d"`, first)) {
		t.Error("the status filter let a done run through")
	}
	if r := admin.open("/history?starred=1"); r.has(fmt.Sprintf(`href="/runs/%d"`, first)) {
		t.Error("the starred filter let an unstarred run through")
	}
}

func TestRunPageShowsTheRequestAndTheOutput(t *testing.T) {
	const key = "csk-history-secret-000111222333"
	s, admin := newTeam(t, withEnv("CEREBRAS_API_KEY", key))
	id := admin.finishedRun("Describe a lighthouse keeper's day", `,"temperature":0.4,"seed":7`)
	page := admin.open(fmt.Sprintf("/runs/%d", id))
	wantPage(t, page, http.StatusOK, "Describe a lighthouse keeper", "temperature", "0.4", "seed", "First token", "Knobs simulator", "Open in playground", "Run again")
	if page.has(key) {
		t.Fatal("the run page shows a key")
	}
	_ = s
}

func TestRunActionsBelongToTheirOwner(t *testing.T) {
	_, admin := newTeam(t)
	id := admin.finishedRun("Owner only", "")
	bob := admin.addMember("bob")
	path := fmt.Sprintf("/runs/%d", id)
	if r := bob.get(path); r.status != http.StatusNotFound {
		t.Errorf("another user's run page answered %d, want 404", r.status)
	}
	for _, action := range []string{"/star", "/note", "/delete", "/open", "/rerun", "/shares", "/preset"} {
		r := bob.postForm(path+action, form("starred", "1", "note", "mine now", "audience", "public"))
		if r.status != http.StatusNotFound {
			t.Errorf("POST %s by another user answered %d, want 404", action, r.status)
		}
	}
	// Nothing changed: the owner's run is neither starred, noted nor shared.
	page := admin.open(path)
	if page.has("★ Starred") || page.has("mine now") || page.has("/s/") {
		t.Error("another user's action changed the run")
	}
	if r := admin.get("/runs/999999"); r.status != http.StatusNotFound {
		t.Errorf("an unknown run answered %d", r.status)
	}
}

func TestStarNoteRerunAndDelete(t *testing.T) {
	s, admin := newTeam(t)
	id := admin.finishedRun("Star me", "")
	path := fmt.Sprintf("/runs/%d", id)
	admin.submit(path+"/star", form("starred", "1"))
	admin.submit(path+"/note", form("note", "a keeper"))
	page := admin.open(path)
	wantPage(t, page, http.StatusOK, "★ Starred", "a keeper")
	if r := admin.open("/history?starred=1"); !r.has(`href="` + path + `"`) {
		t.Error("the starred run is not in the starred filter")
	}
	if r := admin.open(path); !strings.Contains(admin.postFormFollow(path+"/note", form("note", strings.Repeat("x", 2001))).body, "more than 2000") {
		_ = r
		t.Error("an over-long note was not refused with a message")
	}

	// Run again on another model.
	r := admin.postForm(path+"/rerun", form("provider", "sim", "model", "sim-reasoning"))
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location, "/runs/") || r.location == path {
		t.Fatalf("rerun answered %d to %q", r.status, r.location)
	}
	var newID int64
	fmt.Sscanf(r.location, "/runs/%d", &newID)
	admin.readEvents(fmt.Sprintf("/runs/%d/events", newID), 0, nil)
	rerun, err := s.store.Run(context.Background(), s.userID(t, "admin"), newID)
	if err != nil || rerun.Model != "sim-reasoning" || !strings.Contains(rerun.Spec, "Star me") {
		t.Errorf("the new run is %+v, %v; want the same prompt on sim-reasoning", rerun, err)
	}
	// A rerun on a model the provider refuses says why and sends nothing.
	bad := admin.postFormFollow(path+"/rerun", form("provider", "nope", "model", "x"))
	if !bad.has("Nothing was sent") {
		t.Error("a rerun on an unknown provider did not say why it was refused")
	}

	// Save as preset keeps the setup.
	saved := admin.postFormFollow(path+"/preset", nil)
	wantPage(t, saved, http.StatusOK, "Saved the run&#39;s setup as a preset.", "Star me")

	// Open in playground loads the exact spec.
	admin.submit(path+"/open", nil)
	if pg := admin.open("/"); !pg.has("Star me") {
		t.Error("Open in playground did not load the run's prompt")
	}

	// Delete removes it from the list and from search.
	admin.submit(path+"/delete", nil)
	if r := admin.get(path); r.status != http.StatusNotFound {
		t.Errorf("a deleted run answered %d", r.status)
	}
	if r := admin.open("/history?q=Star"); r.has(`href="` + path + `"`) {
		t.Error("a deleted run is still found by search")
	}
}

// postFormFollow posts a form and follows the redirect.
func (c *client) postFormFollow(path string, f url.Values) *response {
	c.t.Helper()
	return c.follow(c.postForm(path, f))
}

var shareLinkRE = regexp.MustCompile(`value="(http://[^"]+/s/[A-Za-z0-9_-]+)"`)

func TestShareLinks(t *testing.T) {
	const key = "xai-share-secret-key-9876543210"
	s, admin := newTeam(t, withEnv("XAI_API_KEY", key))
	id := admin.finishedRun("Share the story of the printing press", `,"temperature":0.9`)
	path := fmt.Sprintf("/runs/%d", id)

	for _, audience := range []string{"team", "public"} {
		t.Run(audience, func(t *testing.T) {
			page := admin.postFormFollow(path+"/shares", form("audience", audience))
			links := shareLinkRE.FindAllStringSubmatch(page.body, -1)
			if len(links) == 0 {
				t.Fatal("no share link on the run page")
			}
			link := links[0][1]
			u, _ := url.Parse(link)

			stranger := s.newClient(t)
			r := stranger.get(u.Path)
			if audience == "team" {
				wantRedirect(t, r, "/login?next="+url.QueryEscape(u.Path))
				bob := admin.addMember("bob-" + audience)
				r = bob.get(u.Path)
				wantPage(t, r, http.StatusOK, "Share the story of the printing press", "temperature", "Open in my playground")
				// Open in my playground gives bob a copy.
				bob.submit(u.Path+"/open", nil)
				if pg := bob.open("/"); !pg.has("printing press") {
					t.Error("Open in my playground did not copy the spec")
				}
			} else {
				wantPage(t, r, http.StatusOK, "Share the story of the printing press", "temperature", "0.9", "Knobs simulator")
				if r.has("Open in my playground") || r.has("Delete run") || r.has("/raw") {
					t.Error("the public page offers actions or raw links to a stranger")
				}
				if r.has(key) {
					t.Fatal("the shared page shows a key")
				}
			}
			// Revoke, and the link stops opening for everyone.
			var shareID int64
			for _, sh := range mustShares(t, s, id) {
				if sh.Token == strings.TrimPrefix(u.Path, "/s/") {
					shareID = sh.ID
				}
			}
			other := admin.addMember("carol-" + audience)
			if r := other.postForm(fmt.Sprintf("/shares/%d/revoke", shareID), nil); r.status != http.StatusNotFound {
				t.Errorf("another user revoking answered %d, want 404", r.status)
			}
			admin.submit(fmt.Sprintf("/shares/%d/revoke", shareID), nil)
			if r := s.newClient(t).get(u.Path); r.status != http.StatusNotFound {
				t.Errorf("a revoked link answered %d, want 404", r.status)
			}
		})
	}
	if r := s.newClient(t).get("/s/not-a-real-token"); r.status != http.StatusNotFound {
		t.Errorf("an unknown token answered %d", r.status)
	}
	// A share token is a credential: the request log names the route only.
	for _, sh := range mustShares(t, s, id) {
		if strings.Contains(s.log.String(), sh.Token) {
			t.Errorf("the log holds the share token %s", sh.Token)
		}
	}
	if !strings.Contains(s.log.String(), "path=/s/:token") {
		t.Error("share link visits are not logged by their route")
	}
}

func mustShares(t *testing.T, s *server, run int64) []db.Share {
	t.Helper()
	shares, err := s.store.Shares(context.Background(), s.userID(t, "admin"), db.ShareRun, run)
	if err != nil {
		t.Fatal(err)
	}
	return shares
}
