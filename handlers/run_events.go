package handlers

import (
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
		return sse.Serve(c, run, after, run.Subscribe(), h.log)
	}
	stored, err := h.store.Run(ctx(c), u.ID, id)
	if err != nil {
		return err // not found, or another user's: 404 alike
	}
	events, err := h.store.RunEvents(ctx(c), u.ID, id)
	if err != nil {
		return err
	}
	if len(events) == 0 {
		// Interrupted by a restart: no events were kept, only the last
		// checkpoint. Replay that.
		events = runner.Replay(stored.Status, stored.Result)
	}
	return sse.Serve(c, sse.Split(events), after, func() {}, h.log)
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
