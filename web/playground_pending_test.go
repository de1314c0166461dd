package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// draftState is a playground state as the page saves it while the user
// has unsaved changes.
const draftState = `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"My unsaved draft"}]},"baseline":"0123456789abcdef","unsaved":true}`

// Opening a preset over unsaved work stores nothing over it: the
// playground asks, "keep" leaves the draft, and only "replace" opens it.
func TestOpeningOverUnsavedWorkWaitsForTheUsersAnswer(t *testing.T) {
	s, admin := newTeam(t)
	user := s.userID(t, "admin")
	id := admin.savePreset("Summariser", "private")
	if r, _ := admin.jsonPost("/playground/state", draftState); r.status != http.StatusNoContent {
		t.Fatalf("saving the draft: %d %s", r.status, r.body)
	}
	pg := admin.submit(fmt.Sprintf("/presets/%d/open", id), nil)
	wantPage(t, pg, http.StatusOK, `id="pg-pending"`, "Open the preset Summariser?", "Keep mine", "My unsaved draft")
	if state, _ := s.store.PlaygroundState(context.Background(), user); !strings.Contains(state, "My unsaved draft") {
		t.Errorf("while the playground asks, the stored state is %s, want the draft", state)
	}
	// The page's own saves meanwhile do not drop the question.
	if r, _ := admin.jsonPost("/playground/state", draftState); r.status != http.StatusNoContent {
		t.Fatalf("saving the draft again: %d %s", r.status, r.body)
	}
	if r := admin.submit("/playground/pending", form("choice", "neither")); r.status != http.StatusBadRequest {
		t.Errorf("an answer that is neither replace nor keep: %d, want 400", r.status)
	}
	pg = admin.submit("/playground/pending", form("choice", "keep"))
	wantPage(t, pg, http.StatusOK, "My unsaved draft", "Kept your playground as it was")
	if pg.has(`id="pg-pending"`) {
		t.Error("after keep the playground still asks")
	}

	// Asked again, replace opens the preset.
	admin.submit(fmt.Sprintf("/presets/%d/open", id), nil)
	pg = admin.submit("/playground/pending", form("choice", "replace"))
	wantPage(t, pg, http.StatusOK, "Summarise {{topic}}", "Opened the preset Summariser.")
	if pg.has("My unsaved draft") || pg.has(`id="pg-pending"`) {
		t.Error("after replace the draft or the question is still there")
	}
	// Nothing waits now: an answer has nothing to act on and changes nothing.
	pg = admin.submit("/playground/pending", form("choice", "replace"))
	wantPage(t, pg, http.StatusOK, "Summarise {{topic}}", "nothing waiting")
}

// The run the output shows is remembered only if it is the user's own.
func TestPlaygroundStateRefusesAnotherUsersRun(t *testing.T) {
	s, admin := newTeam(t)
	r, out := admin.jsonPost("/runs", `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"Hello"}]}}`)
	if r.status != http.StatusOK && r.status != http.StatusCreated {
		t.Fatalf("starting a run: %d %s", r.status, r.body)
	}
	run := int64(out["id"].(float64))
	bob := admin.addMember("bob")
	before, _ := s.store.PlaygroundState(context.Background(), s.userID(t, "bob"))
	state := strings.Replace(draftState, `"unsaved":true`, fmt.Sprintf(`"last_run":%d`, run), 1)
	if r, _ := bob.jsonPost("/playground/state", state); r.status != http.StatusNotFound {
		t.Errorf("bob keeping admin's run %d in his playground: %d, want 404", run, r.status)
	}
	if after, _ := s.store.PlaygroundState(context.Background(), s.userID(t, "bob")); after != before {
		t.Errorf("a refused state was stored: %s", after)
	}
	if r, _ := admin.jsonPost("/playground/state", state); r.status != http.StatusNoContent {
		t.Errorf("admin keeping his own run %d: %d %s", run, r.status, r.body)
	}
}
