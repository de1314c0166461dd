package handlers

import "github.com/gofiber/fiber/v2"

// StarRun stars or unstars a run.
func (h *Handler) StarRun(c *fiber.Ctx) error {
	run, err := h.ownRun(c)
	if err != nil {
		return err
	}
	if err := h.store.SetRunStarred(ctx(c), run.UserID, run.ID, c.FormValue("starred") == "1"); err != nil {
		return err
	}
	return c.Redirect(runPath(run.ID), fiber.StatusSeeOther)
}
