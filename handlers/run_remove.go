package handlers

import (
	"fmt"

	"github.com/gofiber/fiber/v2"
)

// RemoveRun deletes a run, its search entry and its share links.
func (h *Handler) RemoveRun(c *fiber.Ctx) error {
	run, err := h.ownRun(c)
	if err != nil {
		return err
	}
	if err := h.removeRun(ctx(c), run.UserID, run.ID); err != nil {
		return err
	}
	return redirectWith(c, "/history", fmt.Sprintf("Deleted run %d.", run.ID))
}
