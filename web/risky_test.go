package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"knobs/db"
)

// A comparison some of whose runs were deleted from history still opens,
// streams, replays and shares: the missing panes say they are gone.
func TestAComparisonWhoseRunsWereDeleted(t *testing.T) {
	_, admin := newTeam(t)
	_, cmp := admin.postCompare("Half gone", simPane(1, 20), simPane(2, 20), simPane(3, 20))
	if status, events := admin.readGroup(cmp.Events, "", nil); status != http.StatusOK {
		t.Fatalf("group events answered %d", status)
	} else {
		lastGroupDone(t, events)
	}
	r := admin.post(fmt.Sprintf("/groups/%d/shares", cmp.Group), "application/json", strings.NewReader(`{"audience":"public"}`),
		http.Header{"X-Csrf-Token": {admin.token()}, "Accept": {"application/json"}})
	if r.status != http.StatusCreated {
		t.Fatalf("share answered %d %s", r.status, r.body)
	}
	var share struct{ URL string }
	json.Unmarshal([]byte(r.body), &share)
	token := strings.TrimPrefix(share.URL, "/g/")
	for _, id := range cmp.Runs[:2] {
		if r := admin.postForm(fmt.Sprintf("/runs/%d/delete", id), nil); r.status >= 400 {
			t.Fatalf("deleting run %d answered %d", id, r.status)
		}
	}

	wantPage(t, admin.open(fmt.Sprintf("/groups/%d", cmp.Group)), http.StatusOK, "Half gone")
	for _, path := range []string{cmp.Events, fmt.Sprintf("/groups/%d/replay", cmp.Group), "/g/" + token + "/replay"} {
		status, events := admin.readGroup(path, "", nil)
		if status != http.StatusOK {
			t.Fatalf("%s answered %d", path, status)
		}
		done := lastGroupDone(t, events)
		if len(done.Panes) != 3 || done.Panes[0].Status != "gone" || done.Panes[1].Status != "gone" || done.Panes[2].Status != "done" {
			t.Errorf("%s: group_done panes %+v, want the two deleted gone and the third done", path, done.Panes)
		}
		for _, e := range events {
			if e.pane == 0 || e.pane == 1 {
				t.Errorf("%s streamed %s of a deleted pane", path, e.event)
				break
			}
		}
	}
	anon := admin.srv.newClient(t)
	if page := anon.get("/g/" + token); page.status != http.StatusOK || !page.has(`"title":"Half gone"`) || strings.Count(page.body, `"pane":`) != 1 {
		t.Errorf("the shared comparison answered %d %s, want its one remaining pane", page.status, page.body)
	}
}

// After KNOBS_SECRET changes, a stored key cannot be opened: a run on
// that provider is refused with a message that says why and what to do,
// nothing goes upstream, and saving the key again works.
func TestAChangedSecretAsksForTheKeyAgain(t *testing.T) {
	upstream, calls := countingUpstream(t)
	first := newServer(t, withEnv("CEREBRAS_BASE_URL", upstream.URL))
	admin := first.newClient(t)
	admin.signUp("admin", "")
	wantPage(t, admin.submit("/settings/keys", form("provider", "cerebras", "key", "csk-before-the-change-0123456789")), http.StatusOK, "Saved the personal key")
	first.store.Close()

	second := newServer(t, withEnv("KNOBS_DB", first.dbPath), withEnv("CEREBRAS_BASE_URL", upstream.URL),
		withEnv("KNOBS_SECRET", "another-secret-9876543210-zyxwvutsrqponm"))
	admin = second.newClient(t)
	admin.mustLogIn("admin")
	spec := `{"provider":"cerebras","endpoint":"chat","body":{"model":"gpt-oss-120b","messages":[{"role":"user","content":"hi"}]}}`
	r, _ := admin.postRun(spec)
	var refusal struct {
		Error  string
		Fields map[string]string
	}
	json.Unmarshal([]byte(r.body), &refusal)
	msg := refusal.Fields["provider"]
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(msg, "cannot be read") || !strings.Contains(msg, "KNOBS_SECRET") || !strings.Contains(msg, "Settings") {
		t.Errorf("a run with an unreadable key answered %d %s; want 422 saying the key must be saved again", r.status, r.body)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d requests went upstream without a key", n)
	}
	if pg := admin.open("/"); pg.status != http.StatusOK {
		t.Errorf("the playground answered %d with an unreadable key", pg.status)
	}
	wantPage(t, admin.submit("/settings/keys", form("provider", "cerebras", "key", "csk-after-the-change-0123456789")), http.StatusOK, "Saved the personal key")
	if r, run := admin.postRun(spec); r.status != http.StatusCreated {
		t.Errorf("after saving the key again: %d %s", r.status, r.body)
	} else {
		admin.readEvents(run.Events, 0, nil)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d requests went upstream, want the one run", n)
	}
}

// Markup typed into names, titles, notes and descriptions is shown as
// text on every page that shows them.
func TestMarkupInNamesAndNotesIsInert(t *testing.T) {
	const evil = `<img src=x onerror=alert(1)>`
	srv, admin := newTeam(t)
	r, out := admin.jsonPost("/presets", fmt.Sprintf(`{"name":%q,"description":%q,"tags":"eval","visibility":"team","spec":%s}`, "P "+evil, "D "+evil, presetSpecJSON))
	if r.status != http.StatusCreated {
		t.Fatalf("saving the preset: %d %s", r.status, r.body)
	}
	preset := int64(out["id"].(float64))
	_, run := admin.postRun(runSpec(`{"model":"sim-fast","messages":[{"role":"user","content":"U ` + strings.ReplaceAll(evil, `"`, `\"`) + `"}],"max_completion_tokens":5}`))
	admin.readEvents(run.Events, 0, nil)
	admin.submit(fmt.Sprintf("/runs/%d/note", run.ID), form("note", "N "+evil))
	_, cmp := admin.postCompare("C "+evil, simPane(1, 5), simPane(2, 5))
	admin.readGroup(cmp.Events, "", nil)
	admin.submit("/settings/providers", form("name", "Prov "+evil, "base_url", "http://127.0.0.1:9"))
	shareOf := func(kind, prefix string, id int64) string {
		sh, err := srv.store.CreateShare(context.Background(), srv.userID(t, "admin"), kind, id, db.SharePublic)
		if err != nil {
			t.Fatal(err)
		}
		return prefix + sh.Token
	}
	shared := []string{
		shareOf(db.ShareRun, "/s/", run.ID),
		shareOf(db.SharePreset, "/p/", preset),
		shareOf(db.ShareGroup, "/g/", cmp.Group),
	}
	bob := admin.addMember("bob")
	pages := []string{"/", "/history", "/history?q=onerror", fmt.Sprintf("/runs/%d", run.ID), "/presets", fmt.Sprintf("/presets/%d", preset),
		"/compare", fmt.Sprintf("/groups/%d", cmp.Group), "/settings", fmt.Sprintf("/history/compare?a=%d&b=%d", run.ID, cmp.Runs[0])}
	anon := srv.newClient(t)
	for _, c := range []*client{admin, bob, anon} {
		paths := pages
		if c == anon {
			paths = shared
		} else {
			paths = append(append([]string{}, pages...), shared...)
		}
		for _, p := range paths {
			page := c.open(p)
			if page.status >= 500 {
				t.Errorf("%s answered %d", p, page.status)
			}
			if strings.Contains(page.body, "<img src=x") || strings.Contains(page.body, "<img src=\"x\"") {
				t.Errorf("%s renders the markup typed into a name: %s", p, around(page.body, "img src"))
			}
		}
	}
	// And it is there, as text, where it was typed.
	if h := admin.open("/presets"); !h.has("P &lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("the presets page does not show the preset's name as text")
	}
}

// around is the text of s about where sub first appears.
func around(s, sub string) string {
	i := strings.Index(s, sub)
	if i < 0 {
		return ""
	}
	return s[max(0, i-80):min(len(s), i+80)]
}

// Revoking a comparison's link ends the replays streaming through it at
// once: a viewer watching gets no more of it, and cannot reconnect.
func TestRevokingAShareCutsItsReplaysShort(t *testing.T) {
	upstream := simUpstream(t, 60)
	_, admin := newTeam(t, withSim(upstreamConfig(upstream)))
	_, cmp := admin.postCompare("Cut short", simPane(1, 60), simPane(2, 60)) // about 1 s each
	admin.readGroup(cmp.Events, "", nil)
	r := admin.post(fmt.Sprintf("/groups/%d/shares", cmp.Group), "application/json", strings.NewReader(`{"audience":"public"}`),
		http.Header{"X-Csrf-Token": {admin.token()}, "Accept": {"application/json"}})
	var share struct {
		ID     int64
		Replay string
	}
	if json.Unmarshal([]byte(r.body), &share); r.status != http.StatusCreated {
		t.Fatalf("share answered %d %s", r.status, r.body)
	}
	viewer := admin.srv.newClient(t)
	revoked := false
	status, events := viewer.readGroup(share.Replay, "", func(e groupEvent) bool {
		if e.event == "delta" && !revoked {
			revoked = true
			if r := admin.postForm(fmt.Sprintf("/shares/%d/revoke", share.ID), nil); r.status >= 400 {
				t.Errorf("revoke answered %d", r.status)
			}
		}
		return false // read on to wherever the server ends the stream
	})
	if status != http.StatusOK || !revoked {
		t.Fatalf("the replay answered %d; revoked during it: %v", status, revoked)
	}
	if last := events[len(events)-1]; last.event == "group_done" {
		t.Errorf("the replay played to its end (%d events) after its link was revoked", len(events))
	}
	if status, _ := viewer.readGroup(share.Replay, events[len(events)-1].id, nil); status != http.StatusNotFound {
		t.Errorf("reconnecting to the revoked replay answered %d, want 404", status)
	}
}
