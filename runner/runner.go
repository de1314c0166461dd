// Package runner runs requests to providers: it starts a provider stream,
// turns its events into SSE frames, fans them out to any number of
// listeners, keeps live runs in memory for reconnects, checkpoints the
// partial result and stores the run however it ends.
package runner

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"knobs/db"
	"knobs/llm"
)

// Store is what the runner writes runs to.
type Store interface {
	CheckpointRun(ctx context.Context, id int64, rawRequest, result string) error
	FinishRun(ctx context.Context, id int64, status, rawRequest, result string, events []byte, at time.Time) error
	SetRunRawResponse(ctx context.Context, id int64, raw []byte) error
	SetRunEventTimes(ctx context.Context, id int64, times []byte) error
}

// Streamer opens a provider stream; *llm.Client is one.
type Streamer interface {
	Stream(ctx context.Context, spec llm.RunSpec) *llm.Stream
}

// Options tune the runner; zero values take the defaults.
type Options struct {
	// StartGrace is how long a run waits for its first listener before it
	// is cancelled, so that nobody pays for tokens nobody reads.
	StartGrace time.Duration // default 30s
	// IdleGrace is how long a run goes on after its last listener left.
	IdleGrace time.Duration // default 5s
	// Linger keeps a finished run in memory for late reconnects.
	Linger time.Duration // default 1 minute
	// Checkpoint is how often the partial result is saved.
	Checkpoint time.Duration // default 1s
	// MetricsEvery is the least time between two live metrics events.
	MetricsEvery time.Duration // default 200ms
	// Render turns a finished answer into safe HTML for the done event;
	// nil sends none.
	Render func(markdown string) string
}

// Causes of a run's cancellation, told apart when it is stored.
var (
	ErrCancelled  = errors.New("runner: cancelled by the user")
	ErrNoListener = errors.New("runner: cancelled: nobody was listening")
	ErrShutdown   = errors.New("runner: the server is shutting down")
)

// Runner owns every live run.
type Runner struct {
	store Store
	log   *slog.Logger
	opts  Options

	mu     sync.Mutex
	runs   map[int64]*Run
	closed bool
	wg     sync.WaitGroup
}

// New returns a Runner that stores runs in store.
func New(store Store, log *slog.Logger, opts Options) *Runner {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&opts.StartGrace, 30*time.Second)
	def(&opts.IdleGrace, 5*time.Second)
	def(&opts.Linger, time.Minute)
	def(&opts.Checkpoint, time.Second)
	def(&opts.MetricsEvery, 200*time.Millisecond)
	return &Runner{store: store, log: log, opts: opts, runs: map[int64]*Run{}}
}

// Start begins run id of user at once, whether or not anyone listens yet.
// model gives the prices used for the cost. It fails only when the
// runner is shutting down.
func (r *Runner) Start(id, user int64, s Streamer, spec llm.RunSpec, model llm.Model) (*Run, error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	run := &Run{
		ID:        id,
		UserID:    user,
		cancel:    cancel,
		changed:   make(chan struct{}),
		started:   time.Now(),
		model:     model,
		idleGrace: r.opts.IdleGrace,
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		cancel(ErrShutdown)
		return nil, ErrShutdown
	}
	r.runs[id] = run
	r.wg.Add(1)
	r.mu.Unlock()

	run.mu.Lock()
	run.idle = time.AfterFunc(r.opts.StartGrace, func() { run.cancelIfUnheard() })
	run.mu.Unlock()

	go func() {
		defer r.wg.Done()
		r.drive(ctx, run, s, spec)
		time.AfterFunc(r.opts.Linger, func() { r.forget(run) })
	}()
	return run, nil
}

// Run returns user's live (or recently finished) run id.
func (r *Runner) Run(id, user int64) (*Run, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run, ok := r.runs[id]
	if !ok || run.UserID != user {
		return nil, false
	}
	return run, true
}

// Cancel stops user's run id; false when no such run is live (unknown,
// another user's, or already finished).
func (r *Runner) Cancel(id, user int64) bool {
	run, ok := r.Run(id, user)
	if !ok || run.Status() != "" {
		return false
	}
	run.cancel(ErrCancelled)
	return true
}

// Shutdown cancels every live run and waits until each is stored with its
// partial output, or ctx ends.
func (r *Runner) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	for _, run := range r.runs {
		run.cancel(ErrShutdown)
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Runner) forget(run *Run) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs[run.ID] == run {
		delete(r.runs, run.ID)
	}
}

// drive relays the provider stream into frames until it ends, then stores
// the run.
func (r *Runner) drive(ctx context.Context, run *Run, s Streamer, spec llm.RunSpec) {
	stopCheckpoints := make(chan struct{})
	checkpointsDone := make(chan struct{})
	go func() {
		defer close(checkpointsDone)
		r.checkpoint(run, stopCheckpoints)
	}()

	st := s.Stream(ctx, spec)
	run.setRequest(st.Request())
	var lastMetrics time.Time
	for st.Next() {
		now := time.Now()
		run.apply(st.Event(), now)
		if now.Sub(lastMetrics) >= r.opts.MetricsEvery {
			lastMetrics = now
			run.emitMetrics(now)
		}
	}
	st.Close()
	close(stopCheckpoints)
	<-checkpointsDone

	status := db.RunDone
	upstreamErr := st.Err()
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrCancelled), errors.Is(cause, ErrNoListener):
		status, upstreamErr = db.RunCancelled, nil
	case errors.Is(cause, ErrShutdown):
		status, upstreamErr = db.RunInterrupted, nil
	case upstreamErr != nil:
		status = db.RunError
	}
	closing, events, times, result := run.finish(status, upstreamErr, r.opts.Render, spec.Body)
	raw := run.request()
	// The run's own context is cancelled by now: save with a fresh one.
	saveCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.store.FinishRun(saveCtx, run.ID, status, raw, result, events, time.Now()); err != nil {
		r.log.Error("storing run", "run", run.ID, "err", err)
	}
	if err := r.store.SetRunRawResponse(saveCtx, run.ID, st.RawResponse()); err != nil {
		r.log.Error("storing the raw response", "run", run.ID, "err", err)
	}
	if err := r.store.SetRunEventTimes(saveCtx, run.ID, times); err != nil {
		r.log.Error("storing the event times", "run", run.ID, "err", err)
	}
	run.publish(status, closing)
	run.cancel(nil) // release the context's resources
}

// checkpoint saves the partial result every Options.Checkpoint until stop.
func (r *Runner) checkpoint(run *Run, stop <-chan struct{}) {
	t := time.NewTicker(r.opts.Checkpoint)
	defer t.Stop()
	saved := -1
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		n, result := run.snapshot()
		if n == saved {
			continue
		}
		raw := run.request()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := r.store.CheckpointRun(ctx, run.ID, raw, result); err != nil {
			r.log.Error("checkpointing run", "run", run.ID, "err", err)
		} else {
			saved = n
		}
		cancel()
	}
}
