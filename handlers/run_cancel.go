package handlers

import "github.com/gofiber/fiber/v2"

// CancelRun stops a live run; its partial output is kept.
func (h *Handler) CancelRun(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	if _, err := h.cancelRun(ctx(c), u.ID, id); err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"id": id, "cancelled": true})
}
