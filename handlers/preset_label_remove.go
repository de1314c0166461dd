package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/preset"
	"knobs/views"
)

// RemovePresetLabel takes a label off the :id preset, by the rules of a
// move: a protected label is its owner's or an admin's to remove. The
// history keeps the removal.
func (h *Handler) RemovePresetLabel(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	name, msg := preset.LabelName(c.FormValue("label"))
	form := views.LabelForm{Label: clip(name, 32)}
	if msg != "" {
		return h.renderLabelForm(c, fiber.StatusUnprocessableEntity, form, field.Errors{"label": msg}, nil)
	}
	err = h.store.RemovePresetLabel(ctx(c), u.ID, u.IsAdmin(), p.ID, name)
	switch {
	case errors.Is(err, db.ErrLabelProtected):
		return h.renderLabelForm(c, fiber.StatusForbidden, form, field.Errors{"label": labelProtectedMsg(name)}, nil)
	case errors.Is(err, db.ErrNotFound):
		// The preset was seen above: it is the label that is missing.
		return h.renderLabelForm(c, fiber.StatusNotFound, form, field.Errors{"label": "The preset has no label " + name + "."}, nil)
	case err != nil:
		return err
	}
	return redirectWith(c, presetPath(p.ID)+"#labels", "Removed the label "+name+".")
}
