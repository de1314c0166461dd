package db_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"knobs/db"
	"knobs/db/dbtest"
)

// TestBackupWhileWriting backs up a database that a Store (as a running
// server does) holds locked and keeps writing runs to: the copy opens,
// passes SQLite's integrity check and holds every run finished before
// the backup began, those still only in the write-ahead log included.
func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "knobs.db")
	dbtest.Fresh(t, src)
	s, err := db.Open(ctx, src)
	must(t, err)
	defer s.Close()
	user := historyUser(t, s, "ada")

	finish := func(prompt string) int64 {
		id, err := s.CreateRun(ctx, db.Run{UserID: user, Provider: "sim", Endpoint: "chat", Model: "sim-fast", Spec: chatSpec("sim", "sim-fast", "", prompt), CreatedAt: time.Now()})
		if err != nil {
			t.Error(err)
			return 0
		}
		if err := s.FinishRun(ctx, id, db.RunDone, "{}", resultJSON("an answer about "+prompt, "", "", 5), nil, time.Now()); err != nil {
			t.Error(err)
		}
		return id
	}
	var before []int64
	for range 20 {
		before = append(before, finish("otters"))
	}
	if fi, err := os.Stat(src + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the runs should still be in the write-ahead log: %v", err)
	}

	// A writer goes on storing runs during the backup; it has stored one
	// before the backup starts, and stops once the backup is done.
	stop := make(chan struct{})
	wrote := make(chan struct{})
	written := make(chan int)
	go func() {
		n := 0
		defer func() { written <- n }()
		for n < 5000 {
			finish("beavers")
			n++
			if n == 1 {
				close(wrote)
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	<-wrote
	dst := filepath.Join(dir, "backup", "copy.db")
	must(t, os.Mkdir(filepath.Dir(dst), 0o700))
	err = db.Backup(ctx, src, dst)
	close(stop)
	n := <-written
	t.Logf("%d runs written during the backup", n)
	if err != nil {
		t.Fatalf("Backup while %d runs were being written: %v", n, err)
	}

	// The copy is a whole Knobs database: the store opens it (it is at
	// the current schema) and finds the runs.
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dst), ".copy.db.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left beside the backup: %v", left)
	}
	conn, err := sql.Open("sqlite", "file:"+dst+"?mode=ro")
	must(t, err)
	var check string
	must(t, conn.QueryRow("PRAGMA integrity_check").Scan(&check))
	conn.Close()
	if check != "ok" {
		t.Errorf("integrity_check of the copy: %q", check)
	}
	copied, err := db.Open(ctx, dst)
	must(t, err)
	defer copied.Close()
	for _, id := range before {
		r, err := copied.Run(ctx, user, id)
		if err != nil || r.Status != db.RunDone {
			t.Errorf("run %d in the copy: %+v, %v", id, r.Status, err)
		}
	}
}

// TestBackupRefusals: an existing destination is refused and left as it
// was; a missing database is an error and is not created.
func TestBackupRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "knobs.db")
	dbtest.Fresh(t, src)

	dst := filepath.Join(dir, "taken.db")
	must(t, os.WriteFile(dst, []byte("my notes"), 0o600))
	if err := db.Backup(ctx, src, dst); !errors.Is(err, db.ErrBackupExists) {
		t.Errorf("backup onto an existing file: %v, want ErrBackupExists", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "my notes" {
		t.Errorf("the existing file changed: %q", b)
	}

	missing := filepath.Join(dir, "nope.db")
	if err := db.Backup(ctx, missing, filepath.Join(dir, "out.db")); err == nil {
		t.Error("backup of a missing database: no error")
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing database was created: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed backup left its file: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
