package handlers

import (
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/preset"
	"knobs/views"
)

// OpenPreset loads a preset into the playground: its current version, or
// with label set the version that label points at, which the playground
// then names.
func (h *Handler) OpenPreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	if c.FormValue("label") == "" {
		asked, err := h.loadPreset(c, u.ID, p)
		if err != nil {
			return err
		}
		return openedOrAsk(c, asked, "Opened the preset "+p.Name+".")
	}
	name, msg := preset.LabelName(c.FormValue("label"))
	form := views.LabelForm{Label: clip(name, 32)}
	if msg != "" {
		return h.renderLabelForm(c, fiber.StatusUnprocessableEntity, form, field.Errors{"label": msg}, nil)
	}
	v, _, err := h.store.PresetAt(ctx(c), u.ID, p, name, 0)
	if errors.Is(err, db.ErrNotFound) {
		return h.renderLabelForm(c, fiber.StatusNotFound, form, field.Errors{"label": "The preset has no label " + name + "."}, nil)
	} else if err != nil {
		return err
	}
	asked, err := h.loadPresetAt(c, u.ID, p, v, name)
	if err != nil {
		return err
	}
	return openedOrAsk(c, asked, "Opened the preset "+p.Name+" at "+name+" (version "+strconv.Itoa(v.Version)+").")
}
