package handlers

import (
	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// CreatePresetShare makes a read-only link to a preset, as
// CreateRunShare does for a run.
func (h *Handler) CreatePresetShare(c *fiber.Ctx) error {
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	return h.shareOwned(c, db.SharePreset, p.ID, p.OwnerID, presetPath(p.ID), "Only its owner can share this preset.")
}
