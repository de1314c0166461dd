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
	output     int64 // text, reasoning and tool-call bytes so far, for the cap
	status     string
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
		HTML          []string      `json:"html,omitempty"`
		// Checks say, per choice, whether JSON output is valid, when the
		// request asked for JSON.
		Checks []*llm.OutputCheck `json:"checks,omitempty"`
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
	m.CostUSD = cost(run.result.Usage, run.model)
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

// snapshot returns the number of frames and the partial result as JSON.
func (run *Run) snapshot() (int, string, error) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.syncText()
	run.result.Metrics = run.metrics(time.Now())
	b, err := json.Marshal(run.result)
	return len(run.frames), string(b), err
}

// ending is how a run ends: the closing frames to publish, and what to
// store.
type ending struct {
	closing   [][]byte // the error frame, if any, then done
	done      doneData
	events    []byte // every frame of the run, closing ones included, for replay
	times     []byte // when each of those frames was sent (see EncodeTimes)
	result    string // the final result as JSON
	encodeErr error  // the result could not be encoded; result is then "{}"
}

// finish builds the run's ending. The closing frames are not published
// yet: publish does that once the run is stored, so that a listener who
// sees done finds the run in history.
func (run *Run) finish(status string, upstreamErr *llm.Error, render func(string) string, body []byte) ending {
	now := time.Now()
	run.mu.Lock()
	defer run.mu.Unlock()
	run.syncText()
	run.result.Metrics = run.metrics(now)
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
		if render != nil {
			done.HTML = append(done.HTML, render(ch.Content))
		}
		if check := llm.CheckOutput(body, ch.Content); check != nil {
			done.Checks = append(done.Checks, check)
		}
	}
	end.done = done
	end.closing = append(end.closing, frame(next, "done", marshal(done)))
	b, err := json.Marshal(run.result)
	if err != nil {
		b, end.encodeErr = []byte("{}"), err
	}
	end.result = string(b)
	all := make([][]byte, 0, len(run.frames)+len(end.closing))
	all = append(append(all, run.frames...), end.closing...)
	at := uint32(now.Sub(run.started).Milliseconds())
	end.times = EncodeTimes(run.times, len(end.closing), at)
	end.events = bytes.Join(all, nil)
	return end
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

// publish sends the closing frames to the listeners and marks the run
// finished.
func (run *Run) publish(status string, closing [][]byte) {
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, f := range closing {
		run.add(f)
	}
	run.status = status
	run.finished = true
	// Wake every listener, even one that took no channel since the last frame.
	close(run.changed)
	run.changed = make(chan struct{})
	run.watched = false
	if run.idle != nil {
		run.idle.Stop()
		run.idle = nil
	}
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{}`)
	}
	return b
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
