package handlers

import "github.com/gofiber/fiber/v2"

// SetDefaultPreset makes a preset (or none) what a fresh playground loads.
func (h *Handler) SetDefaultPreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	id, msg := p.ID, "A fresh playground now opens with "+p.Name+"."
	if c.FormValue("default") != "1" {
		id, msg = 0, "A fresh playground opens with the built-in example again."
	}
	if err := h.store.SetDefaultPreset(ctx(c), u.ID, id); err != nil {
		return err
	}
	return redirectWith(c, presetPath(p.ID), msg)
}
