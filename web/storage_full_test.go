package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// When the disk is full, a save tells the user that storage is full (507,
// not a generic 500), and everything already stored can still be read.
// The database is held at its size with PRAGMA max_page_count on the
// writer, which fails writes with SQLITE_FULL as a full disk does.
func TestFullStorageSaysSoAndReadsGoOn(t *testing.T) {
	s, admin := newTeam(t)
	kept := admin.savePreset("Kept before the disk filled", "private")
	run := storeRun(t, s, s.userID(t, "admin"), "stored before the disk filled", nil)
	var more []int64
	for range 40 {
		more = append(more, storeRun(t, s, s.userID(t, "admin"), "another", nil))
	}

	if err := s.store.LimitGrowth(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("tide ", 20_000) // needs new pages
	spec := strings.Replace(presetSpecJSON, "You are terse.", big, 1)
	r, out := admin.jsonPost("/presets", fmt.Sprintf(`{"name":"Too big for the disk","visibility":"private","spec":%s}`, spec))
	if r.status != http.StatusInsufficientStorage {
		t.Fatalf("saving a preset on a full disk answered %d %s, want 507", r.status, r.body)
	}
	if msg, _ := out["error"].(string); !strings.HasPrefix(msg, "Knobs' storage is full") {
		t.Errorf("the message is %q, want it to say that Knobs' storage is full", msg)
	}
	// A form gets a page that says the same: notes fill what room the
	// pages had left, then one does not fit.
	var page *response
	for _, id := range more {
		page = admin.postForm(fmt.Sprintf("/runs/%d/note", id), form("note", strings.Repeat("n", 1999)))
		if page.status != http.StatusSeeOther {
			break
		}
	}
	wantPage(t, page, http.StatusInsufficientStorage, "Knobs&#39; storage is full")

	// Reads go on.
	wantPage(t, admin.open(fmt.Sprintf("/presets/%d", kept)), http.StatusOK, "Kept before the disk filled")
	wantPage(t, admin.open(fmt.Sprintf("/runs/%d", run)), http.StatusOK, "stored before the disk filled")
	wantPage(t, admin.open("/history"), http.StatusOK)
	if !strings.Contains(s.log.String(), "storage is full") {
		t.Error("the log does not say that storage is full")
	}
}
