package handlers

import (
	"github.com/gofiber/fiber/v2"

	"knobs/views"
)

// Healthz answers 200 when the database answers, 503 otherwise.
func (h *Handler) Healthz(c *fiber.Ctx) error {
	if err := h.store.Ping(ctx(c)); err != nil {
		h.log.Error("health check failed", "err", err)
		return c.Status(fiber.StatusServiceUnavailable).SendString("database unreachable\n")
	}
	return c.SendString("ok\n")
}

// ErrorPage renders a 4xx or 5xx page; the web layer's error handler calls it.
func (h *Handler) ErrorPage(c *fiber.Ctx, status int, heading, message string) error {
	return Render(c, status, views.ErrorPage(views.ErrorView{Page: h.page(c, heading, ""), Status: status, Heading: heading, Message: message}))
}
