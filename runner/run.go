package runner

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"knobs/db"
	"knobs/llm"
	"knobs/llm/sim"
)

// Run is one live run: its frames so far, its listeners and its result.
type Run struct {
	ID     int64
	UserID int64

	cancel  context.CancelCauseFunc
	started time.Time
	model   llm.Model

	mu         sync.Mutex
	frames     [][]byte      // frames[i] is the SSE frame with id i+1
	times      []uint32      // times[i] is when frames[i] was added, in ms from started
	changed    chan struct{} // closed and replaced when frames grow, once handed out
	ended      chan struct{} // closed when the ending is published; see Ending
	kept       chan struct{} // closed when all of the run is stored; see Kept
	storedEnd  chan struct{} // closed when its ending is stored, retries included; see Settled
	watched    bool          // changed was handed out by Frames
	finished   bool
	listeners  int
	idle       *time.Timer
	idleGrace  time.Duration
	result     Result
	texts      []*choiceText // the text of each choice so far; see choiceText
	rawJSON    string        // the request as sent, key redacted, encoded once for every save
	slab       []byte        // where text frames are cut from; see emitText
	firstToken time.Time
	lastToken  time.Time
	chunks     int
	reasoning  int   // the chunks of chunks that were reasoning
	output     int64 // text, reasoning and tool-call bytes so far, for the cap
	status     string
	settled    bool          // the ending's cause is read: a stop changes nothing now
	stored     int           // frames stored so far by checkpoints; see pending
	reqStored  bool          // the request as sent is stored
	unsaved    int           // bytes of frames since the last checkpoint took them
	full       chan struct{} // signalled when unsaved reaches chunkBytes

	// row is the run's row when the runner writes it (see Slots.Create);
	// created is closed once that write is done, rowErr its failure.
	row     *db.Run
	created chan struct{}
	rowErr  error
	// shared says the run's slot was taken by ReserveShared.
	shared bool
	// provider and modelName label the run in the metrics.
	provider, modelName string
}

// setRowWritten records the outcome of writing the run's row.
func (run *Run) setRowWritten(err error) {
	run.mu.Lock()
	run.rowErr = err
	run.mu.Unlock()
	close(run.created)
}

// rowWritten reports whether the run's row is stored: err is the write's
// failure, known false while the write is still queued (only when wait
// is false). A run whose row the caller wrote is always stored.
func (run *Run) rowWritten(wait bool) (err error, known bool) {
	if run.created == nil {
		return nil, true
	}
	if wait {
		<-run.created
	} else {
		select {
		case <-run.created:
		default:
			return nil, false
		}
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.rowErr, true
}

// WaitStored waits until the run's row is in the database, so that a
// script told the run's id finds it there; it fails when the row could
// not be written.
func (run *Run) WaitStored() error {
	err, _ := run.rowWritten(true)
	return err
}

// wholeWrite is end's write grown to the whole run, its row and every
// frame: what is left to store when the row itself was not written.
func (run *Run) wholeWrite(end ending) db.RunWrite {
	run.mu.Lock()
	defer run.mu.Unlock()
	w := end.write
	w.Create = run.row
	w.Request = run.rawJSON
	frames := make([]byte, 0, framesLen(run.frames[:run.stored])+len(w.Chunk.Frames))
	for _, f := range run.frames[:run.stored] {
		frames = append(frames, f...)
	}
	frames = append(frames, w.Chunk.Frames...)
	times := append(EncodeTimes(run.times[:run.stored], 0, 0), w.Chunk.Times...)
	w.Chunk = &db.RunChunk{First: 1, Frames: frames, Times: times}
	return w
}

// choiceText is the text a choice has streamed so far. It is built here
// and copied into the Result only when the Result is read (a checkpoint,
// the end): appending every token to the Result's strings would copy the
// whole answer per token, quadratic in its length.
type choiceText struct {
	content, reasoning strings.Builder
}

// text returns choice i's text; the caller holds run.mu.
func (run *Run) text(i int) *choiceText {
	i = max(i, 0)
	for len(run.texts) <= i {
		run.texts = append(run.texts, &choiceText{})
	}
	return run.texts[i]
}

// syncText copies the text streamed so far into the Result; the caller
// holds run.mu.
func (run *Run) syncText() {
	for i, t := range run.texts {
		ch := run.result.choice(i)
		ch.Content, ch.Reasoning = t.content.String(), t.reasoning.String()
	}
}

// Subscribe registers a listener; call the returned func when it leaves.
// When the last listener leaves and none comes back within the idle
// grace, the run is cancelled.
func (run *Run) Subscribe() (leave func()) {
	run.mu.Lock()
	run.listeners++
	if run.idle != nil {
		run.idle.Stop()
		run.idle = nil
	}
	run.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			run.mu.Lock()
			defer run.mu.Unlock()
			run.listeners--
			if run.listeners == 0 && !run.finished {
				run.idle = time.AfterFunc(run.idleGrace, run.cancelIfUnheard)
			}
		})
	}
}

func (run *Run) cancelIfUnheard() {
	run.mu.Lock()
	unheard := run.listeners == 0 && !run.finished
	run.mu.Unlock()
	if unheard {
		run.cancel(ErrNoListener)
	}
}

// Frames returns the frames after the first `after`, whether the run has
// finished, and a channel closed when there is more to read.
func (run *Run) Frames(after int) (frames [][]byte, finished bool, more <-chan struct{}) {
	run.mu.Lock()
	defer run.mu.Unlock()
	if after < 0 {
		after = 0
	}
	if after < len(run.frames) {
		frames = run.frames[after:len(run.frames):len(run.frames)]
	}
	run.watched = true
	return frames, run.finished, run.changed
}

// stop cancels the run for cause unless its ending is already decided,
// and reports whether it did: then the run ends as cause says.
func (run *Run) stop(cause error) bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.settled {
		return false
	}
	run.cancel(cause)
	return true
}

// settle reads why the run's context ended (nil when the stream ended on
// its own) and fixes it: a stop after this is refused, so that what
// Cancel answered is what is stored.
func (run *Run) settle(ctx context.Context) error {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.settled = true
	return context.Cause(ctx)
}

// Status is the stored status once finished, "" while live.
func (run *Run) Status() string {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.status
}

// emit appends a frame; the caller holds run.mu.
func (run *Run) emit(event string, data any) {
	run.add(frame(len(run.frames)+1, event, marshal(data)))
}

// frameSlab is the size of the blocks text frames are cut from.
const frameSlab = 32 << 10

// emitText appends a delta or reasoning frame; the caller holds run.mu.
//
// A token's frame is small (about 60 bytes) and there is one per token:
// allocating each on its own was one of the few allocations left per
// token. Frames are instead cut one after the other from a shared block.
// That is safe because a frame is never written once added, and each is
// cut with its capacity at its end, so no append can reach its neighbour.
// The block lives as long as its frames, which the run keeps anyway.
func (run *Run) emitText(event string, choice int, text string) {
	start := len(run.slab)
	if cap(run.slab)-start < len(text)+len(event)+64 {
		run.slab = make([]byte, 0, max(frameSlab, len(text)+len(event)+64))
		start = 0
	}
	// An escape-heavy text may still outgrow the block: append then
	// moves it, and the frames cut before keep the old one.
	run.slab = appendTextFrame(run.slab, len(run.frames)+1, event, choice, text)
	run.add(run.slab[start:len(run.slab):len(run.slab)])
}

// add appends frame f and wakes the listeners waiting for one; the caller
// holds run.mu. The channel is replaced only once a listener has been
// given it: a listener still writing earlier frames needs no new one.
func (run *Run) add(f []byte) {
	run.frames = append(run.frames, f)
	// A fast stream is checkpointed by size too, so that its ending
	// writes at most a chunk's worth of frames, not all of them.
	if run.unsaved += len(f); run.unsaved >= chunkBytes && run.full != nil {
		select {
		case run.full <- struct{}{}:
		default:
		}
	}
	if !run.started.IsZero() {
		run.times = append(run.times, uint32(time.Since(run.started).Milliseconds()))
	}
	if run.watched {
		close(run.changed)
		run.changed = make(chan struct{})
		run.watched = false
	}
}

// The data of each SSE event the browser receives.
type (
	textData struct {
		Choice int    `json:"choice"`
		Text   string `json:"text"`
	}
	toolCallData struct {
		Choice   int          `json:"choice"`
		Call     llm.ToolCall `json:"call"`
		Fragment string       `json:"fragment"`
	}
	logprobsData struct {
		Choice int                `json:"choice"`
		Tokens []llm.TokenLogprob `json:"tokens"`
	}
	doneData struct {
		Status        string        `json:"status"`
		FinishReasons []string      `json:"finish_reasons"`
		Usage         *llm.Usage    `json:"usage,omitempty"`
		TimeInfo      *llm.TimeInfo `json:"time_info,omitempty"`
		Metrics       Metrics       `json:"metrics"`
		// Checks say, per choice, whether JSON output is valid, when the
		// request asked for JSON.
		Checks []*llm.OutputCheck `json:"checks,omitempty"`
	}
	// renderedData follows done: each choice's answer as safe HTML.
	renderedData struct {
		HTML []string `json:"html"`
	}
	errorData struct {
		*llm.Error
		RetryAfterS float64 `json:"retry_after_s,omitempty"`
	}
)

// apply folds one provider event, read at now, into the result and emits
// its frame. The caller passes now because it needs the time as well
// (metrics cadence): one clock read per event. An event that would take
// the run's output past limit bytes is left out, and apply returns false.
func (run *Run) apply(ev llm.Event, now time.Time, limit int64) bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	switch ev.Kind {
	case llm.EventDelta, llm.EventReasoning, llm.EventToolCall:
		// A tool call's fragment is what it adds; the call so far is
		// carried whole by each frame, which the cap does not count.
		if run.output+int64(len(ev.Text)) > limit {
			return false
		}
		run.output += int64(len(ev.Text))
		if run.firstToken.IsZero() {
			run.firstToken = now
		}
		run.lastToken = now
		run.chunks++
		if ev.Kind == llm.EventReasoning {
			run.reasoning++
		}
	}
	switch ev.Kind {
	case llm.EventDelta:
		run.result.choice(ev.Choice)
		run.text(ev.Choice).content.WriteString(ev.Text)
		run.emitText("delta", ev.Choice, ev.Text)
	case llm.EventReasoning:
		run.result.choice(ev.Choice)
		run.text(ev.Choice).reasoning.WriteString(ev.Text)
		run.emitText("reasoning", ev.Choice, ev.Text)
	case llm.EventToolCall:
		if ev.ToolCall == nil {
			return true
		}
		run.result.choice(ev.Choice).setToolCall(*ev.ToolCall)
		run.emit("tool_call", toolCallData{ev.Choice, *ev.ToolCall, ev.Text})
	case llm.EventLogprobs:
		ch := run.result.choice(ev.Choice)
		ch.Logprobs = append(ch.Logprobs, ev.Logprobs...)
		run.emit("logprobs", logprobsData{ev.Choice, ev.Logprobs})
	case llm.EventUsage:
		run.result.Usage = ev.Usage
	case llm.EventTimeInfo:
		run.result.TimeInfo = ev.TimeInfo
	case llm.EventFinish:
		run.result.choice(ev.Choice).FinishReason = ev.FinishReason
	default:
		if event, data, ok := run.result.fold(ev); ok {
			run.emit(event, data)
		}
	}
	return true
}

// estimateUsage gives a run that received output but no usage (stopped
// before the provider's last chunk, which carries it) Knobs' own counts,
// so that what the provider bills is not counted as free: the prompt's
// tokens as Knobs estimates any model's, and a token per output chunk, as
// providers stream them, the reasoning chunks counted apart as reasoning
// tokens too (within the completion, as most providers report them), so
// that they are priced as reasoning. The caller holds run.mu.
func (run *Run) estimateUsage(endpoint llm.Endpoint, body []byte) {
	if run.result.Usage != nil || run.chunks == 0 {
		return
	}
	prompt := sim.EstimatePromptTokens(endpoint, body)
	run.result.Usage = estimatedUsage(prompt, run.chunks, run.reasoning)
}

// estimatedUsage is Knobs' count of a call the provider sent no usage
// for: prompt tokens, and a token per output chunk, reasoning ones
// among them.
func estimatedUsage(prompt, chunks, reasoning int) *llm.Usage {
	return &llm.Usage{PromptTokens: prompt, CompletionTokens: chunks, ReasoningTokens: reasoning, TotalTokens: prompt + chunks, Estimated: true}
}

// metrics computes the live or final metrics; the caller holds run.mu.
func (run *Run) metrics(now time.Time) Metrics {
	m := Metrics{TotalMs: ms(now.Sub(run.started)), Tokens: run.chunks}
	// Reasoning counted once: completion tokens include it everywhere but
	// on xAI, which reports it apart (Usage.OutputTokens).
	if n := run.result.Usage.OutputTokens(); n > 0 {
		m.Tokens = n
	}
	if !run.firstToken.IsZero() {
		m.TTFTMs = ms(run.firstToken.Sub(run.started))
		// Rate over the generation itself; a single chunk has no span.
		if span := run.lastToken.Sub(run.firstToken); span > 0 && m.Tokens > 1 {
			m.TokensPerSec = float64(m.Tokens-1) / span.Seconds()
		}
	}
	m.CostUSD = cost(run.result.Usage, run.result.Price)
	return m
}

func (run *Run) emitMetrics(now time.Time) {
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.chunks == 0 {
		return
	}
	run.emit("metrics", run.metrics(now))
}

// setRequest keeps the request as sent (key redacted) and tells the
// listeners, for the raw view.
func (run *Run) setRequest(r llm.RawRequest) {
	b := marshal(r)
	run.mu.Lock()
	defer run.mu.Unlock()
	run.rawJSON = string(b)
	run.add(frame(len(run.frames)+1, "request", b))
}

// request is the request as sent, as JSON.
func (run *Run) request() string {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.rawJSON
}

// chunkBytes is the most frames a checkpoint waits to store: past it, it
// stores them before its next tick.
const chunkBytes = 256 << 10

// pending returns what a checkpoint stores: the frames since the last
// stored one (with their times), and the request as sent until it is
// stored. Storing appends; nothing stored is written again, so a long
// run costs storage work in proportion to its length.
func (run *Run) pending() (w db.RunWrite, upTo int) {
	run.mu.Lock()
	defer run.mu.Unlock()
	w.RunID = run.ID
	if !run.reqStored {
		w.Request = run.rawJSON
	}
	upTo = len(run.frames)
	run.unsaved = 0
	if upTo > run.stored {
		w.Chunk = &db.RunChunk{First: run.stored + 1, Frames: bytes.Join(run.frames[run.stored:upTo], nil), Times: EncodeTimes(run.times[run.stored:upTo], 0, 0)}
	}
	return w, upTo
}

// markStored records that w, taken by pending up to frame upTo, is
// stored.
func (run *Run) markStored(w db.RunWrite, upTo int) {
	run.mu.Lock()
	defer run.mu.Unlock()
	if w.Request != "" {
		run.reqStored = true
	}
	run.stored = max(run.stored, upTo)
}

// ending is how a run ends: the closing frames to publish, and the one
// write that makes it durable.
type ending struct {
	closing   [][]byte // the error frame, if any, then done
	done      doneData
	write     db.RunWrite // the last chunk (closing frames included) and the final state
	encodeErr error       // the result could not be encoded; it is stored as "{}"
}

// finish builds the run's ending. The closing frames are not published
// yet: publishEnding does that once the run is stored, so that a
// listener who sees done finds the run in history. The rendered answer
// follows done in its own frame (see rendered): rendering a long answer
// takes longer than the rest of the ending, and the user has the text.
func (run *Run) finish(status string, upstreamErr *llm.Error, endpoint llm.Endpoint, body []byte, at time.Time) ending {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.syncText()
	run.estimateUsage(endpoint, body)
	run.result.Metrics = run.metrics(at)
	run.result.Error = upstreamErr
	var end ending
	next := len(run.frames) + 1
	if upstreamErr != nil {
		end.closing = append(end.closing, frame(next, "error", marshal(errorData{upstreamErr, upstreamErr.RetryAfter.Seconds()})))
		next++
	}
	if len(run.result.Choices) == 0 {
		run.result.choice(0)
	}
	done := doneData{Status: status, Usage: run.result.Usage, TimeInfo: run.result.TimeInfo, Metrics: run.result.Metrics}
	for _, ch := range run.result.Choices {
		done.FinishReasons = append(done.FinishReasons, ch.FinishReason)
		if check := llm.CheckOutput(body, ch.Content); check != nil {
			done.Checks = append(done.Checks, check)
		}
	}
	end.done = done
	end.closing = append(end.closing, frame(next, "done", marshal(done)))
	result, err := json.Marshal(run.result)
	if err != nil {
		result, end.encodeErr = []byte("{}"), err
	}
	ms := uint32(at.Sub(run.started).Milliseconds())
	w := db.RunWrite{RunID: run.ID, Finish: &db.RunFinish{Status: status, Result: string(result), At: at}}
	if !run.reqStored {
		w.Request = run.rawJSON
	}
	rest := run.frames[run.stored:]
	frames := make([]byte, 0, framesLen(rest)+framesLen(end.closing))
	for _, f := range rest {
		frames = append(frames, f...)
	}
	for _, f := range end.closing {
		frames = append(frames, f...)
	}
	w.Chunk = &db.RunChunk{First: run.stored + 1, Frames: frames, Times: EncodeTimes(run.times[run.stored:], len(end.closing), ms)}
	end.write = w
	return end
}

func framesLen(frames [][]byte) int {
	n := 0
	for _, f := range frames {
		n += len(f)
	}
	return n
}

// contents returns each choice's final text, for rendering.
func (run *Run) contents() []string {
	run.mu.Lock()
	defer run.mu.Unlock()
	out := make([]string, len(run.result.Choices))
	for i, ch := range run.result.Choices {
		out[i] = ch.Content
	}
	return out
}

// rendered builds the frame that follows done with each choice's answer
// rendered as safe HTML; the caller publishes it with closeStream.
func (run *Run) rendered(html []string) []byte {
	run.mu.Lock()
	defer run.mu.Unlock()
	return frame(len(run.frames)+1, "rendered", marshalHTML(renderedData{HTML: html}))
}

// unstoredMessage tells listeners that a run ended but is not stored.
const unstoredMessage = "The run could not be stored: the database refused the write (is the disk full?). " +
	"Knobs keeps trying; until then it is not in history, and a restart keeps only what was saved during the run."

// unstored returns the closing frames for an ending that could not be
// stored: the run's own error, if any, then one saying so, then a done
// that does not claim the run is done. The page then shows the answer
// and stops, and no one is told to look for it in history yet.
func (run *Run) unstored(end ending) [][]byte {
	run.mu.Lock()
	defer run.mu.Unlock()
	next := len(run.frames) + 1
	var closing [][]byte
	if len(end.closing) > 1 {
		closing = append(closing, end.closing[0])
		next++
	}
	closing = append(closing, frame(next, "error", marshal(errorData{Error: &llm.Error{Kind: KindStorage, Message: unstoredMessage}})))
	done := end.done
	done.Status = db.RunError
	return append(closing, frame(next+1, "done", marshal(done)))
}

// EncodeTimes encodes frame times as stored (a little-endian uint32 per
// frame), with n more frames at `at` after them.
func EncodeTimes(times []uint32, n int, at uint32) []byte {
	b := make([]byte, 0, 4*(len(times)+n))
	for _, t := range times {
		b = binary.LittleEndian.AppendUint32(b, t)
	}
	for range n {
		b = binary.LittleEndian.AppendUint32(b, at)
	}
	return b
}

// DecodeTimes reads frame times as EncodeTimes stores them: each frame's
// offset from its run's start, in milliseconds.
func DecodeTimes(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

// publishEnding sends the closing frames to the listeners and gives the
// run its status; the stream stays open for the rendered answer.
func (run *Run) publishEnding(status string, closing [][]byte) {
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, f := range closing {
		run.add(f)
	}
	run.status = status
	run.wake()
	if run.ended != nil {
		close(run.ended)
		run.ended = nil
	}
}

// Ending returns a channel closed once the run's ending (its done) is
// published, so that a paced event stream sends it at once.
func (run *Run) Ending() <-chan struct{} {
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.ended == nil {
		return closedChan
	}
	return run.ended
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Kept returns a channel closed once the run's storing is over: its
// ending, and after it the rendered answer, the raw response and its line
// in the history list and search. For a run whose ending could not be
// stored (a full disk), it is closed when that failed and a retry in the
// background took over.
func (run *Run) Kept() <-chan struct{} {
	if run.kept == nil {
		return closedChan
	}
	return run.kept
}

// Settled returns a channel closed once the run's ending is stored or
// will never be by this process: as Kept, but for an ending a full disk
// refused, only when the retry in the background stored it (or Knobs
// stopped). Until then the run's cost is in no table, so what holds a
// place for it (a budget) waits for this rather than for Kept.
func (run *Run) Settled() <-chan struct{} {
	if run.storedEnd == nil {
		return closedChan
	}
	return run.storedEnd
}

// closeStream adds the last frames, if any, and ends the stream: every
// listener leaves once it has them.
func (run *Run) closeStream(last ...[]byte) {
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, f := range last {
		run.add(f)
	}
	run.finished = true
	run.wake()
	if run.idle != nil {
		run.idle.Stop()
		run.idle = nil
	}
}

// wake wakes every listener, even one that took no channel since the last
// frame; the caller holds run.mu.
func (run *Run) wake() {
	close(run.changed)
	run.changed = make(chan struct{})
	run.watched = false
}

// marshalHTML encodes v without escaping <, > and & as \u003c: rendered
// HTML in JSON would grow by three quarters, and the page parses it with
// JSON.parse, which needs no such escaping.
func marshalHTML(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(`{}`)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{}`)
	}
	return b
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
