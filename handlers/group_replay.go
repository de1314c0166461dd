package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/web/sse"
)

// A replay sends every pane's stored frames again at the pace they were
// first sent (web/sse/replay.go). It reads only the database: no
// network, no key, no provider call, so a demo runs anywhere.

// ReplayGroup replays one of the signed-in user's comparisons.
func (h *Handler) ReplayGroup(c *fiber.Ctx) error {
	g, err := h.ownGroup(c)
	if err != nil {
		return err
	}
	return h.serveReplay(c, g, 0)
}

// sharedGroup loads the comparison behind a share token that the viewer
// may open; unknown and revoked tokens are 404. ok is false when the
// link is for the team and nobody is signed in.
func (h *Handler) sharedGroup(c *fiber.Ctx) (g db.Group, runs []db.Run, share db.Share, ok bool, err error) {
	notFound := fiber.NewError(fiber.StatusNotFound, "This link does not open anything: it is unknown or was revoked.")
	token := c.Params("token")
	if len(token) > 64 {
		return db.Group{}, nil, db.Share{}, false, notFound
	}
	g, runs, share, err = h.store.SharedGroup(ctx(c), token)
	if errors.Is(err, db.ErrNotFound) {
		return db.Group{}, nil, db.Share{}, false, notFound
	}
	if err != nil {
		return db.Group{}, nil, db.Share{}, false, err
	}
	_, signedIn := CurrentUser(c)
	return g, runs, share, share.Audience == db.SharePublic || signedIn, nil
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
	g, runs, _, ok, err := h.sharedGroup(c)
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
	g, _, share, ok, err := h.sharedGroup(c)
	if err != nil {
		return err
	}
	if !ok {
		return fiber.NewError(fiber.StatusUnauthorized, "Sign in first.")
	}
	c.Set("Cache-Control", "private, no-store")
	return h.serveReplay(c, g, share.ID)
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

// serveReplay streams the replay of group g, within the limits on
// replays per comparison and per client address, from frames shared
// with everyone replaying it. One through share link share (non-zero)
// is cut when the link is revoked.
func (h *Handler) serveReplay(c *fiber.Ctx, g db.Group, share int64) error {
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
	src := sse.NewReplay(data.panes, data.order, sent, scoreboard(g.RunIDs))
	forget := func() {}
	if share != 0 {
		forget = h.shared.add(share, src)
	}
	return h.serveEvents(c, src, 0, func() {
		forget()
		src.Close()
		release()
		giveBack()
	})
}
