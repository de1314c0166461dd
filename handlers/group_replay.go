package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// A replay sends every pane's stored frames again at the pace they were
// first sent, on one clock from the start of the replay, in the same
// format as a group's live stream (see group_events.go), then
// group_done. It reads only the database: no network, no key, no
// provider call, so a demo runs anywhere.

// ReplayGroup replays one of the signed-in user's comparisons.
func (h *Handler) ReplayGroup(c *fiber.Ctx) error {
	g, err := h.ownGroup(c)
	if err != nil {
		return err
	}
	return h.serveReplay(c, g)
}

// sharedGroup loads the comparison behind a share token that the viewer
// may open; unknown and revoked tokens are 404. ok is false when the
// link is for the team and nobody is signed in.
func (h *Handler) sharedGroup(c *fiber.Ctx) (g db.Group, runs []db.Run, ok bool, err error) {
	notFound := fiber.NewError(fiber.StatusNotFound, "This link does not open anything: it is unknown or was revoked.")
	token := c.Params("token")
	if len(token) > 64 {
		return db.Group{}, nil, false, notFound
	}
	g, runs, share, err := h.store.SharedGroup(ctx(c), token)
	if errors.Is(err, db.ErrNotFound) {
		return db.Group{}, nil, false, notFound
	}
	if err != nil {
		return db.Group{}, nil, false, err
	}
	_, signedIn := CurrentUser(c)
	return g, runs, share.Audience == db.SharePublic || signedIn, nil
}

// sharedPane is one pane of a shared comparison.
type sharedPane struct {
	Pane     int             `json:"pane"`
	Run      int64           `json:"run"`
	Provider string          `json:"provider"`
	Model    string          `json:"model"`
	Endpoint string          `json:"endpoint"`
	Spec     json.RawMessage `json:"spec"`
	Status   string          `json:"status"`
	Metrics  json.RawMessage `json:"metrics"`
}

// sharedComparison is what GET /g/:token answers.
type sharedComparison struct {
	Title     string       `json:"title"`
	CreatedAt time.Time    `json:"created_at"`
	Panes     []sharedPane `json:"panes"`
	Replay    string       `json:"replay"`
}

// ShowSharedGroup answers a shared comparison: to a browser (Accept:
// text/html) the read-only compare page that replays it, to anything
// else JSON with each pane's provider, model, spec, status and metrics;
// never a key.
func (h *Handler) ShowSharedGroup(c *fiber.Ctx) error {
	g, runs, ok, err := h.sharedGroup(c)
	if err != nil {
		return err
	}
	if !ok {
		if strings.Contains(c.Get(fiber.HeaderAccept), fiber.MIMETextHTML) {
			return c.Redirect("/login?next="+url.QueryEscape(c.OriginalURL()), fiber.StatusSeeOther)
		}
		return fiber.NewError(fiber.StatusUnauthorized, "Sign in first.")
	}
	if wantsHTML(c) {
		return h.showSharedGroupPage(c, g, runs)
	}
	out := sharedComparison{Title: g.Title, CreatedAt: g.CreatedAt, Panes: []sharedPane{}, Replay: "/g/" + c.Params("token") + "/replay"}
	for _, r := range runs {
		var res struct {
			Metrics json.RawMessage `json:"metrics"`
		}
		_ = json.Unmarshal([]byte(r.Result), &res) // a broken checkpoint has no metrics
		if res.Metrics == nil {
			res.Metrics = json.RawMessage(`{}`)
		}
		spec := json.RawMessage(r.Spec)
		if !json.Valid(spec) {
			spec = json.RawMessage(`{}`)
		}
		out.Panes = append(out.Panes, sharedPane{Pane: r.Pane, Run: r.ID, Provider: r.Provider, Model: r.Model, Endpoint: r.Endpoint,
			Spec: spec, Status: r.Status, Metrics: res.Metrics})
	}
	c.Set("Cache-Control", "private, no-store")
	return c.JSON(out)
}

// ReplaySharedGroup replays a shared comparison: a public link needs no
// account, a team link a signed-in member.
func (h *Handler) ReplaySharedGroup(c *fiber.Ctx) error {
	g, _, ok, err := h.sharedGroup(c)
	if err != nil {
		return err
	}
	if !ok {
		return fiber.NewError(fiber.StatusUnauthorized, "Sign in first.")
	}
	c.Set("Cache-Control", "private, no-store")
	return h.serveReplay(c, g)
}

// CreateGroupShare makes a read-only link to one of the signed-in user's
// comparisons, as CreateRunShare does for a run; its JSON answer also
// names the replay ("replay"). POST /shares/:id/revoke stops it.
func (h *Handler) CreateGroupShare(c *fiber.Ctx) error {
	g, err := h.ownGroup(c)
	if err != nil {
		return err
	}
	back := "/groups/" + strconv.FormatInt(g.ID, 10)
	audience, ok := shareAudience(c)
	if !ok {
		return refuseShare(c, back)
	}
	sh, err := h.store.CreateShare(ctx(c), g.OwnerID, db.ShareGroup, g.ID, audience)
	if err != nil {
		return err
	}
	return answerShare(c, sh, back)
}

// replayBatch bounds the frames one replay makes at once, so that a run
// replayed at once (without recorded times) is not copied whole per
// viewer.
const replayBatch = 256

// serveReplay streams the replay of group g, within the limits on
// replays per comparison and per client address, from frames shared
// with everyone replaying it.
func (h *Handler) serveReplay(c *fiber.Ctx, g db.Group) error {
	sent, complete := groupCursor(c, len(g.RunIDs))
	if complete {
		return c.SendStatus(fiber.StatusNoContent)
	}
	link := "replay-group:" + strconv.FormatInt(g.ID, 10)
	addr := "replay-addr:" + c.IP()
	switch h.replays.take(slot{link, h.cfg.ReplayStreamsPerLink}, slot{addr, h.cfg.ReplayStreamsPerAddress}) {
	case 0:
		return fiber.NewError(fiber.StatusTooManyRequests, fmt.Sprintf(
			"This comparison is being replayed %d times at once, the most Knobs allows. Try again in a while.", h.cfg.ReplayStreamsPerLink))
	case 1:
		return fiber.NewError(fiber.StatusTooManyRequests, fmt.Sprintf(
			"Your address already has %d replays streaming, the most Knobs allows at once. Close one and try again.", h.cfg.ReplayStreamsPerAddress))
	}
	replays := h.replays
	giveBack := func() { replays.give(link, addr) }

	stamps, err := h.store.GroupStamps(ctx(c), g.OwnerID, g.ID)
	if err != nil {
		giveBack()
		return err
	}
	store, owner := h.store, g.OwnerID
	data, release, err := h.replayData.get(ctx(c), replayKey(g.ID, stamps), len(g.RunIDs), func(ctx context.Context) ([]db.Run, error) {
		return store.GroupRuns(ctx, owner, g.ID)
	})
	if err != nil {
		giveBack()
		return err
	}
	src := newReplaySource(g.RunIDs, data, sent)
	return h.serveEvents(c, src, 0, func() {
		src.close()
		release()
		giveBack()
	})
}

// replaySource is an sse.Source that hands out the stored frames of a
// shared replayData as their time comes. sse.Serve calls Frames from one
// goroutine; close stops the timer when the stream ends.
type replaySource struct {
	mux    paneMux
	data   *replayData   // shared with other viewers: read only
	next   int           // data.order[next] is the next frame to consider
	offset time.Duration // the time of the first frame to send, the replay's zero
	start  time.Time     // when the replay began; zero until the first Frames

	pending [][]byte
	base    int
	done    bool

	mu      sync.Mutex // guards timer against close
	timer   *time.Timer
	due     chan struct{} // closed when order[dueFor] is due
	dueFor  int
	stopped bool
}

// newReplaySource replays data after sent (frames already sent per pane,
// from Last-Event-ID).
func newReplaySource(ids []int64, data *replayData, sent []int) *replaySource {
	s := &replaySource{mux: paneMux{runs: ids, sent: sent}, data: data, dueFor: -1}
	s.skipSent()
	if s.next < len(data.order) {
		s.offset = data.order[s.next].at // a resumed replay goes on at once
	}
	return s
}

// skipSent moves next past frames the client already has.
func (s *replaySource) skipSent() {
	for ; s.next < len(s.data.order); s.next++ {
		f := s.data.order[s.next]
		if f.idx >= s.mux.sent[f.pane] {
			return
		}
	}
}

// Frames implements sse.Source.
func (s *replaySource) Frames(after int) ([][]byte, bool, <-chan struct{}) {
	if n := min(max(after-s.base, 0), len(s.pending)); n > 0 {
		clear(s.pending[:n])
		s.pending, s.base = s.pending[n:], s.base+n
	}
	if len(s.pending) > 0 {
		return s.pending, false, nil
	}
	now := time.Now()
	if s.start.IsZero() {
		s.start = now
	}
	elapsed := now.Sub(s.start)
	order := s.data.order
	for s.skipSent(); s.next < len(order) && order[s.next].at-s.offset <= elapsed && len(s.pending) < replayBatch; s.skipSent() {
		f := order[s.next]
		s.pending = append(s.pending, s.mux.frame(f.pane, s.data.panes[f.pane][f.idx]))
		s.next++
	}
	if len(s.pending) > 0 {
		return s.pending, false, nil
	}
	if s.next == len(order) && !s.done {
		s.done = true
		dones := make([][]byte, len(s.data.panes))
		for i, p := range s.data.panes {
			if len(p) > 0 {
				dones[i] = p[len(p)-1]
			}
		}
		s.pending = append(s.pending, s.mux.groupDone(dones))
	}
	if len(s.pending) > 0 {
		return s.pending, false, nil
	}
	if s.done {
		return nil, true, nil
	}
	return nil, false, s.dueAt(s.next, order[s.next].at-s.offset-elapsed)
}

// dueAt returns a channel closed in d, when frame i is due; asked again
// for the same frame (after a ping), it returns the same channel.
func (s *replaySource) dueAt(i int, d time.Duration) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dueFor == i && s.due != nil {
		return s.due
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	due := make(chan struct{})
	s.due, s.dueFor = due, i
	if s.stopped {
		close(due)
		return due
	}
	s.timer = time.AfterFunc(d, func() { close(due) })
	return due
}

// close stops the timer; the stream has ended.
func (s *replaySource) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	if s.timer != nil {
		s.timer.Stop()
	}
}
