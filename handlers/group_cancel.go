package handlers

import "github.com/gofiber/fiber/v2"

// CancelGroup stops every live pane of a comparison; their partial
// output is kept. POST /runs/:id/cancel stops one pane.
func (h *Handler) CancelGroup(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	g, err := h.ownGroup(c)
	if err != nil {
		return err
	}
	cancelled := []int64{}
	for _, id := range g.RunIDs {
		if id != 0 && h.runner.Cancel(id, u.ID) {
			cancelled = append(cancelled, id)
		}
	}
	if len(cancelled) == 0 {
		return fiber.NewError(fiber.StatusConflict, "Every pane has already finished.")
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"group": g.ID, "cancelled": cancelled})
}
