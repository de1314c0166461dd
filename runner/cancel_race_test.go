package runner_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"knobs/db"
	"knobs/llm/sim"
	"knobs/runner"
)

// heldStore holds the write of a run's ending until told to go on, so a
// test can act while the ending is decided but not yet stored.
type heldStore struct {
	*db.Store
	ending  chan struct{} // closed when the ending's write arrives
	release chan struct{}
}

func (s *heldStore) WriteRuns(ctx context.Context, ws []db.RunWrite) error {
	for _, w := range ws {
		if w.Finish != nil {
			close(s.ending)
			<-s.release
		}
	}
	return s.Store.WriteRuns(ctx, ws)
}

// A stop that comes while a finished run's ending is being stored is
// refused: the answer must say what will be stored, and the run is
// stored done.
func TestCancelAfterTheEndingIsDecidedIsRefused(t *testing.T) {
	f := newFixture(t, runner.Options{})
	hs := &heldStore{Store: f.store, ending: make(chan struct{}), release: make(chan struct{})}
	f.r = runner.New(hs, slog.New(slog.NewTextHandler(io.Discard, nil)), runner.Options{})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		f.r.Shutdown(ctx)
	})
	client := simClient(t, sim.Options{TokensPerSecond: sim.NoPacing})
	run := f.start(t, client, chatSpec(`{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":5}`))
	leave := run.Subscribe()
	defer leave()
	select {
	case <-hs.ending:
	case <-time.After(10 * time.Second):
		t.Fatal("the run's ending was never written")
	}
	cancelled := f.r.Cancel(run.ID, f.user)
	close(hs.release)
	r, _ := f.waitStored(t, run.ID)
	if cancelled || r.Status != db.RunDone {
		t.Errorf("Cancel during the ending's write = %v, stored %q; want false and done", cancelled, r.Status)
	}
}

// Cancel's answer and the stored status agree wherever the stop lands.
func TestCancelsAnswerMatchesWhatIsStored(t *testing.T) {
	f := newFixture(t, runner.Options{})
	client := simClient(t, sim.Options{TokensPerSecond: sim.NoPacing})
	for i := range 40 {
		run := f.start(t, client, chatSpec(`{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":3}`))
		leave := run.Subscribe()
		if i%2 == 1 {
			waitFrame(t, run, "delta")
		}
		cancelled := f.r.Cancel(run.ID, f.user)
		r, _ := f.waitStored(t, run.ID)
		leave()
		if want := map[bool]string{true: db.RunCancelled, false: db.RunDone}[cancelled]; r.Status != want {
			t.Fatalf("run %d: Cancel answered %v and the run was stored %q", i, cancelled, r.Status)
		}
	}
}
