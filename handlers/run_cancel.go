package handlers

import "github.com/gofiber/fiber/v2"

// CancelRun stops a live run; its partial output is kept.
func (h *Handler) CancelRun(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	if h.runner.Cancel(id, u.ID) {
		return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"id": id, "cancelled": true})
	}
	if _, err := h.store.Run(ctx(c), u.ID, id); err != nil {
		return err
	}
	return fiber.NewError(fiber.StatusConflict, "The run has already finished.")
}
