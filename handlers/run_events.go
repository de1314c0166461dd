package handlers

import (
	"bytes"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/logs"
	"knobs/runner"
	"knobs/web/sse"
)

// serveEvents streams src as SSE with the configured write deadline:
// a client that stops reading is dropped (see sse.Serve). Every event
// stream goes through here, so the metrics count listeners here.
func (h *Handler) serveEvents(c *fiber.Ctx, src sse.Source, after int, leave func()) error {
	closed := h.metrics.ListenerOpened()
	// sse.Serve logs without the request's context (its writer outlives
	// the fiber ctx), so its logger carries the request id itself.
	log := h.log
	if id := logs.RequestID(ctx(c)); id != "" {
		log = log.With("request_id", id)
	}
	return sse.Serve(c, src, after, func() { closed(); leave() }, sse.Options{WriteTimeout: h.cfg.StreamWriteTimeout, Log: log})
}

// RunEvents streams a run's events as SSE. A reconnect with Last-Event-ID
// resumes after that event; it never starts the upstream call again. A
// finished run replays from the database, and a stream always ends with
// the run's ending, so that no reader reconnects forever.
func (h *Handler) RunEvents(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	after, _ := strconv.Atoi(c.Get("Last-Event-ID"))
	if q := c.Query("after"); q != "" {
		after, _ = strconv.Atoi(q)
	}
	if run, ok := h.runner.Run(id, u.ID); ok {
		if frames, finished, _ := run.Frames(after); finished && len(frames) == 0 && after > 0 {
			return c.SendStatus(fiber.StatusNoContent) // had it all: see below
		}
		return h.serveEvents(c, run, after, run.Subscribe())
	}
	events, replayed, err := h.runEvents(c, u.ID, id)
	if err != nil {
		return err
	}
	frames := sse.Split(events)
	switch {
	case replayed && after > 0:
		// The reader counted the frames of a run that streamed here and
		// then stopped with the process (a crash, a restart): a replay
		// of the last checkpoint does not number its frames as they did.
		// It gets the ending, numbered after what it had, and stops.
		return h.serveEvents(c, renumber(ending(frames), after+1), 0, func() {})
	case after > 0 && after >= len(frames):
		// The reader had every frame, done included. 204 tells
		// EventSource to stop reconnecting, as the compare stream does.
		return c.SendStatus(fiber.StatusNoContent)
	}
	return h.serveEvents(c, frames, after, func() {})
}

// storedEvents is the SSE text of user's run id as it streamed: the
// events kept when it ended, those so far while it is live, and otherwise
// (interrupted before its events were kept) a replay of its last
// checkpoint, which ends with a done event so that no reader waits.
// Another user's run is db.ErrNotFound.
func (h *Handler) storedEvents(c *fiber.Ctx, user, id int64) ([]byte, error) {
	events, _, err := h.runEvents(c, user, id)
	return events, err
}

// runEvents is storedEvents, and whether the events are a replay of the
// stored result rather than the frames as they were sent (a run stored
// before its stream was kept, or that stopped before its first
// checkpoint).
func (h *Handler) runEvents(c *fiber.Ctx, user, id int64) (events []byte, replayed bool, err error) {
	if run, ok := h.runner.Run(id, user); ok {
		frames, _, _ := run.Frames(0)
		return bytes.Join(frames, nil), false, nil
	}
	stored, err := h.store.Run(ctx(c), user, id)
	if err != nil {
		return nil, false, err
	}
	status := stored.Status
	if status == db.RunRunning {
		// Nothing here runs it: the process that did has gone, and the
		// next start marks it interrupted.
		status = db.RunInterrupted
	}
	events, err = h.store.RunEvents(ctx(c), user, id)
	if err != nil {
		return nil, false, err
	}
	if len(events) == 0 {
		return runner.Replay(status, stored.Result), true, nil
	}
	if !bytes.Contains(events, []byte("\nevent: done\n")) {
		// It stopped with its process: what its checkpoints stored,
		// numbered as it streamed, then its ending.
		events = append(events, runner.Ending(status, stored.Result, bytes.Count(events, []byte("\n\n"))+1)...)
	}
	return events, false, nil
}

// ending returns the frames that close a run: its trailing error, done
// and rendered answer.
func ending(frames sse.Recorded) sse.Recorded {
	i := len(frames)
	for i > 0 {
		event, _ := sse.FrameParts(frames[i-1])
		if e := string(event); e != "done" && e != "error" && e != "rendered" {
			break
		}
		i--
	}
	return frames[i:]
}

// renumber gives frames the ids first, first+1, ...
func renumber(frames sse.Recorded, first int) sse.Recorded {
	out := make(sse.Recorded, len(frames))
	for i, f := range frames {
		if rest, ok := bytes.CutPrefix(f, []byte("id: ")); ok {
			if _, rest, ok = bytes.Cut(rest, []byte("\n")); ok {
				f = rest
			}
		}
		out[i] = append([]byte("id: "+strconv.Itoa(first+i)+"\n"), f...)
	}
	return out
}
