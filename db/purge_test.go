package db_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"knobs/db"
)

// A purge of a long history deletes in many small transactions, and runs
// that end meanwhile are saved between them: both from the purge's own
// goroutine between two batches (which would deadlock on the single
// writer if a batch held it) and from other goroutines all along.
func TestPurgeDeletesInBatchesAndLetsOtherWritesThrough(t *testing.T) {
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(t.TempDir(), "knobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	user, err := store.CreateUser(ctx, db.SignUp{Username: "ada", PasswordHash: "hash"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	saveRun := func(created time.Time) (int64, error) {
		id, err := store.CreateRun(ctx, db.Run{UserID: user.ID, Provider: "sim", Endpoint: "chat", Model: "sim-fast",
			Spec: `{"provider":"sim","endpoint":"chat","body":{"messages":[{"role":"user","content":"an old question"}]}}`, CreatedAt: created})
		if err != nil {
			return 0, err
		}
		return id, store.FinishRun(ctx, id, db.RunDone, "{}", `{"choices":[{"content":"an old answer"}]}`, []byte("event: done\ndata: {}\n\n"), now)
	}
	const expired, batch = 1000, 50
	if err := store.AddFinishedRuns(ctx, user.ID, expired, now.AddDate(0, 0, -400)); err != nil {
		t.Fatal(err)
	}

	// Other users' runs end while the purge goes on.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var fresh []int64
	var writeErrs []error
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			id, err := saveRun(time.Now())
			mu.Lock()
			fresh, writeErrs = append(fresh, id), append(writeErrs, err)
			mu.Unlock()
		}
	}()

	batches := 0
	var between []int64
	n, err := store.PurgeRunsInBatches(ctx, now.AddDate(0, 0, -30), batch, func(deleted int64) {
		batches++
		if deleted > batch {
			t.Errorf("one transaction deleted %d runs, more than the batch of %d", deleted, batch)
		}
		id, err := saveRun(time.Now())
		if err != nil {
			t.Errorf("a run ending between two batches of the purge was not saved: %v", err)
		}
		between = append(between, id)
	})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if n != expired {
		t.Errorf("purged %d runs, want %d", n, expired)
	}
	if batches < expired/batch {
		t.Errorf("the purge used %d transactions, want at least %d of %d runs", batches, expired/batch, batch)
	}
	for _, err := range writeErrs {
		if err != nil {
			t.Fatalf("a run ending during the purge was not saved: %v", err)
		}
	}
	// Every run saved during the purge is kept; the expired ones are gone.
	for _, id := range append(between, fresh...) {
		if _, err := store.Run(ctx, user.ID, id); err != nil {
			t.Fatalf("run %d, saved during the purge, is gone: %v", id, err)
		}
	}
	runs, _, err := store.Runs(ctx, db.RunFilter{UserID: user.ID, Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.CreatedAt.Before(now.AddDate(0, 0, -30)) {
			t.Fatalf("run %d, expired, survived the purge", r.ID)
		}
	}
	t.Logf("%d batches; %d runs saved between batches, %d alongside", batches, len(between), len(fresh))
}
