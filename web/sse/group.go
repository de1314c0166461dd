package sse

import (
	"bytes"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A comparison streams every pane over one connection. Each pane's
// frames go out as its run sent them, with "pane":i spliced into the
// data and an id that holds every pane's cursor: "17.5.22" means 17
// frames of pane 0, 5 of pane 1 and 22 of pane 2 were sent, so a
// Last-Event-ID resumes each pane exactly. When every pane has ended, one
// group_done event closes the stream; its id ends in ".done". This is the
// second of the three event-id schemes of docs/ARCHITECTURE.md (a single
// run's ids are frame numbers; a replay uses this one too).

// DoneSuffix ends the id of the group_done event.
const DoneSuffix = ".done"

// ParseCursor reads where a client resumes a stream of n panes from the
// Last-Event-ID (or ?after=) it sent: frames sent per pane, and whether
// group_done was sent too. Anything malformed starts over.
func ParseCursor(last string, n int) (sent []int, complete bool) {
	sent = make([]int, n)
	if last == "" {
		return sent, false
	}
	last, complete = strings.CutSuffix(last, DoneSuffix)
	parts := strings.Split(last, ".")
	if len(parts) != n {
		return make([]int, n), false
	}
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return make([]int, n), false
		}
		sent[i] = v
	}
	return sent, complete
}

// Summary makes the data of group_done from each pane's last frame (its
// done frame when it has one; nil for a pane with none).
type Summary func(dones [][]byte) []byte

// Mux turns the frames of each pane into the frames of a group stream,
// counting what each pane has sent.
type Mux struct {
	sent    []int // frames sent per pane
	summary Summary
}

// NewMux starts a group stream after sent frames per pane.
func NewMux(sent []int, summary Summary) *Mux {
	return &Mux{sent: sent, summary: summary}
}

// Frame rewrites frame f of pane i for the group stream: the id becomes
// every pane's cursor once f is sent, and the data gets "pane":i.
func (m *Mux) Frame(i int, f []byte) []byte {
	m.sent[i]++
	event, data := FrameParts(f)
	b := make([]byte, 0, len(f)+8*len(m.sent)+16)
	b = append(b, "id: "...)
	b = m.appendCursor(b)
	b = append(b, "\nevent: "...)
	b = append(b, event...)
	b = append(b, "\ndata: "...)
	b = splicePane(b, i, data)
	return append(b, "\n\n"...)
}

// Done is the group_done frame, from each pane's done frame.
func (m *Mux) Done(dones [][]byte) []byte {
	b := append([]byte("id: "), m.appendCursor(nil)...)
	b = append(b, DoneSuffix+"\nevent: group_done\ndata: "...)
	b = append(b, m.summary(dones)...)
	return append(b, "\n\n"...)
}

// Sent is how many frames of pane i went out.
func (m *Mux) Sent(i int) int { return m.sent[i] }

func (m *Mux) appendCursor(b []byte) []byte {
	for i, n := range m.sent {
		if i > 0 {
			b = append(b, '.')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return b
}

// splicePane appends data with "pane":i as its first member.
func splicePane(b []byte, i int, data []byte) []byte {
	b = append(b, `{"pane":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	obj := bytes.TrimSpace(data)
	switch {
	case len(obj) >= 2 && obj[0] == '{' && len(bytes.TrimSpace(obj[1:len(obj)-1])) == 0:
		return append(b, '}')
	case len(obj) >= 2 && obj[0] == '{':
		b = append(b, ',')
		return append(b, obj[1:]...)
	case len(obj) == 0:
		return append(b, '}')
	default: // not an object: kept whole
		b = append(b, `,"data":`...)
		b = append(b, obj...)
		return append(b, '}')
	}
}

// FrameParts returns the event name ("message" when it has none) and the
// data of one frame as Knobs writes them (one data line).
func FrameParts(f []byte) (event, data []byte) {
	event = []byte("message")
	for rest := f; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		if v, ok := bytes.CutPrefix(line, []byte("event: ")); ok {
			event = v
		} else if v, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			data = v
		}
	}
	return event, data
}

// Group merges the frames of a comparison's panes into one Source. Serve
// calls Frames from one goroutine; Close is called once the stream ends,
// which ends the goroutine waiting for the panes.
type Group struct {
	mux   *Mux
	panes []Source
	ended []bool // pane i finished and every frame of it sent

	pending [][]byte // frames made but not yet confirmed sent
	base    int      // how many frames were confirmed sent before pending
	done    bool     // group_done is made

	stop     chan struct{}
	stopOnce sync.Once
	waitOn   []<-chan struct{} // the panes' channels the current wait watches
	wake     chan struct{}     // closed when one of waitOn is, or on stop
}

// NewGroup streams panes after sent frames of each, ending with the
// group_done that summary makes.
func NewGroup(panes []Source, sent []int, summary Summary) *Group {
	return &Group{
		mux:   NewMux(sent, summary),
		panes: panes,
		ended: make([]bool, len(panes)),
		stop:  make(chan struct{}),
	}
}

// Close ends the wait for the panes, if one is running.
func (g *Group) Close() { g.stopOnce.Do(func() { close(g.stop) }) }

// Frames implements Source: after counts the frames of this stream sent
// so far.
func (g *Group) Frames(after int) ([][]byte, bool, <-chan struct{}) {
	if n := min(max(after-g.base, 0), len(g.pending)); n > 0 {
		clear(g.pending[:n])
		g.pending, g.base = g.pending[n:], g.base+n
	}
	if len(g.pending) > 0 {
		return g.pending, false, nil
	}
	var waits []<-chan struct{}
	for i, src := range g.panes {
		if g.ended[i] {
			continue
		}
		frames, finished, more := src.Frames(g.mux.sent[i])
		for _, f := range frames {
			g.pending = append(g.pending, g.mux.Frame(i, f))
		}
		switch {
		case finished:
			g.ended[i] = true
		case len(frames) == 0 && more != nil:
			waits = append(waits, more)
		}
	}
	if !g.done && !slices.Contains(g.ended, false) {
		g.done = true
		g.pending = append(g.pending, g.mux.Done(lastFrames(g.panes)))
	}
	if len(g.pending) > 0 {
		return g.pending, false, nil
	}
	if g.done {
		return nil, true, nil
	}
	return nil, false, g.waitFor(waits)
}

// waitFor returns a channel closed when any of chans is (or the stream
// ends). A pane that got frames this round is read again at once, so
// only silent panes are waited on. The wait is kept while its channels
// stand, so that pings do not start one goroutine each.
func (g *Group) waitFor(chans []<-chan struct{}) <-chan struct{} {
	if len(chans) == 1 {
		return chans[0]
	}
	if g.wake != nil && slices.Equal(g.waitOn, chans) {
		select {
		case <-g.wake:
		default:
			return g.wake
		}
	}
	wake := make(chan struct{})
	cases := make([]reflect.SelectCase, 0, len(chans)+1)
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(g.stop)})
	for _, ch := range chans {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
	}
	go func() {
		reflect.Select(cases)
		close(wake)
	}()
	g.waitOn, g.wake = chans, wake
	return wake
}

// lastFrames returns each pane's doneFrame.
func lastFrames(panes []Source) [][]byte {
	out := make([][]byte, len(panes))
	for i, src := range panes {
		frames, _, _ := src.Frames(0)
		out[i] = doneFrame(frames)
	}
	return out
}

// doneFrame returns a pane's done frame once it has one (the rendered
// answer follows it), else its last frame, or nil.
func doneFrame(frames [][]byte) []byte {
	for j := len(frames) - 1; j >= 0 && j >= len(frames)-2; j-- {
		if event, _ := FrameParts(frames[j]); string(event) == "done" {
			return frames[j]
		}
	}
	if len(frames) > 0 {
		return frames[len(frames)-1]
	}
	return nil
}
