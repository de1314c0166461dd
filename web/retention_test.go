package web_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"knobs/db"
	"knobs/retention"
)

// retentionSelected is the retention option marked selected on a settings page.
func retentionSelected(r *response) string {
	return regexpFind(`(?s)id="retention-days".*?<option value="(\d+)" selected`, r.body)
}

func TestRetentionSettingIsForAdmins(t *testing.T) {
	s, admin := newTeam(t)
	ctx := context.Background()
	stored := func() string {
		v, err := s.store.Setting(ctx, db.SettingRetentionDays)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	r := admin.open("/settings")
	wantPage(t, r, http.StatusOK, "History retention", `action="/settings/retention"`)
	if got := retentionSelected(r); got != "0" {
		t.Errorf("a new team keeps runs for %q days, want 0 (forever)", got)
	}

	for _, bad := range []string{"14", "-7", "abc", ""} {
		r := admin.postForm("/settings/retention", form("days", bad))
		wantPage(t, r, http.StatusUnprocessableEntity, "Choose forever, 7, 30, 90 or 365 days.", `id="err-retention"`)
	}
	if v := stored(); v != "" {
		t.Errorf("a refused value was stored: %q", v)
	}

	bob := admin.addMember("bob")
	if r := bob.postForm("/settings/retention", form("days", "7")); r.status != http.StatusForbidden {
		t.Errorf("a member setting retention answered %d, want 403", r.status)
	}
	if bob.open("/settings").has("History retention") {
		t.Error("a member sees the retention setting")
	}
	if v := stored(); v != "" {
		t.Errorf("a member's value was stored: %q", v)
	}

	r = admin.submit("/settings/retention", form("days", "30"))
	wantPage(t, r, http.StatusOK, "Runs are now kept for 30 days")
	if got := retentionSelected(r); got != "30" {
		t.Errorf("after saving 30, the page selects %q", got)
	}
	if v := stored(); v != "30" {
		t.Errorf("stored %q, want 30", v)
	}
	wantPage(t, admin.submit("/settings/retention", form("days", "0")), http.StatusOK, "Runs are now kept forever.")
	if v := stored(); v != "0" {
		t.Errorf("stored %q, want 0", v)
	}
}

func TestRetentionPurgesOnlyOldRuns(t *testing.T) {
	s, admin := newTeam(t)
	ctx := context.Background()
	user := s.userID(t, "admin")
	fresh, _ := admin.runToEnd(simChat("Tell me about glaciers", ""))
	bob := admin.addMember("bob")
	bobs, _ := bob.runToEnd(simChat("bob's run", ""))

	// Runs from before the harness could make them through the API.
	old := func(owner int64, days int) int64 {
		t.Helper()
		at := time.Now().AddDate(0, 0, -days)
		id, err := s.store.CreateRun(ctx, db.Run{UserID: owner, Provider: "sim", Endpoint: "chat", Model: "sim-fast", Spec: simChat("old", ""), CreatedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.store.FinishRun(ctx, id, db.RunDone, "{}", "{}", nil, at); err != nil {
			t.Fatal(err)
		}
		return id
	}
	recent, expired, bobsExpired := old(user, 20), old(user, 40), old(s.userID(t, "bob"), 400)

	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	if n, err := retention.PurgeExpired(ctx, s.store, time.Now(), log); err != nil || n != 0 {
		t.Fatalf("with runs kept forever, the purge removed %d runs (%v)", n, err)
	}
	wantPage(t, admin.submit("/settings/retention", form("days", "30")), http.StatusOK, "Runs are now kept for 30 days")
	n, err := retention.PurgeExpired(ctx, s.store, time.Now(), log)
	if err != nil || n != 2 {
		t.Fatalf("the purge removed %d runs (%v), want 2", n, err)
	}
	if !strings.Contains(logs.String(), "runs=2") {
		t.Errorf("the log does not say how many runs went: %s", logs.String())
	}
	for _, id := range []int64{fresh, recent} {
		if _, err := s.store.Run(ctx, user, id); err != nil {
			t.Errorf("run %d, newer than 30 days, is gone: %v", id, err)
		}
	}
	if _, err := s.store.Run(ctx, s.userID(t, "bob"), bobs); err != nil {
		t.Errorf("bob's new run is gone: %v", err)
	}
	if _, err := s.store.Run(ctx, user, expired); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("the admin's run of 40 days ago is still there (%v)", err)
	}
	if _, err := s.store.Run(ctx, s.userID(t, "bob"), bobsExpired); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("bob's run of 400 days ago is still there (%v)", err)
	}
	if r := admin.get(fmt.Sprintf("/runs/%d/events.txt", expired)); r.status != http.StatusNotFound {
		t.Errorf("the purged run's events answered %d, want 404", r.status)
	}
	_, lines := admin.export(t, "")
	if got := fmt.Sprint(ids(lines)); got != fmt.Sprint([]int64{fresh, recent}) {
		t.Errorf("after the purge the export has %s, want %d and %d", got, fresh, recent)
	}
}
