package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/runner"
	"knobs/web/sse"
)

// A comparison streams every pane over one SSE connection. Each pane's
// frames go out as the run sent them, with "pane":i spliced into the
// data and an id that holds every pane's cursor: "17.5.22" means 17
// frames of pane 0, 5 of pane 1 and 22 of pane 2 were sent, so a
// Last-Event-ID resumes each pane exactly. When every pane has sent its
// done, one group_done event closes the stream; its id ends in ".done".

// groupDoneSuffix ends the id of the group_done event.
const groupDoneSuffix = ".done"

// groupID parses the :id route parameter; a malformed id is a 404 like
// an unknown one.
func groupID(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, fiber.NewError(fiber.StatusNotFound, "There is no such comparison.")
	}
	return id, nil
}

// ownGroup loads the signed-in user's group named in the path.
func (h *Handler) ownGroup(c *fiber.Ctx) (db.Group, error) {
	u, _ := CurrentUser(c)
	id, err := groupID(c)
	if err != nil {
		return db.Group{}, err
	}
	g, err := h.store.Group(ctx(c), u.ID, id)
	if errors.Is(err, db.ErrNotFound) {
		return db.Group{}, fiber.NewError(fiber.StatusNotFound, "There is no such comparison.")
	}
	return g, err
}

// groupCursor reads where a client resumes a group stream of n panes:
// the Last-Event-ID (or ?after=) it sent, as frames sent per pane, and
// whether group_done was sent too. Anything malformed starts over.
func groupCursor(c *fiber.Ctx, n int) (sent []int, complete bool) {
	sent = make([]int, n)
	last := c.Get("Last-Event-ID")
	if q := c.Query("after"); q != "" {
		last = q
	}
	if last == "" {
		return sent, false
	}
	last, complete = strings.CutSuffix(last, groupDoneSuffix)
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

// GroupEvents streams every pane of a comparison over one SSE
// connection: live panes from the runner, finished ones from the
// database. A reconnect with Last-Event-ID resumes each pane after its
// cursor; one that already had group_done gets 204, which tells
// EventSource to stop reconnecting.
func (h *Handler) GroupEvents(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	g, err := h.ownGroup(c)
	if err != nil {
		return err
	}
	sent, complete := groupCursor(c, len(g.RunIDs))
	if complete {
		return c.SendStatus(fiber.StatusNoContent)
	}
	srcs := make([]sse.Source, len(g.RunIDs))
	var leaves []func()
	var stored map[int64]db.Run // loaded once, for the first pane not live
	for i, id := range g.RunIDs {
		if id == 0 {
			srcs[i] = sse.Recorded(nil)
			continue
		}
		if run, ok := h.runner.Run(id, u.ID); ok {
			srcs[i] = run
			leaves = append(leaves, run.Subscribe())
			continue
		}
		if stored == nil {
			runs, err := h.store.GroupRuns(ctx(c), u.ID, g.ID)
			if err != nil {
				for _, leave := range leaves {
					leave()
				}
				return err
			}
			stored = map[int64]db.Run{}
			for _, r := range runs {
				stored[r.ID] = r
			}
		}
		srcs[i] = sse.Split(storedEvents(stored[id]))
	}
	src := newGroupSource(g.RunIDs, srcs, sent)
	return h.serveEvents(c, src, 0, func() {
		src.close()
		for _, leave := range leaves {
			leave()
		}
	})
}

// storedEvents is a finished run's SSE text; for one whose process
// stopped, what its checkpoints stored and then its ending, or frames
// rebuilt from its stored result when nothing of its stream was kept.
func storedEvents(r db.Run) []byte {
	if r.ID == 0 {
		return nil // removed since
	}
	status := r.Status
	if status == db.RunRunning {
		status = db.RunInterrupted
	}
	if len(r.Events) == 0 {
		return runner.Replay(status, r.Result)
	}
	if !bytes.Contains(r.Events, []byte("\nevent: done\n")) {
		return append(r.Events, runner.Ending(status, r.Result, bytes.Count(r.Events, []byte("\n\n"))+1)...)
	}
	return r.Events
}

// CancelGroup stops every live pane of a comparison; their partial
// output is kept. POST /runs/:id/cancel stops one pane.
func (h *Handler) CancelGroup(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	g, err := h.ownGroup(c)
	if err != nil {
		return err
	}
	cancelled := []int64{}
	for _, id := range g.RunIDs {
		if id != 0 && h.runner.Cancel(id, u.ID) {
			cancelled = append(cancelled, id)
		}
	}
	if len(cancelled) == 0 {
		return c.Status(fiber.StatusConflict).JSON(fiber.Map{"error": "Every pane has already finished."})
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"group": g.ID, "cancelled": cancelled})
}

// groupSource merges the frames of a comparison's panes into one
// sse.Source. sse.Serve calls Frames from one goroutine; close is called
// once the stream ends, which ends the goroutine waiting for the panes.
type groupSource struct {
	mux   paneMux
	panes []sse.Source
	ended []bool // pane i finished and every frame of it sent

	pending [][]byte // frames made but not yet confirmed sent
	base    int      // how many frames were confirmed sent before pending
	done    bool     // group_done is made

	stop     chan struct{}
	stopOnce sync.Once
	waitOn   []<-chan struct{} // the panes' channels the current wait watches
	wake     chan struct{}     // closed when one of waitOn is, or on stop
}

func newGroupSource(runs []int64, panes []sse.Source, sent []int) *groupSource {
	return &groupSource{
		mux:   paneMux{runs: runs, sent: sent},
		panes: panes,
		ended: make([]bool, len(panes)),
		stop:  make(chan struct{}),
	}
}

// close ends the wait for the panes, if one is running.
func (g *groupSource) close() { g.stopOnce.Do(func() { close(g.stop) }) }

// Frames implements sse.Source: after counts the frames of this stream
// sent so far.
func (g *groupSource) Frames(after int) ([][]byte, bool, <-chan struct{}) {
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
			g.pending = append(g.pending, g.mux.frame(i, f))
		}
		switch {
		case finished:
			g.ended[i] = true
		case len(frames) == 0 && more != nil:
			waits = append(waits, more)
		}
	}
	if !g.done && !slicesContains(g.ended, false) {
		g.done = true
		g.pending = append(g.pending, g.mux.groupDone(lastFrames(g.panes)))
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
func (g *groupSource) waitFor(chans []<-chan struct{}) <-chan struct{} {
	if len(chans) == 1 {
		return chans[0]
	}
	if g.wake != nil && slicesEqual(g.waitOn, chans) {
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

// lastFrames returns the done frame of each pane, once it has one, else
// its last frame, or nil; the rendered answer follows done.
func lastFrames(panes []sse.Source) [][]byte {
	out := make([][]byte, len(panes))
	for i, src := range panes {
		frames, _, _ := src.Frames(0)
		for j := len(frames) - 1; j >= 0 && j >= len(frames)-2; j-- {
			if event, _ := runner.FrameParts(frames[j]); string(event) == "done" {
				out[i] = frames[j]
				break
			}
		}
		if out[i] == nil && len(frames) > 0 {
			out[i] = frames[len(frames)-1]
		}
	}
	return out
}

func slicesContains(s []bool, v bool) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func slicesEqual(a, b []<-chan struct{}) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// paneMux turns the frames of each pane into the frames of a group
// stream, counting what each pane has sent.
type paneMux struct {
	runs []int64
	sent []int // frames sent per pane
}

// frame rewrites frame f of pane i for the group stream: the id becomes
// every pane's cursor once f is sent, and the data gets "pane":i.
func (m *paneMux) frame(i int, f []byte) []byte {
	m.sent[i]++
	event, data := runner.FrameParts(f)
	b := make([]byte, 0, len(f)+8*len(m.sent)+16)
	b = append(b, "id: "...)
	b = m.appendCursor(b)
	b = append(b, "\nevent: "...)
	b = append(b, event...)
	b = append(b, "\ndata: "...)
	b = splicePane(b, i, data)
	return append(b, "\n\n"...)
}

func (m *paneMux) appendCursor(b []byte) []byte {
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

// paneSummary is one pane in group_done.
type paneSummary struct {
	Pane         int     `json:"pane"`
	Run          int64   `json:"run"`
	Status       string  `json:"status"`
	TTFTMs       float64 `json:"ttft_ms"`
	TokensPerSec float64 `json:"tokens_per_sec"`
	Tokens       int     `json:"tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// groupSummary is the data of group_done: each pane's final figures and
// which pane did best on each, -1 when none qualifies; ties go to the
// lowest pane, and Winners lists every pane that tied for each award. A
// pane that failed is not the fastest at anything, and only a pane that
// finished counts for fewest tokens and lowest cost (a cut answer is
// short and cheap for the wrong reason). Lowest cost is awarded only when
// every pane has a cost: a pane without a price (the simulator, a model
// Knobs has no price for) may well be the cheapest.
type groupSummary struct {
	Panes               []paneSummary    `json:"panes"`
	FastestFirstToken   int              `json:"fastest_first_token"`
	HighestTokensPerSec int              `json:"highest_tokens_per_sec"`
	FewestTokens        int              `json:"fewest_tokens"`
	LowestCost          int              `json:"lowest_cost"`
	Winners             map[string][]int `json:"winners"`
}

// summarise builds group_done's data from each pane's done frame.
func summarise(runs []int64, dones [][]byte) groupSummary {
	s := groupSummary{Panes: make([]paneSummary, len(dones)), FastestFirstToken: -1, HighestTokensPerSec: -1, FewestTokens: -1, LowestCost: -1,
		Winners: map[string][]int{}}
	for i, f := range dones {
		p := paneSummary{Pane: i, Run: runs[i], Status: "gone"}
		if event, data := runner.FrameParts(f); string(event) == "done" {
			var d struct {
				Status  string         `json:"status"`
				Metrics runner.Metrics `json:"metrics"`
			}
			if json.Unmarshal(data, &d) == nil {
				p.Status, p.TTFTMs, p.TokensPerSec, p.Tokens, p.CostUSD = d.Status, d.Metrics.TTFTMs, d.Metrics.TokensPerSec, d.Metrics.Tokens, d.Metrics.CostUSD
			}
		}
		s.Panes[i] = p
	}
	// award returns the best pane (the lowest of a tie) and every pane
	// whose value equals the best.
	award := func(key string, ok func(paneSummary) bool, value func(paneSummary) float64, lower bool) int {
		at := -1
		for i, p := range s.Panes {
			if !ok(p) {
				continue
			}
			if at < 0 || (lower && value(p) < value(s.Panes[at])) || (!lower && value(p) > value(s.Panes[at])) {
				at = i
			}
		}
		if at < 0 {
			return -1
		}
		tied := []int{}
		for i, p := range s.Panes {
			if ok(p) && value(p) == value(s.Panes[at]) {
				tied = append(tied, i)
			}
		}
		s.Winners[key] = tied
		return at
	}
	fast := func(p paneSummary) bool { return p.Status != db.RunError && p.Status != "gone" }
	whole := func(p paneSummary) bool { return p.Status == db.RunDone }
	s.FastestFirstToken = award("fastest_first_token", func(p paneSummary) bool { return fast(p) && p.TTFTMs > 0 },
		func(p paneSummary) float64 { return p.TTFTMs }, true)
	s.HighestTokensPerSec = award("highest_tokens_per_sec", func(p paneSummary) bool { return fast(p) && p.TokensPerSec > 0 },
		func(p paneSummary) float64 { return p.TokensPerSec }, false)
	s.FewestTokens = award("fewest_tokens", func(p paneSummary) bool { return whole(p) && p.Tokens > 0 },
		func(p paneSummary) float64 { return float64(p.Tokens) }, true)
	priced := true
	for _, p := range s.Panes {
		priced = priced && p.CostUSD > 0
	}
	if priced {
		s.LowestCost = award("lowest_cost", func(p paneSummary) bool { return whole(p) },
			func(p paneSummary) float64 { return p.CostUSD }, true)
	}
	return s
}

// groupDone is the group_done frame, from each pane's done frame.
func (m *paneMux) groupDone(dones [][]byte) []byte {
	data, _ := json.Marshal(summarise(m.runs, dones))
	b := append([]byte("id: "), m.appendCursor(nil)...)
	b = append(b, groupDoneSuffix+"\nevent: group_done\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}
