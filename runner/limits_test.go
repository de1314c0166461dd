package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"knobs/db"
	"knobs/llm"
	"knobs/llm/sim"
	"knobs/runner"
)

// errDiskFull stands for a write the disk refused.
var errDiskFull = errors.New("database or disk is full (13)")

// faultyStore is a real store whose writes fail while told to.
type faultyStore struct {
	*db.Store
	failFinish     atomic.Bool
	failCheckpoint atomic.Bool
	finishTries    atomic.Int64
}

func (s *faultyStore) WriteRuns(ctx context.Context, ws []db.RunWrite) error {
	for _, w := range ws {
		switch {
		case w.Finish != nil:
			s.finishTries.Add(1)
			if s.failFinish.Load() {
				return fmt.Errorf("db: unable to finish run %d: %w", w.RunID, errDiskFull)
			}
		case w.Chunk != nil && s.failCheckpoint.Load():
			return fmt.Errorf("db: unable to checkpoint run %d: %w", w.RunID, errDiskFull)
		}
	}
	return s.Store.WriteRuns(ctx, ws)
}

// syncLog is a log safe to read while the runner writes it.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// faultyFixture is a fixture whose runner writes through a faultyStore
// and logs into a buffer.
func faultyFixture(t *testing.T, opts runner.Options) (*fixture, *faultyStore, *syncLog) {
	t.Helper()
	f := newFixture(t, runner.Options{})
	fs := &faultyStore{Store: f.store}
	logs := &syncLog{}
	f.r = runner.New(fs, slog.New(slog.NewTextHandler(logs, nil)), opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.r.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return f, fs, logs
}

// endlessClient streams deltas as fast as they are read and never ends a
// stream on its own.
func endlessClient(t *testing.T) *llm.Client {
	t.Helper()
	chunk := `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"and on "}}]}` + "\n\n"
	block := strings.Repeat(chunk, 64)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, block); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(up.Close)
	return llm.NewClient(llm.ProviderConfig{ID: "sim", Dialect: llm.DialectSim, BaseURL: up.URL})
}

// listenUpTo reads run's frames like listen, but fails once more than
// limit bytes of text went by: without a bound the run never ends.
func listenUpTo(t *testing.T, run *runner.Run, limit int) []frame {
	t.Helper()
	leave := run.Subscribe()
	defer leave()
	var out []frame
	text, after := 0, 0
	deadline := time.After(30 * time.Second)
	for {
		frames, finished, more := run.Frames(after)
		for _, b := range frames {
			fr := parseFrame(b)
			if fr.event == "delta" {
				var d struct{ Text string }
				json.Unmarshal([]byte(fr.data), &d)
				text += len(d.Text)
			}
			out = append(out, fr)
		}
		if text > limit {
			t.Fatalf("%d bytes of text went by; the run should have stopped at %d", text, limit)
		}
		after += len(frames)
		if finished && len(frames) == 0 {
			return out
		}
		if len(frames) > 0 {
			continue
		}
		select {
		case <-more:
		case <-deadline:
			t.Fatal("run did not finish in 30s")
		}
	}
}

func TestEndlessUpstreamWithFailingCheckpointsIsLoggedAndNotLeftRunning(t *testing.T) {
	const limit = 32 << 10
	f, fs, logs := faultyFixture(t, runner.Options{MaxOutputBytes: limit, Checkpoint: time.Millisecond})
	fs.failCheckpoint.Store(true)
	run := f.start(t, endlessClient(t), chatSpec(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	// The run is slowed down by the listener long enough for checkpoints.
	frames := listenUpTo(t, run, 4*limit)
	if last := frames[len(frames)-1]; last.event != "done" || !strings.Contains(last.data, `"status":"error"`) {
		t.Errorf("last frame %+v, want done with status error", last)
	}
	r, res := f.stored(t, run.ID)
	if r.Status != db.RunError || len(res.Choices[0].Content) == 0 || len(res.Choices[0].Content) > limit {
		t.Errorf("stored %s with %d bytes, want error with the text before the limit", r.Status, len(res.Choices[0].Content))
	}
	if want := fmt.Sprintf("run=%d", run.ID); !strings.Contains(logs.String(), "checkpointing run") || !strings.Contains(logs.String(), want) {
		t.Errorf("the failed checkpoints were not logged with %s:\n%.2000s", want, logs.String())
	}
}

func TestARunPastItsMaximumDurationEndsAsAnErrorWithItsOutput(t *testing.T) {
	client, ended := hangingUpstream(t)
	f := newFixture(t, runner.Options{MaxDuration: 200 * time.Millisecond})
	run := f.start(t, client, chatSpec(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	frames := listen(t, run, 0)
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream request did not end")
	}
	var errData string
	for _, fr := range frames {
		if fr.event == "error" {
			errData = fr.data
		}
	}
	for _, want := range []string{"maximum duration", "200ms", "KNOBS_MAX_RUN_DURATION"} {
		if !strings.Contains(errData, want) {
			t.Errorf("error event %q does not say %q", errData, want)
		}
	}
	r, res := f.waitStored(t, run.ID)
	if r.Status != db.RunError || res.Choices[0].Content != "Hello" {
		t.Errorf("stored %s with %+v, want error with the partial text", r.Status, res.Choices)
	}
}

func TestAFailedFinalSaveIsNotCalledDoneAndIsRetried(t *testing.T) {
	f, fs, logs := faultyFixture(t, runner.Options{StoreRetry: 5 * time.Millisecond})
	fs.failFinish.Store(true)
	client := simClient(t, sim.Options{TokensPerSecond: sim.NoPacing})
	run := f.start(t, client, chatSpec(`{"model":"sim-fast","messages":[{"role":"user","content":"Tell me about tides"}],"max_completion_tokens":30}`))
	frames := listen(t, run, 0)
	if len(frames) < 2 {
		t.Fatalf("frames %+v", frames)
	}
	errFrame, last := frames[len(frames)-2], frames[len(frames)-1]
	if errFrame.event != "error" || !strings.Contains(errFrame.data, "could not be stored") {
		t.Errorf("before the end came %+v, want an error saying the run could not be stored", errFrame)
	}
	if last.event != "done" || strings.Contains(last.data, `"status":"done"`) {
		t.Errorf("the run ended with %+v; done must not claim a run that is not stored", last)
	}
	if r, _ := f.stored(t, run.ID); r.Status != db.RunRunning {
		t.Fatalf("the row is %s though every save failed", r.Status)
	}
	// The runner keeps trying; once the disk has room the run is stored whole.
	for deadline := time.Now().Add(10 * time.Second); fs.finishTries.Load() < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the runner tried to store the run %d times in 10s", fs.finishTries.Load())
		}
	}
	// Kept is over (the retry took over), but the ending is not stored:
	// Settled, which budgets' holds wait for, stays open until it is.
	select {
	case <-run.Kept():
	case <-time.After(10 * time.Second):
		t.Fatal("Kept not closed while the retry goes on")
	}
	select {
	case <-run.Settled():
		t.Fatal("Settled closed while the ending is not stored")
	default:
	}
	fs.failFinish.Store(false)
	select {
	case <-run.Settled():
	case <-time.After(10 * time.Second):
		t.Fatal("Settled not closed once the retry stored the run")
	}
	r, res := f.waitStored(t, run.ID)
	if r.Status != db.RunDone || res.Metrics.Tokens != 30 {
		t.Errorf("after the retry: %s with %d tokens, want done with 30", r.Status, res.Metrics.Tokens)
	}
	if events, _ := f.store.RunEvents(context.Background(), f.user, run.ID); !bytes.Contains(events, []byte(`"status":"done"`)) {
		t.Error("the stored events do not end with the run's own done")
	}
	if !strings.Contains(logs.String(), fmt.Sprintf("run=%d", run.ID)) || !strings.Contains(logs.String(), "disk is full") {
		t.Errorf("the failed save was not logged with the run id:\n%.2000s", logs.String())
	}
}

func TestABigRunDoesNotStopOtherRunsFromSaving(t *testing.T) {
	f := newFixture(t, runner.Options{MaxRunsPerUser: 32})
	client := simClient(t, sim.Options{TokensPerSecond: sim.NoPacing})
	big := f.start(t, client, chatSpec(`{"model":"sim-fast","messages":[{"role":"user","content":"Tell me everything"}],"seed":1,"n":4,"min_tokens":5000,"max_tokens":5000}`))
	var small []*runner.Run
	for i := range 20 {
		small = append(small, f.start(t, client, chatSpec(fmt.Sprintf(`{"model":"sim-fast","messages":[{"role":"user","content":"Tell me about tides"}],"seed":%d,"max_tokens":40}`, i+2))))
	}
	var wg sync.WaitGroup
	for _, run := range append(small, big) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			leave := run.Subscribe()
			defer leave()
			for {
				_, finished, more := run.Frames(0)
				if finished {
					return
				}
				<-more
			}
		}()
	}
	wg.Wait()
	for _, run := range small {
		if r, res := f.waitStored(t, run.ID); r.Status != db.RunDone || res.Metrics.Tokens != 40 {
			t.Errorf("small run %d: %s with %d tokens", run.ID, r.Status, res.Metrics.Tokens)
		}
	}
	if r, res := f.waitStored(t, big.ID); r.Status != db.RunDone || res.Metrics.Tokens != 20000 {
		t.Errorf("big run: %s with %d tokens", r.Status, res.Metrics.Tokens)
	}
}

// An experiment's runs take shared slots: they count against Knobs'
// bound but not the user's, and a shared run gives its slot back to the
// total when it ends.
func TestSharedSlotsCountOnlyAgainstTheTotal(t *testing.T) {
	f := newFixture(t, runner.Options{MaxRunsPerUser: 1, MaxRuns: 3})
	shared, err := f.r.ReserveShared(f.user, 2)
	if err != nil {
		t.Fatal(err)
	}
	own, err := f.r.Reserve(f.user, 1)
	if err != nil {
		t.Fatalf("with two shared slots taken, the user's own bound of 1 refused: %v", err)
	}
	var le *runner.LimitError
	if _, err := f.r.ReserveShared(f.user, 1); !errors.As(err, &le) || le.PerUser || le.Limit != 3 {
		t.Fatalf("a fourth slot passed the total of 3: %v", err)
	}
	own.Release()
	client := simClient(t, sim.Options{TokensPerSecond: sim.NoPacing})
	spec := llm.RunSpec{Provider: "sim", Endpoint: llm.EndpointChat, Body: json.RawMessage(`{"model":"sim-fast","messages":[{"role":"user","content":"Hi"}],"max_tokens":5}`)}
	id, err := f.store.CreateRun(context.Background(), db.Run{UserID: f.user, Provider: "sim", Endpoint: "chat", Model: "sim-fast", Spec: "{}", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	run, err := shared.Start(id, client, spec, llm.Model{ID: "sim-fast"})
	if err != nil {
		t.Fatal(err)
	}
	leave := run.Subscribe()
	<-run.Kept()
	leave()
	shared.Release()
	// Every slot is back: the user's own one and two shared.
	if _, err := f.r.Reserve(f.user, 1); err != nil {
		t.Errorf("after the shared run ended, the user's own slot: %v", err)
	}
	if _, err := f.r.ReserveShared(f.user, 2); err != nil {
		t.Errorf("after the shared run ended, two shared slots: %v", err)
	}
}
