package sse

import (
	"sync"
	"sync/atomic"
	"time"
)

// A replay sends every pane's stored frames again at the pace they were
// first sent, on one clock from the start of the replay, in the format
// of a group's live stream (group.go), then group_done.

// Stamp places frame Idx of pane Pane At its recorded time from its
// run's start.
type Stamp struct {
	At   time.Duration
	Pane int
	Idx  int
}

// ReplayBatch bounds the frames one replay makes at once, so that a run
// replayed at once (without recorded times) is not copied whole per
// viewer.
const ReplayBatch = 256

// clock is the time a replay reads and waits on; tests give their own.
type clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// Replay is a Source that hands out stored frames as their time comes.
// Serve calls Frames from one goroutine; Close stops the timer when the
// stream ends.
type Replay struct {
	mux    *Mux
	panes  []Recorded // shared with other viewers: read only
	order  []Stamp    // every frame by recorded time; read only
	next   int        // order[next] is the next frame to consider
	offset time.Duration
	start  time.Time // when the replay began; zero until the first Frames
	clock  clock

	pending [][]byte
	base    int
	done    bool

	cut atomic.Bool // the replay was cut short; see Cut

	mu      sync.Mutex // guards the timer against Close and Cut
	stopT   func() bool
	due     chan struct{} // closed by fire when order[dueFor] is due
	fire    func()
	dueFor  int
	stopped bool
}

// NewReplay replays panes in the order of order, after sent frames per
// pane (from Last-Event-ID); a resumed replay goes on at once from the
// first frame the client lacks.
func NewReplay(panes []Recorded, order []Stamp, sent []int, summary Summary) *Replay {
	r := &Replay{mux: NewMux(sent, summary), panes: panes, order: order, dueFor: -1, clock: realClock{}}
	r.skipSent()
	if r.next < len(order) {
		r.offset = order[r.next].At
	}
	return r
}

// skipSent moves next past frames the client already has.
func (r *Replay) skipSent() {
	for ; r.next < len(r.order); r.next++ {
		s := r.order[r.next]
		if s.Idx >= r.mux.sent[s.Pane] {
			return
		}
	}
}

// Frames implements Source.
func (r *Replay) Frames(after int) ([][]byte, bool, <-chan struct{}) {
	if r.cut.Load() {
		return nil, true, nil
	}
	if n := min(max(after-r.base, 0), len(r.pending)); n > 0 {
		clear(r.pending[:n])
		r.pending, r.base = r.pending[n:], r.base+n
	}
	if len(r.pending) > 0 {
		return r.pending, false, nil
	}
	now := r.clock.Now()
	if r.start.IsZero() {
		r.start = now
	}
	elapsed := now.Sub(r.start)
	for r.skipSent(); r.next < len(r.order) && r.order[r.next].At-r.offset <= elapsed && len(r.pending) < ReplayBatch; r.skipSent() {
		s := r.order[r.next]
		r.pending = append(r.pending, r.mux.Frame(s.Pane, r.panes[s.Pane][s.Idx]))
		r.next++
	}
	if len(r.pending) > 0 {
		return r.pending, false, nil
	}
	if r.next == len(r.order) && !r.done {
		r.done = true
		dones := make([][]byte, len(r.panes))
		for i, p := range r.panes {
			dones[i] = doneFrame(p)
		}
		r.pending = append(r.pending, r.mux.Done(dones))
		return r.pending, false, nil
	}
	if r.done {
		return nil, true, nil
	}
	return nil, false, r.dueAt(r.next, r.order[r.next].At-r.offset-elapsed)
}

// dueAt returns a channel closed in d, when frame i is due; asked again
// for the same frame (after a ping), it returns the same channel.
func (r *Replay) dueAt(i int, d time.Duration) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dueFor == i && r.due != nil {
		return r.due
	}
	if r.stopT != nil {
		r.stopT()
	}
	due, once := make(chan struct{}), new(sync.Once)
	r.due, r.dueFor = due, i
	r.fire = func() { once.Do(func() { close(due) }) }
	if r.stopped {
		r.fire()
		return due
	}
	r.stopT = r.clock.AfterFunc(d, r.fire)
	return due
}

// Cut ends the replay at once, as when its share link is revoked: a
// reader waiting for the next frame wakes, and Frames reports the
// replay finished, without group_done, so the page knows it was cut.
func (r *Replay) Cut() {
	r.cut.Store(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	if r.stopT != nil {
		r.stopT()
	}
	if r.fire != nil {
		r.fire()
	}
}

// Close stops the timer; the stream has ended.
func (r *Replay) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	if r.stopT != nil {
		r.stopT()
	}
}
