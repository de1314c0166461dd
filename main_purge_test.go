package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"knobs/db"
)

func TestPurgeLoopPurgesAtStartAndStopsWithItsContext(t *testing.T) {
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(t.TempDir(), "knobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	u, err := store.CreateUser(ctx, db.SignUp{Username: "ada", PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	old, err := store.CreateRun(ctx, db.Run{UserID: u.ID, Provider: "sim", Endpoint: "chat", Model: "sim-fast", Spec: "{}", CreatedAt: time.Now().AddDate(0, 0, -10)})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.FinishRun(ctx, old, db.RunDone, "{}", "{}", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := store.SetSetting(ctx, db.SettingRetentionDays, "7"); err != nil {
		t.Fatal(err)
	}
	loopCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	var logs bytes.Buffer
	go func() {
		defer close(done)
		purgeExpiredRuns(loopCtx, store, slog.New(slog.NewTextHandler(&logs, nil)), time.Hour)
	}()
	// The first purge is at once, not after the first hour.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := store.Run(ctx, u.ID, old); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the loop did not purge the old run at start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not stop with its context")
	}
	if !bytes.Contains(logs.Bytes(), []byte("runs=1")) {
		t.Errorf("the log does not say how many runs were removed: %s", logs.String())
	}
}
