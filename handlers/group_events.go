package handlers

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/runner"
	"knobs/web/sse"
)

// A comparison streams every pane over one SSE connection, in the
// format and with the event ids of web/sse/group.go.

// ownGroup loads the signed-in user's group named in the path.
func (h *Handler) ownGroup(c *fiber.Ctx) (db.Group, error) {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "comparison")
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
// the Last-Event-ID (or ?after=) it sent.
func groupCursor(c *fiber.Ctx, n int) (sent []int, complete bool) {
	last := c.Get("Last-Event-ID")
	if q := c.Query("after"); q != "" {
		last = q
	}
	return sse.ParseCursor(last, n)
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
		srcs[i] = sse.Split(eventsOf(stored[id]))
	}
	src := sse.NewGroup(srcs, sent, scoreboard(g.RunIDs))
	return h.serveEvents(c, src, 0, func() {
		src.Close()
		for _, leave := range leaves {
			leave()
		}
	})
}

// eventsOf is a finished run's SSE text; for one whose process
// stopped, what its checkpoints stored and then its ending, or frames
// rebuilt from its stored result when nothing of its stream was kept.
func eventsOf(r db.Run) []byte {
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

// scoreboard makes group_done's data for a comparison of runs.
func scoreboard(runs []int64) sse.Summary {
	return func(dones [][]byte) []byte {
		data, _ := json.Marshal(runner.Scoreboard(runs, dones))
		return data
	}
}
