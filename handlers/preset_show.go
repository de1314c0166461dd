package handlers

import "github.com/gofiber/fiber/v2"

// ShowPresetPage shows a preset: its setup, versions, a diff of two of
// them (?a=&b=), and its settings and shares for whoever may change it.
func (h *Handler) ShowPresetPage(c *fiber.Ctx) error {
	return h.renderPreset(c, fiber.StatusOK, nil)
}
