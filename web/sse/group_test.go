package sse

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// pane is a finished run's frames: n deltas then done.
func pane(name string, n int) Recorded {
	var r Recorded
	for i := 1; i <= n; i++ {
		r = append(r, []byte(fmt.Sprintf("id: %d\nevent: delta\ndata: {\"choice\":0,\"text\":\"%s%d\"}\n\n", i, name, i)))
	}
	return append(r, []byte(fmt.Sprintf("id: %d\nevent: done\ndata: {\"status\":\"done\",\"who\":\"%s\"}\n\n", n+1, name)))
}

// countDones is a Summary that names which panes had a done frame.
func countDones(dones [][]byte) []byte {
	var names []string
	for _, d := range dones {
		_, data := FrameParts(d)
		names = append(names, string(data))
	}
	return []byte(`{"dones":"` + strings.ReplaceAll(strings.Join(names, "|"), `"`, `'`) + `"}`)
}

// drain reads src as Serve would, taking every frame as sent, until it
// finishes; a wait is followed at once (the sources here are finished).
func drain(t *testing.T, src Source) []string {
	t.Helper()
	var out []string
	for sent := 0; ; {
		frames, finished, more := src.Frames(sent)
		for _, f := range frames {
			out = append(out, string(f))
		}
		sent += len(frames)
		if finished {
			return out
		}
		if len(frames) == 0 {
			select {
			case <-more:
			case <-time.After(5 * time.Second):
				t.Fatal("the source waited on a channel that never closed")
			}
		}
		if len(out) > 10000 {
			t.Fatal("the source never finished")
		}
	}
}

func TestParseCursorReadsEachPanesPosition(t *testing.T) {
	for _, tt := range []struct {
		last     string
		n        int
		sent     []int
		complete bool
	}{
		{"", 3, []int{0, 0, 0}, false},
		{"17.5.22", 3, []int{17, 5, 22}, false},
		{"17.5.22.done", 3, []int{17, 5, 22}, true},
		{"4", 1, []int{4}, false},
		// Malformed or for another number of panes: from the start.
		{"17.5", 3, []int{0, 0, 0}, false},
		{"1.-2.3", 3, []int{0, 0, 0}, false},
		{"1.x.3", 3, []int{0, 0, 0}, false},
		{"99999999999999999999.1.1", 3, []int{0, 0, 0}, false},
	} {
		sent, complete := ParseCursor(tt.last, tt.n)
		if !slices.Equal(sent, tt.sent) || complete != tt.complete {
			t.Errorf("ParseCursor(%q, %d) = %v, %v; want %v, %v", tt.last, tt.n, sent, complete, tt.sent, tt.complete)
		}
	}
}

func TestMuxSplicesThePaneAndCountsEveryPanesFrames(t *testing.T) {
	m := NewMux([]int{0, 3}, countDones)
	for _, tt := range []struct {
		pane  int
		frame string
		want  string
	}{
		{1, "id: 4\nevent: delta\ndata: {\"text\":\"a\"}\n\n", "id: 0.4\nevent: delta\ndata: {\"pane\":1,\"text\":\"a\"}\n\n"},
		{0, "id: 1\nevent: request\ndata: {}\n\n", "id: 1.4\nevent: request\ndata: {\"pane\":0}\n\n"},
		{0, "id: 2\ndata: [1,2]\n\n", "id: 2.4\nevent: message\ndata: {\"pane\":0,\"data\":[1,2]}\n\n"},
		{1, "id: 5\nevent: ping\n\n", "id: 2.5\nevent: ping\ndata: {\"pane\":1}\n\n"},
	} {
		if got := string(m.Frame(tt.pane, []byte(tt.frame))); got != tt.want {
			t.Errorf("Frame(%d, %q) = %q, want %q", tt.pane, tt.frame, got, tt.want)
		}
	}
	done := string(m.Done([][]byte{[]byte("event: done\ndata: A\n\n"), nil}))
	if want := "id: 2.5.done\nevent: group_done\ndata: {\"dones\":\"A|\"}\n\n"; done != want {
		t.Errorf("Done = %q, want %q", done, want)
	}
}

func TestGroupInterleavesPanesAndEndsWithOneGroupDone(t *testing.T) {
	a, b := pane("a", 3), pane("b", 1)
	out := drain(t, NewGroup([]Source{a, b}, []int{0, 0}, countDones))
	if len(out) != len(a)+len(b)+1 {
		t.Fatalf("%d frames, want %d: %q", len(out), len(a)+len(b)+1, out)
	}
	last := out[len(out)-1]
	if !strings.HasPrefix(last, "id: 4.2.done\nevent: group_done\n") || !strings.Contains(last, `'who':'a'`) || !strings.Contains(last, `'who':'b'`) {
		t.Errorf("last frame %q, want group_done with both panes' done", last)
	}
	// Each pane's frames keep their order, and each id counts them.
	for i, name := range []string{"a", "b"} {
		var seen []string
		for _, f := range out[:len(out)-1] {
			if strings.Contains(f, fmt.Sprintf(`"pane":%d,`, i)) {
				seen = append(seen, f)
			}
		}
		for j, f := range seen[:len(seen)-1] {
			if !strings.Contains(f, fmt.Sprintf(`"text":"%s%d"`, name, j+1)) {
				t.Errorf("pane %d frame %d = %q", i, j, f)
			}
		}
	}
}

func TestGroupResumesEachPaneAfterItsCursor(t *testing.T) {
	a, b := pane("a", 3), pane("b", 2)
	out := drain(t, NewGroup([]Source{a, b}, []int{3, 1}, countDones))
	want := []string{`"text":"b2"`, `"who":"a"`, `"who":"b"`, "group_done"}
	if len(out) != len(want) {
		t.Fatalf("resumed after 3.1: %q", out)
	}
	for _, w := range want {
		if !slices.ContainsFunc(out, func(f string) bool { return strings.Contains(f, w) }) {
			t.Errorf("resumed stream lacks %s: %q", w, out)
		}
	}
	if !strings.HasPrefix(out[len(out)-1], "id: 4.3.done\n") {
		t.Errorf("group_done %q, want id 4.3.done", out[len(out)-1])
	}
}

func TestGroupWaitsOnSilentPanesAndWakesWhenOneSpeaks(t *testing.T) {
	l1, l2 := &live{more: make(chan struct{})}, &live{more: make(chan struct{})}
	g := NewGroup([]Source{l1, l2}, []int{0, 0}, countDones)
	defer g.Close()
	frames, finished, more := g.Frames(0)
	if len(frames) != 0 || finished || more == nil {
		t.Fatalf("two silent panes: %d frames, finished %v, wait %v", len(frames), finished, more != nil)
	}
	l2.add([]byte("id: 1\nevent: delta\ndata: {\"text\":\"x\"}\n\n"), false)
	select {
	case <-more:
	case <-time.After(5 * time.Second):
		t.Fatal("the group did not wake when pane 1 sent a frame")
	}
	frames, _, _ = g.Frames(0)
	if len(frames) != 1 || !strings.HasPrefix(string(frames[0]), "id: 0.1\n") {
		t.Errorf("after the wake: %q", frames)
	}
}

// fakeClock runs a replay's timers by hand.
type fakeClock struct {
	now    time.Time
	timers []fakeTimer
	waits  []time.Duration // every wait the replay asked for, in order
}

type fakeTimer struct {
	at time.Time
	f  func()
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.waits = append(c.waits, d)
	c.timers = append(c.timers, fakeTimer{c.now.Add(d), f})
	i := len(c.timers) - 1
	return func() bool {
		live := c.timers[i].f != nil
		c.timers[i].f = nil
		return live
	}
}

// advance moves the clock to the earliest pending timer and fires it.
func (c *fakeClock) advance(t *testing.T) {
	t.Helper()
	at := -1
	for i, tm := range c.timers {
		if tm.f != nil && (at < 0 || tm.at.Before(c.timers[at].at)) {
			at = i
		}
	}
	if at < 0 {
		t.Fatal("the replay waits with no timer set")
	}
	c.now = c.timers[at].at
	f := c.timers[at].f
	c.timers[at].f = nil
	f()
}

// play reads a replay to its end on a fake clock and returns each frame
// with the clock's time since the start when it was handed out.
func play(t *testing.T, r *Replay, c *fakeClock) (out []string, at []time.Duration) {
	t.Helper()
	start := c.now
	for sent := 0; len(out) < 1000; {
		frames, finished, more := r.Frames(sent)
		for _, f := range frames {
			out = append(out, string(f))
			at = append(at, c.now.Sub(start))
		}
		sent += len(frames)
		if finished {
			return out, at
		}
		if len(frames) == 0 {
			c.advance(t)
			select {
			case <-more:
			default:
				t.Fatal("the timer fired but the replay's wait did not end")
			}
		}
	}
	t.Fatal("the replay never finished")
	return nil, nil
}

func TestReplayKeepsTheRecordedOrderAndGaps(t *testing.T) {
	a, b := pane("a", 2), pane("b", 1)
	ms := time.Millisecond
	order := []Stamp{
		{0, 0, 0}, {0, 1, 0}, {40 * ms, 0, 1}, {100 * ms, 1, 1}, {250 * ms, 0, 2},
	}
	c := &fakeClock{now: time.Unix(1000, 0)}
	r := NewReplay([]Recorded{a, b}, order, []int{0, 0}, countDones)
	r.clock = c
	out, at := play(t, r, c)
	if len(out) != len(order)+1 {
		t.Fatalf("%d frames, want %d: %q", len(out), len(order)+1, out)
	}
	for i, s := range order {
		if want := fmt.Sprintf(`"pane":%d,`, s.Pane); !strings.Contains(out[i], want) {
			t.Errorf("frame %d = %q, want pane %d's", i, out[i], s.Pane)
		}
		if at[i] != s.At {
			t.Errorf("frame %d went out at %v, recorded at %v", i, at[i], s.At)
		}
	}
	if want := []time.Duration{40 * ms, 60 * ms, 150 * ms}; !slices.Equal(c.waits, want) {
		t.Errorf("the replay waited %v, want the recorded gaps %v", c.waits, want)
	}
	if !strings.Contains(out[len(out)-1], "event: group_done") || at[len(at)-1] != 250*ms {
		t.Errorf("last frame %q at %v, want group_done right after the last frame", out[len(out)-1], at[len(at)-1])
	}
}

func TestReplayResumesAtOnceFromTheFirstFrameTheClientLacks(t *testing.T) {
	a := pane("a", 3)
	ms := time.Millisecond
	order := []Stamp{{0, 0, 0}, {100 * ms, 0, 1}, {300 * ms, 0, 2}, {350 * ms, 0, 3}}
	c := &fakeClock{now: time.Unix(1000, 0)}
	r := NewReplay([]Recorded{a}, order, []int{2}, countDones)
	r.clock = c
	out, at := play(t, r, c)
	if len(out) != 3 || !strings.Contains(out[0], `"text":"a3"`) || !strings.HasPrefix(out[2], "id: 4.done\n") {
		t.Fatalf("resumed after 2 frames: %q", out)
	}
	if at[0] != 0 || at[1] != 50*ms {
		t.Errorf("resumed frames at %v, want the first at once and the next 50ms later", at)
	}
}

func TestReplayBatchesFramesWithoutRecordedTimes(t *testing.T) {
	a := pane("a", 2*ReplayBatch)
	order := make([]Stamp, len(a))
	for i := range order {
		order[i] = Stamp{0, 0, i}
	}
	r := NewReplay([]Recorded{a}, order, []int{0}, countDones)
	first, _, _ := r.Frames(0)
	if len(first) != ReplayBatch {
		t.Fatalf("first batch %d frames, want %d", len(first), ReplayBatch)
	}
	out := drain(t, r)
	if len(out) != len(a)+1 {
		t.Errorf("%d frames in all, want %d", len(out), len(a)+1)
	}
}

func TestReplayClosedWhileWaitingWakesItsReader(t *testing.T) {
	a := pane("a", 1)
	c := &fakeClock{now: time.Unix(1000, 0)}
	r := NewReplay([]Recorded{a}, []Stamp{{0, 0, 0}, {time.Hour, 0, 1}}, []int{0}, countDones)
	r.clock = c
	frames, _, _ := r.Frames(0)
	if _, _, wait := r.Frames(len(frames)); wait == nil {
		t.Fatal("a replay with a frame an hour away does not wait")
	}
	r.Close()
	if live := c.timers[len(c.timers)-1].f != nil; live {
		t.Error("Close left the replay's timer running")
	}
	r2 := NewReplay([]Recorded{a}, []Stamp{{0, 0, 0}, {time.Hour, 0, 1}}, []int{0}, countDones)
	r2.clock = c
	r2.Close()
	frames, _, _ = r2.Frames(0)
	_, _, wait := r2.Frames(len(frames))
	select {
	case <-wait:
	default:
		t.Error("a closed replay still makes its reader wait")
	}
}

func TestReplaySummarisesEachPanesDoneNotTheRenderedAnswerAfterIt(t *testing.T) {
	a := append(pane("a", 1), []byte("id: 3\nevent: rendered\ndata: {\"html\":[\"<p>a1</p>\"]}\n\n"))
	order := []Stamp{{0, 0, 0}, {0, 0, 1}, {0, 0, 2}}
	out := drain(t, NewReplay([]Recorded{a}, order, []int{0}, countDones))
	if last := out[len(out)-1]; !strings.Contains(last, `'who':'a'`) {
		t.Errorf("group_done %q, want it made from the done frame", last)
	}
}

func TestACutReplayWakesItsReaderAndEnds(t *testing.T) {
	a := pane("a", 2)
	c := &fakeClock{now: time.Unix(1000, 0)}
	r := NewReplay([]Recorded{a}, []Stamp{{0, 0, 0}, {time.Hour, 0, 1}, {time.Hour, 0, 2}}, []int{0}, countDones)
	r.clock = c
	frames, _, _ := r.Frames(0)
	_, _, wait := r.Frames(len(frames))
	r.Cut()
	select {
	case <-wait:
	default:
		t.Fatal("the reader still waits for a frame an hour away after the cut")
	}
	if more, finished, _ := r.Frames(len(frames)); len(more) != 0 || !finished {
		t.Errorf("after the cut: %d frames, finished %v; want none and finished (no group_done)", len(more), finished)
	}
}
