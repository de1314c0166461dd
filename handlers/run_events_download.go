package handlers

import (
	"strconv"

	"github.com/gofiber/fiber/v2"
)

// DownloadRunEvents downloads a run's events as the SSE text they were
// sent as: the stored events of a finished run, the events so far of a
// live one, and for a run interrupted before its events were kept, the
// events replayed from its last checkpoint (as RunEvents replays them).
func (h *Handler) DownloadRunEvents(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	events, err := h.storedEvents(c, u.ID, id)
	if err != nil {
		return err // not found, or another user's: 404 alike
	}
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="run-`+strconv.FormatInt(id, 10)+`.sse.txt"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Send(events)
}
