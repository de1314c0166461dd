package main

import (
	"context"
	"database/sql"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"knobs/db"
)

// leftRunning stores a user and a run marked running in the file at
// path, as a live Knobs (or one killed mid-run) has it, and returns a
// function that reads the run's status.
func leftRunning(t *testing.T, path string) (status func() string) {
	t.Helper()
	ctx := context.Background()
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	u, err := store.CreateUser(ctx, db.SignUp{Username: "ada", PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := store.CreateRun(ctx, db.Run{UserID: u.ID, Provider: "sim", Endpoint: "chat", Model: "sim-fast", Spec: "{}", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	return func() string { return rawStatus(t, path, id) }
}

// A second Knobs on the same database file stops before touching it: the
// first one's live runs stay running.
func TestSecondKnobsOnTheSameFileRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "knobs.db")
	status := leftRunning(t, path)
	env := map[string]string{"KNOBS_ADDR": "127.0.0.1:0", "KNOBS_DB": path, "KNOBS_SECRET": strings.Repeat("s", 32)}
	base, stop := start(t, env)
	// The first start marked the left-over run interrupted; make one that
	// is live for the first process.
	live := leftRunningWhileOpen(t, path)

	second := map[string]string{"KNOBS_ADDR": "127.0.0.1:0", "KNOBS_DB": path, "KNOBS_SECRET": strings.Repeat("s", 32)}
	err := run(t.Context(), nil, envFrom(second), &startLog{addr: make(chan string, 1)})
	if err == nil || !strings.Contains(err.Error(), "another Knobs process is using the database file") || !strings.Contains(err.Error(), "KNOBS_DB") {
		t.Errorf("a second Knobs on the same file: %v, want a refusal naming KNOBS_DB", err)
	}
	if got := live(); got != db.RunRunning {
		t.Errorf("the first process's live run is %q after the second start, want running", got)
	}
	if got := status(); got != db.RunInterrupted {
		t.Errorf("the run left by an earlier process is %q, want interrupted", got)
	}
	if resp, err := http.Get(base + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the first Knobs stopped serving: %v", err)
	} else {
		resp.Body.Close()
		http.DefaultClient.CloseIdleConnections()
	}
	if _, err := stop(); err != nil {
		t.Errorf("stopping the first Knobs: %v", err)
	}
	// Once the first has stopped, the file is free.
	_, stop = start(t, second)
	if _, err := stop(); err != nil {
		t.Errorf("a Knobs started after the first stopped: %v", err)
	}
}

// A Knobs that cannot take its port changes nothing in the database.
func TestBusyPortLeavesRunsAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "knobs.db")
	status := leftRunning(t, path)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	env := map[string]string{"KNOBS_ADDR": busy.Addr().String(), "KNOBS_DB": path, "KNOBS_SECRET": strings.Repeat("s", 32)}
	err = run(t.Context(), nil, envFrom(env), &startLog{addr: make(chan string, 1)})
	if err == nil || !strings.Contains(err.Error(), "KNOBS_ADDR") {
		t.Fatalf("a busy port: %v, want an error naming KNOBS_ADDR", err)
	}
	if got := status(); got != db.RunRunning {
		t.Errorf("a Knobs that could not listen marked a run %q", got)
	}
}

// rawOpen opens the file as another program would, without Knobs' lock.
func rawOpen(t *testing.T, path string) *sql.DB {
	t.Helper()
	d, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func rawStatus(t *testing.T, path string, id int64) string {
	t.Helper()
	var s string
	if err := rawOpen(t, path).QueryRow(`SELECT status FROM runs WHERE id = ?`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// leftRunningWhileOpen adds a running run to a file a Knobs has open, as
// that Knobs does when a run starts.
func leftRunningWhileOpen(t *testing.T, path string) (status func() string) {
	t.Helper()
	var id int64
	err := rawOpen(t, path).QueryRow(`INSERT INTO runs (user_id, provider, endpoint, model, spec, status, created_at)
		SELECT id, 'sim', 'chat', 'sim-fast', '{}', 'running', 0 FROM users LIMIT 1 RETURNING id`).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return func() string { return rawStatus(t, path, id) }
}

// Knobs starts, and serves, even when the runs the last process left
// running cannot be marked interrupted (here a trigger refuses every
// change to runs, as a full disk refuses every write).
func TestStartsWhenLeftOverRunsCannotBeMarked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "knobs.db")
	status := leftRunning(t, path)
	if _, err := rawOpen(t, path).Exec(`CREATE TRIGGER full_disk BEFORE UPDATE ON runs BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END`); err != nil {
		t.Fatal(err)
	}
	base, stop := start(t, map[string]string{"KNOBS_ADDR": "127.0.0.1:0", "KNOBS_DB": path, "KNOBS_SECRET": strings.Repeat("s", 32)})
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("healthz after a start with runs it could not mark: %v", err)
	} else {
		resp.Body.Close()
	}
	http.DefaultClient.CloseIdleConnections()
	log, err := stop()
	if err != nil {
		t.Errorf("stop: %v", err)
	}
	if !strings.Contains(log, "could not be marked interrupted") {
		t.Errorf("the log does not say the runs could not be marked:\n%s", log)
	}
	if got := status(); got != db.RunRunning {
		t.Errorf("the run is %q; the trigger should have kept it running", got)
	}
}
