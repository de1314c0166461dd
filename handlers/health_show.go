package handlers

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/views"
)

// Healthz answers 200 when the database answers, 503 otherwise: the
// process is alive. /readyz says whether it should get traffic.
func (h *Handler) Healthz(c *fiber.Ctx) error {
	if err := h.store.Ping(ctx(c)); err != nil {
		h.log.ErrorContext(ctx(c), "health check failed", "err", err)
		return c.Status(fiber.StatusServiceUnavailable).SendString("database unreachable\n")
	}
	return c.SendString("ok\n")
}

// readyTimeout bounds the readiness probe's write: a writer held that
// long is as good as unwritable to the requests waiting behind it.
const readyTimeout = 5 * time.Second

// Readyz answers 200 when Knobs can take traffic: it is not shutting
// down and the database takes a write (a probe that keeps nothing, see
// db.CheckWritable). Otherwise 503, with the reason.
func (h *Handler) Readyz(c *fiber.Ctx) error {
	select {
	case <-h.stopping:
		return c.Status(fiber.StatusServiceUnavailable).SendString("not ready: Knobs is shutting down\n")
	default:
	}
	probe, cancel := context.WithTimeout(ctx(c), readyTimeout)
	defer cancel()
	if err := h.store.CheckWritable(probe); err != nil {
		h.log.WarnContext(ctx(c), "readiness check failed: the database cannot be written", "err", err)
		return c.Status(fiber.StatusServiceUnavailable).SendString("not ready: the database cannot be written (is the disk full or read-only?)\n")
	}
	return c.SendString("ready\n")
}

// ErrorPage renders a 4xx or 5xx page; the web layer's error handler calls it.
func (h *Handler) ErrorPage(c *fiber.Ctx, status int, heading, message string) error {
	return Render(c, status, views.ErrorPage(views.ErrorView{Page: h.page(c, heading, ""), Status: status, Heading: heading, Message: message}))
}
