package handlers

import (
	"bytes"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/runner"
	"knobs/web/sse"
)

// runID parses the :id route parameter; a malformed id is a 404 like an
// unknown one.
func runID(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, fiber.NewError(fiber.StatusNotFound, "There is no such run.")
	}
	return id, nil
}

// serveEvents streams src as SSE with the configured write deadline:
// a client that stops reading is dropped (see sse.Serve).
func (h *Handler) serveEvents(c *fiber.Ctx, src sse.Source, after int, leave func()) error {
	return sse.Serve(c, src, after, leave, sse.Options{WriteTimeout: h.cfg.StreamWriteTimeout, Log: h.log})
}

// RunEvents streams a run's events as SSE. A reconnect with Last-Event-ID
// resumes after that event; it never starts the upstream call again. A
// finished run replays from the database.
func (h *Handler) RunEvents(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := runID(c)
	if err != nil {
		return err
	}
	after, _ := strconv.Atoi(c.Get("Last-Event-ID"))
	if q := c.Query("after"); q != "" {
		after, _ = strconv.Atoi(q)
	}
	if run, ok := h.runner.Run(id, u.ID); ok {
		return h.serveEvents(c, run, after, run.Subscribe())
	}
	events, err := h.storedEvents(c, u.ID, id)
	if err != nil {
		return err
	}
	return h.serveEvents(c, sse.Split(events), after, func() {})
}

// storedEvents is the SSE text of user's run id as it streamed: the
// events kept when it ended, those so far while it is live, and otherwise
// (interrupted before its events were kept) a replay of its last
// checkpoint, which ends with a done event so that no reader waits. Another user's run is db.ErrNotFound.
func (h *Handler) storedEvents(c *fiber.Ctx, user, id int64) ([]byte, error) {
	stored, err := h.store.Run(ctx(c), user, id)
	if err != nil {
		return nil, err
	}
	events, err := h.store.RunEvents(ctx(c), user, id)
	if err != nil || len(events) > 0 {
		return events, err
	}
	if run, ok := h.runner.Run(id, user); ok {
		frames, _, _ := run.Frames(0)
		return bytes.Join(frames, nil), nil
	}
	return runner.Replay(stored.Status, stored.Result), nil
}

// CancelRun stops a live run; its partial output is kept.
func (h *Handler) CancelRun(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := runID(c)
	if err != nil {
		return err
	}
	if h.runner.Cancel(id, u.ID) {
		return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"id": id, "cancelled": true})
	}
	if _, err := h.store.Run(ctx(c), u.ID, id); err != nil {
		return err
	}
	return c.Status(fiber.StatusConflict).JSON(fiber.Map{"error": "The run has already finished."})
}

// ShowRawResponse answers the provider's answer to a run byte for byte, as
// text, for the raw view.
func (h *Handler) ShowRawResponse(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := runID(c)
	if err != nil {
		return err
	}
	raw, err := h.store.RunRawResponse(ctx(c), u.ID, id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	c.Set("Content-Disposition", "inline")
	return c.Send(raw)
}
