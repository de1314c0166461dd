package handlers

import (
	"context"
	"fmt"
	"strconv"

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
