package handlers

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"knobs/db"
	"knobs/runner"
	"knobs/web/sse"
)

// replayCache shares the stored frames of a comparison between every
// viewer replaying it at the same time: a link opened by thousands of
// visitors reads the events from the database once and holds them once.
// An entry lives while a viewer streams it; viewers are bounded per
// comparison and per address, so entries are too. It is safe for
// concurrent use.
type replayCache struct {
	mu      sync.Mutex
	entries map[string]*replayData
}

func newReplayCache() *replayCache {
	return &replayCache{entries: map[string]*replayData{}}
}

// replayData is the read-only replay of one comparison as stored: each
// pane's frames, and every frame in the order of its recorded time.
type replayData struct {
	users int           // viewers holding it; guarded by the cache's mu
	ready chan struct{} // closed once loaded
	err   error

	panes []sse.Recorded
	order []sse.Stamp
}

// replayKey names what a comparison stored: its id and each run's stamp.
// A run still running changes at each checkpoint, so a comparison with
// one is never shared ("" key).
func replayKey(group int64, stamps []db.RunStamp) string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(group, 10))
	for _, s := range stamps {
		if s.Status == db.RunRunning {
			return ""
		}
		b.WriteString(":" + strconv.FormatInt(s.ID, 10) + "/" + s.Status + "/" + strconv.FormatInt(s.FinishedAt.UnixMilli(), 10))
	}
	return b.String()
}

// get returns the replay under key, loading it with load when nobody
// holds it; release gives it back. Viewers that come while it loads
// wait for that load rather than starting their own.
func (c *replayCache) get(ctx context.Context, key string, panes int, load func(context.Context) ([]db.Run, error)) (*replayData, func(), error) {
	if key == "" {
		d := &replayData{}
		runs, err := load(ctx)
		if err != nil {
			return nil, nil, err
		}
		d.build(runs, panes)
		return d, func() {}, nil
	}
	c.mu.Lock()
	d, ok := c.entries[key]
	if !ok {
		d = &replayData{ready: make(chan struct{})}
		c.entries[key] = d
	}
	d.users++
	c.mu.Unlock()
	release := func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if d.users--; d.users == 0 && c.entries[key] == d {
			delete(c.entries, key)
		}
	}
	if !ok {
		runs, err := load(ctx)
		if err == nil {
			d.build(runs, panes)
		}
		d.err = err
		close(d.ready)
	}
	select {
	case <-d.ready:
	case <-ctx.Done():
		release()
		return nil, nil, ctx.Err()
	}
	if d.err != nil {
		release()
		c.mu.Lock()
		if c.entries[key] == d {
			delete(c.entries, key) // the next viewer tries again
		}
		c.mu.Unlock()
		return nil, nil, d.err
	}
	return d, release, nil
}

// build splits the stored events of runs, placed by pane, and orders
// every frame by its recorded time. A run without times for its frames
// (one older than replay, or rebuilt from a checkpoint) replays at once.
func (d *replayData) build(runs []db.Run, panes int) {
	byPane := make([]db.Run, panes)
	for _, r := range runs {
		if r.Pane >= 0 && r.Pane < panes && byPane[r.Pane].ID == 0 {
			byPane[r.Pane] = r
		}
	}
	d.panes = make([]sse.Recorded, panes)
	for i, r := range byPane {
		frames := sse.Split(eventsOf(r))
		d.panes[i] = frames
		times := runner.DecodeTimes(r.EventTimes)
		if len(times) != len(frames) {
			times = make([]uint32, len(frames))
		}
		for j := range frames {
			d.order = append(d.order, sse.Stamp{At: time.Duration(times[j]) * time.Millisecond, Pane: i, Idx: j})
		}
	}
	// Stable: a pane's frames keep their order, and panes theirs at a tie.
	slices.SortStableFunc(d.order, func(a, b sse.Stamp) int { return cmp.Compare(a.At, b.At) })
}
