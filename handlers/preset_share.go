package handlers

import (
	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// CreatePresetShare makes a read-only link to a preset, as
// CreateRunShare does for a run.
func (h *Handler) CreatePresetShare(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	if p.OwnerID != u.ID {
		return fiber.NewError(fiber.StatusForbidden, "Only its owner can share this preset.")
	}
	audience, ok := shareAudience(c)
	if !ok {
		return refuseShare(c, presetPath(p.ID))
	}
	sh, err := h.store.CreateShare(ctx(c), u.ID, db.SharePreset, p.ID, audience)
	if err != nil {
		return err
	}
	return answerShare(c, sh, presetPath(p.ID))
}
