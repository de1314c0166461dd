package cli

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"knobs/db"
)

// TestBackupWhileRunsAreWritten: knobs backup copies the database of a
// running server, which holds it locked and is storing runs meanwhile;
// the copy opens, passes the integrity check and holds the runs finished
// before it.
func TestBackupWhileRunsAreWritten(t *testing.T) {
	s := newTestServer(t)
	var before []storedRun
	for range 3 {
		if r := s.knobs(t, "run", "--provider", "sim", "--model", "sim-fast", "Tell me about beavers"); r.code != 0 {
			t.Fatalf("run: exit %d, %s", r.code, r.stderr)
		}
		before = append(before, s.latestRun(t))
	}

	// Runs go on being made and stored during the backup: one has
	// started before it begins.
	stop := make(chan struct{})
	started := make(chan struct{})
	made := make(chan int)
	go func() {
		n := 0
		defer func() { made <- n }()
		body := []byte(`{"provider":"sim","endpoint":"chat","wait":true,"body":{"model":"sim-fast","messages":[{"role":"user","content":"otters"}]}}`)
		for n < 200 {
			req, _ := http.NewRequest("POST", s.url+"/api/v1/runs", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+s.token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			resp.Body.Close()
			if n++; n == 1 {
				close(started)
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	<-started
	dst := filepath.Join(t.TempDir(), "knobs-backup.db")
	r := s.knobsWith(t, invocation{env: map[string]string{"KNOBS_DB": s.dbPath, "KNOBS_TOKEN": ""}}, "backup", dst)
	close(stop)
	t.Logf("%d runs made while backing up", <-made)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "backed up "+s.dbPath+" to "+dst) {
		t.Fatalf("backup: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}

	conn, err := sql.Open("sqlite", "file:"+dst+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := conn.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check of the copy: %q %v", check, err)
	}
	conn.Close()
	copied, err := db.Open(context.Background(), dst)
	if err != nil {
		t.Fatalf("the copy does not open as a Knobs database: %v", err)
	}
	defer copied.Close()
	for _, want := range before {
		got, err := copied.Run(context.Background(), s.user, want.ID)
		orig, _ := s.store.Run(context.Background(), s.user, want.ID)
		if err != nil || got.Status != db.RunDone || got.Result != orig.Result || orig.Result == "" {
			t.Errorf("run %d in the copy: %s %v", want.ID, got.Status, err)
		}
	}

	// A second backup to the same name is refused and leaves the copy.
	info, _ := os.Stat(dst)
	r = s.knobsWith(t, invocation{env: map[string]string{"KNOBS_DB": s.dbPath}}, "backup", dst)
	if r.code != 1 || !strings.Contains(r.stderr, "never replaces") {
		t.Errorf("backup onto the copy: exit %d, %q", r.code, r.stderr)
	}
	if again, _ := os.Stat(dst); again.ModTime() != info.ModTime() || again.Size() != info.Size() {
		t.Error("the existing copy changed")
	}
	// No database there: said so, and none is made.
	missing := filepath.Join(t.TempDir(), "none.db")
	r = s.knobs(t, "backup", "--db", missing, filepath.Join(t.TempDir(), "b.db"))
	if r.code != 1 || !strings.Contains(r.stderr, "no database at "+missing) {
		t.Errorf("backup of a missing database: exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("backup created the missing database")
	}
}
