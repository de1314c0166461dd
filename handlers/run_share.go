package handlers

import (
	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// CreateRunShare makes a read-only link to a run, for the team or for
// anyone; a page script gets the link as JSON (see answerShare).
func (h *Handler) CreateRunShare(c *fiber.Ctx) error {
	run, err := h.ownRun(c)
	if err != nil {
		return err
	}
	audience, ok := shareAudience(c)
	if !ok {
		return refuseShare(c, runPath(run.ID))
	}
	sh, err := h.store.CreateShare(ctx(c), run.UserID, db.ShareRun, run.ID, audience)
	if err != nil {
		return err
	}
	return answerShare(c, sh, runPath(run.ID))
}
