// Package experiment runs experiments: every variant of an experiment on
// every row of its dataset version, Repeats times, each cell a run in
// history, graded as it ends and stored with its grades. Cells run
// concurrently, up to the experiment's concurrency per provider; a rate
// limit is waited out (honouring the provider's retry-after) and a
// transient failure retried a bounded number of times, and a cell that
// still fails is marked failed with its message while the rest go on.
//
// The database is the experiment's state: a cell is started (StartCell,
// naming its run) before its run is waited for and finished (FinishCell)
// once graded, so that a restart of Knobs resumes an experiment where it
// stood (Resume) without sending any finished cell upstream again: a
// cell whose run finished while Knobs was stopping is graded from the
// stored run.
package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	"knobs/db"
	"knobs/field"
	"knobs/grade"
	"knobs/llm"
	"knobs/preset"
	"knobs/runner"
)

// Setup is what one run of an experiment sends: a spec with its
// {{placeholders}}, the values filled into them, and the preset it came
// from (0: none).
type Setup struct {
	Spec       llm.RunSpec
	Variables  map[string]string
	PresetID   int64
	Experiment int64
	// Arena is the arena the run makes an answer for (0: none), so that
	// its cost is counted against the arena in usage.
	Arena int64
}

// Started is a run a Launch began.
type Started struct {
	Run *runner.Run
	// PricesKnown says Knobs knows the model's prices, so a cost of 0 is
	// a cost of 0 and not an unknown one.
	PricesKnown bool
	// Stop cancels the run, keeping its partial output; nil: it cannot be.
	Stop func()
}

// Launch validates a setup for user and starts its run. Field errors
// mean the setup cannot run for this row (a variable without a value, a
// parameter out of range): the cell fails with them, nothing is sent. A
// *runner.LimitError means Knobs has as many runs going as it allows:
// the cell waits and tries again.
type Launch func(ctx context.Context, user int64, s Setup) (Started, field.Errors, error)

// Refusal is an error a Launch returns for a run Knobs will not send now
// (a monthly budget is used up). The cell ends with its message as it
// is, nothing sent; the experiment goes on, so each cell left is tried
// and refused in turn without anything sent (a cap on one provider
// leaves the other providers' cells to run), rather than pausing the
// experiment until a cap that may only reset next month.
type Refusal interface {
	error
	Refused()
}

// Grader is one of an experiment's graders as stored: the user's JSON,
// and for a judge the setup its preset resolved to when the experiment
// was made (so that a resumed experiment judges as it began).
type Grader struct {
	Spec  json.RawMessage `json:"spec"`
	Judge *Setup          `json:"judge,omitempty"`
}

// Options tune an Executor; zero values take the defaults.
type Options struct {
	// MaxAttempts bounds the runs one cell makes: a rate limit or a
	// transient failure (server error, network, timeout) is tried again
	// until then.
	MaxAttempts int // default 4
	// Backoff is the first wait before a retry that the provider gave no
	// retry-after for; it doubles each time, up to MaxBackoff.
	Backoff    time.Duration // default 1s
	MaxBackoff time.Duration // default 1 minute
	// LimitWait is how long a cell waits when Knobs has as many runs
	// going as it allows.
	LimitWait time.Duration // default 500ms
}

// Executor runs experiments in the background.
type Executor struct {
	store  *db.Store
	launch Launch
	log    *slog.Logger
	opts   Options

	mu     sync.Mutex
	jobs   map[int64]*job
	closed bool
	wg     sync.WaitGroup
}

// New returns an Executor that stores into store and starts runs with
// launch.
func New(store *db.Store, launch Launch, log *slog.Logger, opts Options) *Executor {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 4
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = time.Minute
	}
	if opts.LimitWait <= 0 {
		opts.LimitWait = 500 * time.Millisecond
	}
	return &Executor{store: store, launch: launch, log: log, opts: opts, jobs: map[int64]*job{}}
}

// ErrShutdown is returned by Start once the Executor is shutting down.
var ErrShutdown = errors.New("experiment: Knobs is shutting down")

// Start runs an experiment the store holds as running, in the
// background; starting one that runs already does nothing.
func (x *Executor) Start(e db.Experiment) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrShutdown
	}
	if _, ok := x.jobs[e.ID]; ok {
		return nil
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	j := &job{x: x, e: e, ctx: ctx, cancel: cancel, feed: newFeed(), started: time.Now(), done: make(chan struct{})}
	j.feed.setTotals(e.Total, e.Finished, e.Failed)
	x.jobs[e.ID] = j
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		j.run()
		x.mu.Lock()
		delete(x.jobs, e.ID)
		x.mu.Unlock()
		j.feed.close()
		close(j.done)
	}()
	return nil
}

// Resume starts every experiment the store holds as running: those a
// stop of Knobs cut short.
func (x *Executor) Resume(ctx context.Context) error {
	es, err := x.store.RunningExperiments(ctx)
	if err != nil {
		return err
	}
	for _, e := range es {
		x.log.Info("resuming an experiment", "experiment", e.ID, "cells left", e.Total-e.Finished)
		if err := x.Start(e); err != nil {
			return err
		}
	}
	return nil
}

// errCancelled is the cause of an experiment its owner cancelled.
var errCancelled = errors.New("experiment: cancelled")

// Cancel stops a running experiment: runs going are stopped with their
// partial output kept, cells not started are marked cancelled. False
// when it does not run here.
func (x *Executor) Cancel(id int64) bool {
	x.mu.Lock()
	j, ok := x.jobs[id]
	x.mu.Unlock()
	if ok {
		j.cancel(errCancelled)
	}
	return ok
}

// Subscribe follows a running experiment's events from after seq: the
// events kept since then, and a channel that is signalled when more
// come. ok is false when the experiment does not run here.
func (x *Executor) Subscribe(id int64) (f *Feed, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	j, ok := x.jobs[id]
	if !ok {
		return nil, false
	}
	return j.feed, true
}

// Wait waits until an experiment no longer runs here, or ctx ends.
func (x *Executor) Wait(ctx context.Context, id int64) {
	x.mu.Lock()
	j, ok := x.jobs[id]
	x.mu.Unlock()
	if !ok {
		return
	}
	select {
	case <-j.done:
	case <-ctx.Done():
	}
}

// Running reports whether the experiment runs here.
func (x *Executor) Running(id int64) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	_, ok := x.jobs[id]
	return ok
}

// Shutdown stops every experiment for a stop of Knobs, leaving them
// running in the store (Resume picks them up at the next start), and
// waits for their workers until ctx ends.
func (x *Executor) Shutdown(ctx context.Context) error {
	x.mu.Lock()
	x.closed = true
	for _, j := range x.jobs {
		j.cancel(ErrShutdown)
	}
	x.mu.Unlock()
	done := make(chan struct{})
	go func() { x.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// job is one experiment running.
type job struct {
	x       *Executor
	e       db.Experiment
	ctx     context.Context
	cancel  context.CancelCauseFunc
	feed    *Feed
	started time.Time
	done    chan struct{} // closed once it has ended and left jobs

	variants []variant
	graders  []cellGrader
}

// variant is an experiment's variant, read.
type variant struct {
	db.ExperimentVariant
	spec     llm.RunSpec
	defaults map[string]string
	format   json.RawMessage // its response_format, for the schema grader
}

// cellGrader is a grader ready to grade: a Grader, or a judge.
type cellGrader struct {
	name  string
	g     grade.Grader
	judge *grade.JudgeSpec
	setup *Setup
}

func (j *job) run() {
	err := j.load()
	if err == nil {
		err = j.work()
	}
	status, msg := db.ExperimentDone, ""
	switch cause := context.Cause(j.ctx); {
	case errors.Is(cause, ErrShutdown):
		return // left running in the store, for Resume
	case errors.Is(cause, errCancelled):
		status = db.ExperimentCancelled
	case err != nil:
		status, msg = db.ExperimentError, err.Error()
		j.x.log.Error("experiment failed", "experiment", j.e.ID, "err", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := j.x.store.EndExperiment(ctx, j.e.ID, status, msg); err != nil {
		j.x.log.Error("ending an experiment", "experiment", j.e.ID, "err", err)
	}
	j.feed.publish(Event{Kind: "end", Status: status, Error: msg})
}

// load reads the experiment's variants and graders.
func (j *job) load() error {
	vs, err := j.x.store.ExperimentVariants(j.ctx, j.e.ID)
	if err != nil {
		return err
	}
	for _, v := range vs {
		rv := variant{ExperimentVariant: v}
		if err := json.Unmarshal([]byte(v.Spec), &rv.spec); err != nil {
			return fmt.Errorf("variant %d has an unreadable spec: %w", v.Index, err)
		}
		if v.Variables != "" {
			if err := json.Unmarshal([]byte(v.Variables), &rv.defaults); err != nil {
				return fmt.Errorf("variant %d has unreadable variables: %w", v.Index, err)
			}
		}
		var body struct {
			ResponseFormat json.RawMessage `json:"response_format"`
		}
		_ = json.Unmarshal(rv.spec.Body, &body) // a body the run then refuses
		rv.format = body.ResponseFormat
		j.variants = append(j.variants, rv)
	}
	var gs []Grader
	if err := json.Unmarshal([]byte(j.e.Graders), &gs); err != nil {
		return fmt.Errorf("the graders are unreadable: %w", err)
	}
	for _, g := range gs {
		cg := cellGrader{name: grade.NameOf(g.Spec)}
		if grade.TypeOf(g.Spec) == "judge" {
			js, err := grade.ParseJudge(g.Spec)
			if err != nil {
				return fmt.Errorf("grader %q: %w", cg.name, err)
			}
			if g.Judge == nil {
				return fmt.Errorf("grader %q: its preset was not resolved", cg.name)
			}
			cg.judge, cg.setup = &js, g.Judge
		} else if cg.g, err = grade.Parse(g.Spec); err != nil {
			return fmt.Errorf("grader %q: %w", cg.name, err)
		}
		j.graders = append(j.graders, cg)
	}
	return nil
}

// work runs every unfinished cell: at most the experiment's concurrency
// per provider at once.
func (j *job) work() error {
	cells, err := j.x.store.UnfinishedCells(j.ctx, j.e.ID)
	if err != nil {
		return err
	}
	// One queue and one pool of workers per provider, each fed its own
	// cells in row order: a slow provider holds its own workers only,
	// never the others'.
	byProvider := map[string][]db.Cell{}
	var order []string
	for _, c := range cells {
		if c.Variant < 0 || c.Variant >= len(j.variants) {
			continue
		}
		p := j.variants[c.Variant].spec.Provider
		if _, ok := byProvider[p]; !ok {
			order = append(order, p)
		}
		byProvider[p] = append(byProvider[p], c)
	}
	var wg sync.WaitGroup
	for _, p := range order {
		queue := make(chan db.Cell)
		for range max(1, j.e.Concurrency) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := range queue {
					j.cell(c)
				}
			}()
		}
		wg.Add(1)
		go func(cells []db.Cell) {
			defer wg.Done()
			defer close(queue)
			for _, c := range cells {
				select {
				case queue <- c:
				case <-j.ctx.Done():
					return
				}
			}
		}(byProvider[p])
	}
	wg.Wait()
	return nil
}

// cell runs one cell to its end and stores it; a cancelled experiment
// leaves it as it stands.
func (j *job) cell(c db.Cell) {
	defer func() {
		if p := recover(); p != nil {
			j.x.log.Error("experiment cell panicked", "experiment", j.e.ID, "cell", c.ID, "panic", p)
			c.Status, c.Error = db.CellError, "Knobs hit an internal error on this cell; it has been logged."
			j.finish(c)
		}
	}()
	v := j.variants[c.Variant]
	vars := maps.Clone(v.defaults)
	if vars == nil {
		vars = map[string]string{}
	}
	maps.Copy(vars, c.Vars)
	setup := Setup{Spec: v.spec, Variables: vars, PresetID: v.PresetID, Experiment: j.e.ID}

	res, run, ok := j.resumed(c)
	pricesKnown := res.Metrics.CostUSD > 0
	for attempt := c.Attempts; !ok; attempt++ {
		if j.ctx.Err() != nil {
			return
		}
		started, fe, err := j.start(setup)
		var refused Refusal
		if errors.As(err, &refused) {
			c.Status, c.Error = db.CellError, refused.Error()
			j.finish(c)
			return
		}
		if err != nil {
			if j.ctx.Err() == nil {
				c.Status, c.Error = db.CellError, "The run could not start: "+err.Error()
				j.finish(c)
			}
			return
		}
		if len(fe) > 0 {
			c.Status, c.Error = db.CellError, "Not sent: "+fe.Describe()
			j.finish(c)
			return
		}
		run, pricesKnown = started.Run.ID, started.PricesKnown
		// Recorded even when a stop has just begun: a run that was sent
		// must be found by the resume, not sent again.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(j.ctx), 10*time.Second)
		err = j.x.store.StartCell(sctx, c.ID, run)
		cancel()
		if err != nil {
			j.x.log.Error("starting a cell", "experiment", j.e.ID, "cell", c.ID, "err", err)
		}
		if res, ok = j.wait(started); !ok {
			return // cancelled or shutting down: the run is stopped and stored
		}
		if e := res.Error; e != nil && retryable(e) && attempt+1 < j.x.opts.MaxAttempts {
			if !j.sleep(j.backoff(e, attempt)) {
				return
			}
			ok = false
			continue
		}
	}
	c.RunID = run
	c = j.graded(c, res, pricesKnown, setup)
	if j.ctx.Err() != nil {
		// Stopped while grading (a judge cut short): a stop leaves the
		// cell to the resume, which grades it from its stored run; a
		// cancel marks it cancelled.
		return
	}
	j.finish(c)
}

// resumed looks at the run a cell cut by a restart had started: a
// finished one is taken as the cell's answer, not sent again.
func (j *job) resumed(c db.Cell) (runner.Result, int64, bool) {
	if c.Status != db.CellRunning || c.RunID == 0 {
		return runner.Result{}, 0, false
	}
	r, err := j.x.store.Run(j.ctx, j.e.OwnerID, c.RunID)
	if err != nil || r.Status != db.RunDone {
		return runner.Result{}, 0, false
	}
	var res runner.Result
	if json.Unmarshal([]byte(r.Result), &res) != nil {
		return runner.Result{}, 0, false
	}
	return res, r.ID, true
}

// start launches a cell's run, waiting while Knobs has as many runs
// going as it allows.
func (j *job) start(s Setup) (Started, field.Errors, error) {
	for {
		started, fe, err := j.x.launch(j.ctx, j.e.OwnerID, s)
		var le *runner.LimitError
		if !errors.As(err, &le) {
			return started, fe, err
		}
		if !j.sleep(j.x.opts.LimitWait) {
			return Started{}, nil, context.Cause(j.ctx)
		}
	}
}

// stopWait bounds the wait for a cancelled run to be stored.
const stopWait = 10 * time.Second

// wait listens to a run until all of it is stored and reads its result;
// false when the experiment was stopped meanwhile. A cancelled
// experiment stops the run and waits (a bounded time) until its partial
// output is kept in history; a stop of Knobs leaves the run to the
// runner's shutdown.
func (j *job) wait(s Started) (runner.Result, bool) {
	run := s.Run
	leave := run.Subscribe()
	defer leave()
	select {
	case <-run.Kept():
	case <-j.ctx.Done():
		if errors.Is(context.Cause(j.ctx), errCancelled) && s.Stop != nil {
			s.Stop()
			t := time.NewTimer(stopWait)
			defer t.Stop()
			select {
			case <-run.Kept():
			case <-t.C:
			}
		}
		return runner.Result{}, false
	}
	r, err := j.x.store.Run(j.ctx, j.e.OwnerID, run.ID)
	if err != nil {
		return runner.Result{Error: &llm.Error{Kind: runner.KindStorage, Message: "The run's answer could not be read back: " + err.Error()}}, true
	}
	var res runner.Result
	if err := json.Unmarshal([]byte(r.Result), &res); err != nil && r.Result != "" {
		return runner.Result{Error: &llm.Error{Kind: runner.KindStorage, Message: "The run's answer is unreadable."}}, true
	}
	return res, true
}

// retryable reports whether a run's error may go away if tried again.
func retryable(e *llm.Error) bool {
	switch e.Kind {
	case llm.ErrRateLimit, llm.ErrServer, llm.ErrNetwork, llm.ErrTimeout, llm.ErrHTMLPage:
		return true
	}
	return false
}

// backoff is the wait before attempt+1: the provider's retry-after when
// it gave one, else Backoff doubled per attempt; at most MaxBackoff.
func (j *job) backoff(e *llm.Error, attempt int) time.Duration {
	if e.RetryAfter > 0 {
		return min(e.RetryAfter, j.x.opts.MaxBackoff)
	}
	d := j.x.opts.Backoff << min(attempt, 16)
	return min(d, j.x.opts.MaxBackoff)
}

// sleep waits d, or less when the experiment stops (false).
func (j *job) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-j.ctx.Done():
		return false
	}
}

// graded fills a cell from its run's result and grades it.
func (j *job) graded(c db.Cell, res runner.Result, pricesKnown bool, s Setup) db.Cell {
	c.Status = db.CellDone
	if len(res.Choices) > 0 {
		c.Output, c.FinishReason = res.Choices[0].Content, res.Choices[0].FinishReason
	}
	c.LatencyMs, c.TTFTMs, c.Tokens, c.CostUSD = res.Metrics.TotalMs, res.Metrics.TTFTMs, res.Metrics.Tokens, res.Metrics.CostUSD
	c.CostKnown = pricesKnown || res.Metrics.CostUSD > 0
	if res.Error != nil {
		c.Status, c.Error = db.CellError, res.Error.Message
		return c // an answer cut by an error is not graded as if whole
	}
	in := grade.Input{Output: c.Output, Expected: c.Expected, Vars: c.Vars, LatencyMs: c.LatencyMs, CostUSD: c.CostUSD,
		CostKnown: c.CostKnown, ResponseFormat: j.variants[c.Variant].format}
	c.Grades = make([]db.CellGrade, 0, len(j.graders))
	for i, g := range j.graders {
		cg := db.CellGrade{Grader: i}
		var gr grade.Grade
		var err error
		if g.judge != nil {
			gr, cg.JudgeRunID, err = j.judge(g, in, s)
		} else {
			gr, err = g.g.Grade(in)
		}
		if err != nil {
			cg.Error = err.Error()
		} else {
			cg.Pass, cg.Score, cg.Reason = gr.Pass, gr.Score, gr.Reason
		}
		c.Grades = append(c.Grades, cg)
	}
	return c
}

// judge runs an LLM judge on a cell's answer: its preset filled with the
// row's variables, the prompt, the answer and the expected answer. An
// answer the judge gives that cannot be read is a grading error.
func (j *job) judge(g cellGrader, in grade.Input, cell Setup) (grade.Grade, int64, error) {
	s := *g.setup
	vars := maps.Clone(s.Variables)
	if vars == nil {
		vars = map[string]string{}
	}
	maps.Copy(vars, grade.JudgeValues(promptText(cell), in))
	s.Variables, s.Experiment = vars, j.e.ID
	started, fe, err := j.start(s)
	if err != nil {
		return grade.Grade{}, 0, fmt.Errorf("the judge could not start: %w", err)
	}
	if len(fe) > 0 {
		return grade.Grade{}, 0, errors.New("the judge was not sent: " + fe.Describe())
	}
	res, ok := j.wait(started)
	if !ok {
		return grade.Grade{}, started.Run.ID, errors.New("the experiment stopped before the judge answered")
	}
	if res.Error != nil {
		return grade.Grade{}, started.Run.ID, errors.New("the judge's run failed: " + res.Error.Message)
	}
	text := ""
	if len(res.Choices) > 0 {
		text = res.Choices[0].Content
	}
	gr, err := g.judge.ReadAnswer(text)
	return gr, started.Run.ID, err
}

// promptTextMax bounds the filled body promptText reads.
const promptTextMax = 16 << 20

// promptText is what a cell asked, as text: its messages' text, or its
// prompt, filled in as a run fills it (preset.Fill).
func promptText(s Setup) string {
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Prompt json.RawMessage `json:"prompt"`
	}
	filled, _, err := preset.Fill(s.Spec, s.Variables, promptTextMax)
	if err != nil {
		filled = s.Spec // too large to fill: the template tells what was asked
	}
	_ = json.Unmarshal(filled.Body, &body)
	var b strings.Builder
	for _, m := range body.Messages {
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				text += p.Text
			}
		}
		fmt.Fprintf(&b, "%s: %s\n", m.Role, text)
	}
	var prompt string
	if json.Unmarshal(body.Prompt, &prompt) == nil {
		b.WriteString(prompt)
	}
	return strings.TrimSpace(b.String())
}

// finish stores a cell's ending and tells the experiment's listeners.
func (j *job) finish(c db.Cell) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := j.x.store.FinishCell(ctx, c); err != nil {
		j.x.log.Error("storing a cell", "experiment", j.e.ID, "cell", c.ID, "err", err)
		return
	}
	j.feed.publish(cellEvent(c))
}
