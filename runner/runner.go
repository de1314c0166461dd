// Package runner runs requests to providers: it starts a provider stream,
// turns its events into SSE frames, fans them out to any number of
// listeners, keeps live runs in memory for reconnects, checkpoints the
// partial result and stores the run however it ends.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"knobs/db"
	"knobs/llm"
	"knobs/metrics"
)

// Store is what the runner writes runs to: many writes, of any runs, in
// one transaction (see writer).
type Store interface {
	WriteRuns(ctx context.Context, ws []db.RunWrite) error
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
	// MaxOutputBytes caps the text, reasoning and tool-call bytes of one
	// run: an upstream that never stops must not take the server's memory.
	MaxOutputBytes int64 // default 8 MiB
	// MaxDuration is the longest a run may go on, whatever the upstream
	// sends.
	MaxDuration time.Duration // default 30 minutes
	// MaxRunsPerUser and MaxRuns bound the runs going at once, for one
	// user and in all; each pane of a comparison is a run.
	MaxRunsPerUser int // default 8
	MaxRuns        int // default 200
	// StoreRetry is the first wait before a failed final save is tried
	// again; the wait doubles up to a minute.
	StoreRetry time.Duration // default 1s
	// Metrics counts runs as they start and end, and the writer's
	// queue; nil counts nothing.
	Metrics *metrics.Metrics
}

// Causes of a run's cancellation, told apart when it is stored.
var (
	ErrCancelled  = errors.New("runner: cancelled by the user")
	ErrNoListener = errors.New("runner: cancelled: nobody was listening")
	ErrShutdown   = errors.New("runner: the server is shutting down")
	// ErrOutputLimit and ErrMaxDuration end a run at one of Knobs' bounds.
	ErrOutputLimit = errors.New("runner: the output limit was reached")
	ErrMaxDuration = errors.New("runner: the run reached its maximum duration")
	// errNotCreated ends a run whose row could not be written.
	errNotCreated = errors.New("runner: the run could not be stored")
	// errPanic ends a run whose relay panicked.
	errPanic = errors.New("runner: internal error")
)

// Error kinds of the runner's own, beside the provider's (llm.ErrorKind).
const (
	// KindLimit is a run stopped at one of Knobs' bounds.
	KindLimit llm.ErrorKind = "limit"
	// KindStorage is a run that ended but could not be stored.
	KindStorage llm.ErrorKind = "storage"
	// KindInternal is a run stopped by a fault in Knobs itself.
	KindInternal llm.ErrorKind = "internal"
)

// LimitError refuses a run that would pass a bound on the runs going at
// once.
type LimitError struct {
	PerUser bool // the user's own bound; false: Knobs' total
	Limit   int  // the bound
	Running int  // runs going (or reserved) when refused
	Wanted  int  // runs asked for
}

func (e *LimitError) Error() string {
	who := "in all"
	if e.PerUser {
		who = "for this user"
	}
	return fmt.Sprintf("runner: %d runs going %s, %d more would pass the limit of %d", e.Running, who, e.Wanted, e.Limit)
}

// Runner owns every live run.
type Runner struct {
	store Store
	log   *slog.Logger
	opts  Options

	mu      sync.Mutex
	runs    map[int64]*Run
	closed  bool
	stop    chan struct{} // closed by Shutdown: background saves give up
	active  int           // slots reserved or held by live runs
	perUser map[int64]int // active, per user
	wg      sync.WaitGroup
	writer  *writer
	once    sync.Once // stops the writer
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
	def(&opts.MaxDuration, 30*time.Minute)
	def(&opts.StoreRetry, time.Second)
	if render := opts.Render; render != nil {
		// A renderer that panics on some answer costs that answer its
		// HTML, not the run: the page shows the text instead.
		opts.Render = func(md string) (html string) {
			defer func() {
				if p := recover(); p != nil {
					log.Error("panic rendering an answer", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
					html = ""
				}
			}()
			return render(md)
		}
	}
	if opts.MaxOutputBytes <= 0 {
		opts.MaxOutputBytes = 8 << 20
	}
	if opts.MaxRunsPerUser <= 0 {
		opts.MaxRunsPerUser = 8
	}
	if opts.MaxRuns <= 0 {
		opts.MaxRuns = 200
	}
	return &Runner{store: store, log: log, opts: opts, runs: map[int64]*Run{}, stop: make(chan struct{}), perUser: map[int64]int{},
		writer: newWriter(store, log, opts.Metrics)}
}

// Slots is room reserved for n runs of one user. It is taken before
// anything is stored or sent upstream, under the same lock as every
// other reservation, so that the bounds hold however many requests come
// at once. Start uses one slot per run; Release gives back the rest.
type Slots struct {
	r      *Runner
	user   int64
	left   int  // guarded by r.mu
	shared bool // taken by ReserveShared: not counted against the user's bound
}

// Reserve takes n slots for user, or fails with a *LimitError naming the
// bound it would pass (or ErrShutdown).
func (r *Runner) Reserve(user int64, n int) (*Slots, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrShutdown
	}
	if mine := r.perUser[user]; mine+n > r.opts.MaxRunsPerUser {
		return nil, &LimitError{PerUser: true, Limit: r.opts.MaxRunsPerUser, Running: mine, Wanted: n}
	}
	if r.active+n > r.opts.MaxRuns {
		return nil, &LimitError{Limit: r.opts.MaxRuns, Running: r.active, Wanted: n}
	}
	r.perUser[user] += n
	r.active += n
	return &Slots{r: r, user: user, left: n}, nil
}

// ReserveShared takes n slots for runs of user that count against
// Knobs' bound on runs going at once but not against the user's own: an
// experiment's cells, whose number the experiment's concurrency bounds,
// must not leave its owner unable to run anything by hand meanwhile.
func (r *Runner) ReserveShared(user int64, n int) (*Slots, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrShutdown
	}
	if r.active+n > r.opts.MaxRuns {
		return nil, &LimitError{Limit: r.opts.MaxRuns, Running: r.active, Wanted: n}
	}
	r.active += n
	return &Slots{r: r, user: user, left: n, shared: true}, nil
}

// Release gives back the slots no run took; safe to call more than once.
func (s *Slots) Release() {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.releaseSlots(s, s.left)
	s.left = 0
}

// releaseSlots frees n slots of s; the caller holds r.mu.
func (r *Runner) releaseSlots(s *Slots, n int) {
	if s.shared {
		r.active -= n
		return
	}
	r.release(s.user, n)
}

// release frees n slots of user; the caller holds r.mu.
func (r *Runner) release(user int64, n int) {
	if n == 0 {
		return
	}
	r.active -= n
	if r.perUser[user] -= n; r.perUser[user] <= 0 {
		delete(r.perUser, user)
	}
}

// Start begins run id of user at once, whether or not anyone listens yet,
// with a slot of its own. model gives the prices used for the cost. It
// fails when the user or Knobs has as many runs going as allowed (a
// *LimitError), or when the runner is shutting down.
func (r *Runner) Start(id, user int64, s Streamer, spec llm.RunSpec, model llm.Model) (*Run, error) {
	slots, err := r.Reserve(user, 1)
	if err != nil {
		return nil, err
	}
	defer slots.Release()
	return slots.Start(id, s, spec, model)
}

// Start begins run id of the slots' user in one of its slots, which the
// run holds until it ends. The run's row must exist already.
func (sl *Slots) Start(id int64, s Streamer, spec llm.RunSpec, model llm.Model) (*Run, error) {
	return sl.start(id, nil, s, spec, model)
}

// Create begins a new run whose row (row.ID from the store's NextRunID)
// is written by the runner's writer, queued before anything else of the
// run: the upstream request starts at once, in parallel with the first
// write, and the request that made the run waits for no write at all.
func (sl *Slots) Create(row db.Run, s Streamer, spec llm.RunSpec, model llm.Model) (*Run, error) {
	return sl.start(row.ID, &row, s, spec, model)
}

func (sl *Slots) start(id int64, row *db.Run, s Streamer, spec llm.RunSpec, model llm.Model) (*Run, error) {
	r := sl.r
	ctx, cancel := context.WithCancelCause(context.Background())
	run := &Run{
		ID:        id,
		UserID:    sl.user,
		cancel:    cancel,
		changed:   make(chan struct{}),
		ended:     make(chan struct{}),
		kept:      make(chan struct{}),
		storedEnd: make(chan struct{}),
		full:      make(chan struct{}, 1),
		started:   time.Now(),
		model:     model,
		result:    Result{Price: PriceOf(model)},
		idleGrace: r.opts.IdleGrace,
		shared:    sl.shared,
		provider:  spec.Provider,
		modelName: model.ID,
	}
	if row != nil && row.Model != "" {
		run.modelName = row.Model // the model as asked for, listed or not
	} else if run.modelName == "" {
		run.modelName = spec.Model()
	}
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		cancel(ErrShutdown)
		return nil, ErrShutdown
	case sl.left == 0:
		r.mu.Unlock()
		cancel(nil)
		return nil, errors.New("runner: every reserved slot is taken")
	}
	sl.left--
	r.runs[id] = run
	r.wg.Add(1)
	r.mu.Unlock()
	r.opts.Metrics.RunStarted(run.provider, run.modelName, knownModel(model))
	if row != nil {
		if p := run.result.Price; p != nil && row.Price == nil {
			// Kept with the row, for a run a restart cuts (db.InterruptRuns).
			row.Price = &db.RunPrice{Input: p.Input, Output: p.Output, CachedInput: p.CachedInput, Reasoning: p.Reasoning}
		}
		run.row, run.created = row, make(chan struct{})
		r.writer.push(writeOp{w: db.RunWrite{RunID: id, Create: row}, then: run.setRowWritten})
	}

	run.mu.Lock()
	run.idle = time.AfterFunc(r.opts.StartGrace, func() { run.cancelIfUnheard() })
	run.mu.Unlock()

	go func() {
		defer r.wg.Done()
		if save := r.drive(ctx, run, s, spec); save != nil {
			// Kept in memory meanwhile, so that listeners still find it.
			r.storeLater(run, save)
		}
		close(run.storedEnd)
		time.AfterFunc(r.opts.Linger, func() { r.forget(run) })
	}()
	return run, nil
}

// knownModel reports whether Knobs knows m (the model a run was checked
// against): its provider's list named it or Knobs' built-in list has it
// (Source), or an admin priced it. Only a known model is counted in the
// metrics under its own name: anyone can type a name.
func knownModel(m llm.Model) bool {
	return m.Source != "" || m.PriceSource == llm.PriceAdmin
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
// another user's, or already finished) or its ending is already decided,
// in which case it is stored as it ended.
func (r *Runner) Cancel(id, user int64) bool {
	run, ok := r.Run(id, user)
	return ok && run.stop(ErrCancelled)
}

// Drop stops user's run id if it is still going and forgets it at once,
// as when the run is deleted: no one may read it from memory after that.
// Listeners already streaming it keep what they have.
func (r *Runner) Drop(id, user int64) {
	run, ok := r.Run(id, user)
	if !ok {
		return
	}
	run.stop(ErrCancelled)
	r.forget(run)
}

// CancelUser stops every live run of user, as when their account is
// removed: nobody is left to read them, and their rows are gone.
func (r *Runner) CancelUser(user int64) int {
	r.mu.Lock()
	var theirs []*Run
	for _, run := range r.runs {
		if run.UserID == user {
			theirs = append(theirs, run)
		}
	}
	r.mu.Unlock()
	n := 0
	for _, run := range theirs {
		if run.stop(ErrCancelled) {
			n++
		}
	}
	return n
}

// Shutdown cancels every live run and waits until each is stored with its
// partial output, or ctx ends.
func (r *Runner) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	if !r.closed {
		close(r.stop)
	}
	r.closed = true
	for _, run := range r.runs {
		run.cancel(ErrShutdown)
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		// Every run has queued its last write: the writer stores them
		// and stops.
		r.once.Do(r.writer.stop)
		close(done)
	}()
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
// the run. When its ending could not be stored, it returns the write
// that is left to do.
func (r *Runner) drive(ctx context.Context, run *Run, s Streamer, spec llm.RunSpec) *db.RunWrite {
	stopCheckpoints := make(chan struct{})
	checkpointsDone := make(chan struct{})
	go func() {
		defer close(checkpointsDone)
		r.checkpoint(run, stopCheckpoints)
	}()
	tooLong := time.AfterFunc(r.opts.MaxDuration, func() { run.cancel(ErrMaxDuration) })

	st, panicked := r.relay(ctx, run, s, spec)
	tooLong.Stop()
	var upstreamErr *llm.Error
	var rawResponse []byte
	if st != nil {
		st.Close()
		upstreamErr, rawResponse = st.Err(), st.RawResponse()
	}
	close(stopCheckpoints)
	<-checkpointsDone

	status := db.RunDone
	cause := run.settle(ctx)
	switch {
	case errors.Is(cause, ErrCancelled), errors.Is(cause, ErrNoListener):
		status, upstreamErr = db.RunCancelled, nil
	case errors.Is(cause, ErrShutdown):
		status, upstreamErr = db.RunInterrupted, nil
	case errors.Is(cause, ErrOutputLimit):
		status, upstreamErr = db.RunError, &llm.Error{Kind: KindLimit, Message: fmt.Sprintf(
			"output limit reached: the run produced more than %s of text, reasoning and tool calls, the most Knobs keeps of one run (KNOBS_MAX_OUTPUT_BYTES); what came before is kept", byteSize(r.opts.MaxOutputBytes))}
	case errors.Is(cause, ErrMaxDuration) && upstreamErr != nil:
		// Only a stream the timer cut: one that ended whole as it fired is done.
		status, upstreamErr = db.RunError, &llm.Error{Kind: KindLimit, Message: fmt.Sprintf(
			"the run reached its maximum duration of %s (KNOBS_MAX_RUN_DURATION) and was stopped; what came before is kept", r.opts.MaxDuration)}
	case upstreamErr != nil:
		status = db.RunError
	}
	if panicked {
		status, upstreamErr = db.RunError, &llm.Error{Kind: KindInternal, Message: "Knobs hit an internal error while relaying this run and stopped it; it has been logged. What came before is kept."}
	}
	end := run.finish(status, upstreamErr, spec.Endpoint, spec.Body, time.Now())
	r.opts.Metrics.RunFinished(run.metricsEnd(status, upstreamErr, cause, end))
	if end.encodeErr != nil {
		r.log.Error("encoding the result of run", "run", run.ID, "err", end.encodeErr)
	}
	// One write makes the ending durable: the last chunk of the stream
	// and the small final state. done follows it at once.
	err := r.writer.write(end.write)
	if rowErr, _ := run.rowWritten(true); rowErr != nil {
		// The row was never written, so nothing after it was either:
		// the retry writes the whole run.
		err = fmt.Errorf("creating the run's row: %w", rowErr)
		end.write = run.wholeWrite(end)
	}
	// The slot is free before listeners hear the end, so that a user who
	// runs again at once is not refused.
	r.mu.Lock()
	if run.shared {
		r.active--
	} else {
		r.release(run.UserID, 1)
	}
	r.mu.Unlock()
	if err != nil {
		r.log.Error("storing run failed; retrying in the background", "run", run.ID, "err", err)
		run.publishEnding(status, run.unstored(end))
		run.closeStream()
		run.cancel(nil)
		left := end.write
		left.RawResponse = nonNil(rawResponse)
		left.Index = left.Finish.Result
		close(run.kept) // what could be stored now is; the retry is not waited for
		return &left
	}
	run.publishEnding(status, end.closing)
	run.cancel(nil) // release the context's resources

	// What the user does not wait for: the answer rendered (its own
	// frame, after done), the provider's raw answer for the raw view, and
	// the output in the history list and search, stored together after
	// the stream ends.
	var last [][]byte
	extra := db.RunWrite{RunID: run.ID, RawResponse: nonNil(rawResponse), Index: end.write.Finish.Result}
	if r.opts.Render != nil {
		contents := run.contents()
		html := make([]string, len(contents))
		for i, text := range contents {
			html[i] = r.opts.Render(text)
		}
		f := run.rendered(html)
		last = append(last, f)
		extra.Chunk = &db.RunChunk{First: end.write.Chunk.First + countFrames(end.write.Chunk.Frames), Frames: f,
			Times: EncodeTimes(nil, 1, uint32(time.Since(run.started).Milliseconds()))}
	}
	run.closeStream(last...)
	if err := r.writer.write(extra); err != nil {
		r.log.Error("storing the rendered answer and raw response of run", "run", run.ID, "err", err)
	}
	close(run.kept)
	return nil
}

// countFrames counts the SSE frames in b, each ended by a blank line.
func countFrames(b []byte) int {
	return bytes.Count(b, []byte("\n\n"))
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// relay folds the provider stream into the run's frames until it ends
// or the output cap is reached. A panic in it (a decoder or a frame
// builder meeting what it never expected) is logged and ends this run
// alone, as an error with its output so far: every other run goes on.
func (r *Runner) relay(ctx context.Context, run *Run, s Streamer, spec llm.RunSpec) (st *llm.Stream, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("panic relaying run", "run", run.ID, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			run.cancel(errPanic)
			panicked = true
		}
	}()
	st = s.Stream(ctx, spec)
	run.setRequest(st.Request())
	var lastMetrics time.Time
	for st.Next() {
		now := time.Now()
		if !run.apply(st.Event(), now, r.opts.MaxOutputBytes) {
			// Stop reading at once: the cancel ends the upstream request,
			// and nothing past the cap is kept.
			run.cancel(ErrOutputLimit)
			break
		}
		if now.Sub(lastMetrics) >= r.opts.MetricsEvery {
			lastMetrics = now
			run.emitMetrics(now)
		}
	}
	return st, false
}

// maxStoreRetry is the longest wait between two tries of a final save.
const maxStoreRetry = time.Minute

// storeLater tries a failed ending again, waiting longer each time,
// until it is stored or the runner shuts down. A run left unstored at
// shutdown keeps what its checkpoints stored, and the next start marks
// it interrupted.
func (r *Runner) storeLater(run *Run, w *db.RunWrite) {
	wait := r.opts.StoreRetry
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			if err := r.writer.write(*w); err != nil {
				r.log.Error("run left unstored at shutdown; the next start marks it interrupted with what its checkpoints stored", "run", run.ID, "err", err)
			}
			return
		case <-t.C:
		}
		err := r.writer.write(*w)
		if err == nil {
			r.log.Info("run stored after retrying", "run", run.ID)
			return
		}
		wait = min(2*wait, maxStoreRetry)
		r.log.Warn("storing run failed again", "run", run.ID, "retry_in", wait, "err", err)
		t.Reset(wait)
	}
}

// checkpoint appends what the run streamed since the last checkpoint,
// every Options.Checkpoint or when chunkBytes of it are waiting, until
// stop. A checkpoint that fails is
// logged; the next one carries its frames too.
func (r *Runner) checkpoint(run *Run, stop <-chan struct{}) {
	t := time.NewTicker(r.opts.Checkpoint)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		case <-run.full:
		}
		if rowErr, known := run.rowWritten(false); known && rowErr != nil {
			// Nothing of this run can be stored until its row is: stop
			// spending tokens on it. Its ending says why.
			r.log.Error("creating run", "run", run.ID, "err", rowErr)
			run.cancel(errNotCreated)
			return
		}
		w, upTo := run.pending()
		if w.Chunk == nil && w.Request == "" {
			continue
		}
		if err := r.writer.write(w); err != nil {
			r.log.Error("checkpointing run", "run", run.ID, "err", err)
			continue
		}
		run.markStored(w, upTo)
	}
}

// byteSize writes n as people read a limit: "8 MiB", "64 KiB", "1000 bytes".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
