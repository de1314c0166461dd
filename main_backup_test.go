package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"knobs/cli"
	"knobs/db"
)

// apiRun is GET /api/v1/runs/{id} as these tests read it.
type apiRun struct {
	ID      int64  `json:"id"`
	Status  string `json:"status"`
	Choices []struct {
		Text string `json:"text"`
	} `json:"choices"`
}

func (r apiRun) text() string {
	if len(r.Choices) == 0 {
		return ""
	}
	return r.Choices[0].Text
}

// apiCall sends a request to the REST API of the Knobs at base with the
// token and decodes the answer into out.
func apiCall(t *testing.T, base, token, method, path, body string, out any) {
	t.Helper()
	req, _ := http.NewRequest(method, base+"/api/v1"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, raw, err)
		}
	}
}

// knobsCommand runs a knobs client command as a user runs it.
func knobsCommand(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Main(t.Context(), args, func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// The test: runs are written, a backup is taken while two runs
// stream, and the backup is restored into another server's database.
// That server, started, has every run that finished before the backup,
// as it was; the two that were streaming are interrupted, with the
// output they had stored by then.
func TestRestoredBackupHasTheRunsFinishedBeforeIt(t *testing.T) {
	ctx := context.Background()
	secret := strings.Repeat("s", 32)
	first := filepath.Join(t.TempDir(), "knobs.db")
	store, err := db.Open(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	u, err := store.CreateUser(ctx, db.SignUp{Username: "ada", PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := store.CreateToken(ctx, db.NewTokenInput{User: u.ID, Name: "tests", Scope: db.ScopeWrite}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	store.Close()

	base, stop := start(t, map[string]string{"KNOBS_ADDR": "127.0.0.1:0", "KNOBS_DB": first, "KNOBS_SECRET": secret})
	defer http.DefaultClient.CloseIdleConnections()
	chat := func(model, prompt string, wait bool) string {
		return fmt.Sprintf(`{"provider":"sim","endpoint":"chat","wait":%t,"body":{"model":%q,"messages":[{"role":"user","content":%q}]}}`, wait, model, prompt)
	}
	var finished []apiRun
	for _, prompt := range []string{"beavers", "otters", "herons"} {
		var r apiRun
		apiCall(t, base, token, "POST", "/runs", chat("sim-fast", prompt, true), &r)
		if r.Status != db.RunDone || r.text() == "" {
			t.Fatalf("run about %s: %s %q", prompt, r.Status, r.text())
		}
		finished = append(finished, r)
	}

	// Two slow runs stream; the backup is taken once each has stored
	// part of its answer (a checkpoint a second).
	var streaming []int64
	for _, prompt := range []string{"the longest river", "the tallest tree"} {
		var created struct{ ID int64 }
		apiCall(t, base, token, "POST", "/runs", chat("sim-slow", prompt, false), &created)
		streaming = append(streaming, created.ID)
	}
	raw := rawOpen(t, first)
	for _, id := range streaming {
		for i := 0; ; i++ {
			var chunks int
			if err := raw.QueryRow(`SELECT count(*) FROM run_chunks WHERE run_id = ?`, id).Scan(&chunks); err != nil {
				t.Fatal(err)
			}
			if chunks >= 2 {
				break
			}
			if i == 3000 {
				t.Fatalf("run %d stored no part of its answer", id)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	backup := filepath.Join(t.TempDir(), "knobs-backup.db")
	if code, out, errOut := knobsCommand(t, "backup", "--db", first, backup); code != 0 {
		t.Fatalf("knobs backup: exit %d, %s %s", code, out, errOut)
	}
	// They were streaming when the backup was taken, and go on after it.
	var later []apiRun
	for _, id := range streaming {
		var r apiRun
		apiCall(t, base, token, "GET", fmt.Sprintf("/runs/%d", id), "", &r)
		if r.Status != db.RunRunning {
			t.Fatalf("run %d is %s after the backup; it should still stream", id, r.Status)
		}
		apiCall(t, base, token, "POST", fmt.Sprintf("/runs/%d/cancel", id), "", &r)
		apiCall(t, base, token, "GET", fmt.Sprintf("/runs/%d", id), "", &r)
		later = append(later, r)
	}
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}

	// A fresh server, stopped, gets the backup in place of its database.
	second := filepath.Join(t.TempDir(), "knobs.db")
	env := map[string]string{"KNOBS_ADDR": "127.0.0.1:0", "KNOBS_DB": second, "KNOBS_SECRET": secret}
	_, stop = start(t, env)
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := knobsCommand(t, "restore", "--db", second, "--force", backup)
	if code != 0 || !strings.HasPrefix(out, "restored "+backup+" to "+second+fmt.Sprintf(" (schema %d, 5 runs, ", db.SchemaVersion())) {
		t.Fatalf("knobs restore: exit %d, %q %q", code, out, errOut)
	}
	base, stop = start(t, env)
	for _, want := range finished {
		var got apiRun
		apiCall(t, base, token, "GET", fmt.Sprintf("/runs/%d", want.ID), "", &got)
		if got.Status != db.RunDone || got.text() != want.text() {
			t.Errorf("finished run %d after the restore: %s %q, want done %q", want.ID, got.Status, got.text(), want.text())
		}
	}
	for i, id := range streaming {
		var got apiRun
		apiCall(t, base, token, "GET", fmt.Sprintf("/runs/%d", id), "", &got)
		if got.Status != db.RunInterrupted {
			t.Errorf("run %d, streaming at the backup, is %s after the restore, want interrupted", id, got.Status)
		}
		// Its partial output: what it had stored, a beginning of what
		// the first server went on to stream.
		if got.text() == "" || !strings.HasPrefix(later[i].text(), got.text()) {
			t.Errorf("run %d after the restore has %q; want a beginning of %q", id, got.text(), later[i].text())
		}
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	apiCall(t, base, token, "GET", "/runs?limit=100", "", &list)
	if len(list.Items) != 5 {
		t.Errorf("the restored server lists %d runs, want 5", len(list.Items))
	}
	log, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log, "marked interrupted, with their partial output") || !strings.Contains(log, "runs=2") {
		t.Errorf("the restored server's log does not say it marked 2 runs interrupted:\n%s", log)
	}
}

// With KNOBS_BACKUP_DIR, Knobs takes a backup at its first start (there
// is none yet) and says so in its log; a directory it cannot write to
// stops it before it opens the database.
func TestScheduledBackupsAtStart(t *testing.T) {
	dir := t.TempDir()
	backups := filepath.Join(dir, "backups")
	env := map[string]string{"KNOBS_ADDR": "127.0.0.1:0", "KNOBS_DB": filepath.Join(dir, "knobs.db"), "KNOBS_SECRET": strings.Repeat("s", 32), "KNOBS_BACKUP_DIR": backups}
	_, stop := start(t, env)
	var names []string
	for i := 0; len(names) == 0; i++ {
		if i == 3000 {
			t.Fatal("no backup was written at start")
		}
		names, _ = filepath.Glob(filepath.Join(backups, "knobs-*.db"))
		time.Sleep(10 * time.Millisecond)
	}
	log, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^knobs-\d{8}T\d{6}Z\.db$`).MatchString(filepath.Base(names[0])) {
		t.Errorf("the backup is named %s", names[0])
	}
	if !strings.Contains(log, `msg="scheduled backup written" file=`+names[0]+" bytes=") {
		t.Errorf("the log does not name the backup:\n%s", log)
	}

	file := filepath.Join(dir, "a-file")
	os.WriteFile(file, nil, 0o600)
	other := filepath.Join(t.TempDir(), "knobs.db")
	env = map[string]string{"KNOBS_ADDR": "127.0.0.1:0", "KNOBS_DB": other, "KNOBS_BACKUP_DIR": filepath.Join(file, "backups")}
	err = run(t.Context(), nil, envFrom(env), &startLog{addr: make(chan string, 1)})
	if err == nil || !strings.Contains(err.Error(), "KNOBS_BACKUP_DIR") {
		t.Errorf("a backup directory under a file: %v, want an error naming KNOBS_BACKUP_DIR", err)
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("Knobs created its database although it could not start")
	}
}
