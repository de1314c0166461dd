package handlers

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/preset"
)

// SavePresetSettings changes a preset's name, description, tags and
// visibility.
func (h *Handler) SavePresetSettings(c *fiber.Ctx) error {
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	p.Name = strings.TrimSpace(c.FormValue("name"))
	p.Description = strings.TrimSpace(c.FormValue("description"))
	p.Tags = preset.ParseTags(c.FormValue("tags"))
	p.Visibility = c.FormValue("visibility")
	p.Version = 0 // settings win over concurrent saves of the setup
	_, fe, err := h.updatePreset(c, p)
	switch {
	case !fe.Empty():
		return h.renderPreset(c, fiber.StatusUnprocessableEntity, fe)
	case errors.Is(err, db.ErrForbidden):
		return fiber.NewError(fiber.StatusForbidden, "Only its owner or an admin can change this preset.")
	case err != nil:
		return err
	}
	return redirectWith(c, presetPath(p.ID), "Saved.")
}
