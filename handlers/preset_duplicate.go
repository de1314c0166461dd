package handlers

import (
	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/preset"
)

// DuplicatePreset copies a preset the user can see into a new private one
// they own.
func (h *Handler) DuplicatePreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	copied, fe, err := h.createPreset(c, db.Preset{
		OwnerID: u.ID, Name: copyName(p.Name), Description: p.Description, Tags: p.Tags,
		Visibility: db.PresetPrivate, Spec: p.Spec, Variables: p.Variables,
	})
	if !fe.Empty() {
		return fiber.NewError(fiber.StatusUnprocessableEntity, "The copy was not saved: "+fe.Describe())
	}
	if err != nil {
		return err
	}
	return redirectWith(c, presetPath(copied.ID), "This is your own copy.")
}

func copyName(name string) string {
	n := []rune(name + " (copy)")
	if len(n) > preset.NameMax {
		n = n[len(n)-preset.NameMax:]
	}
	return string(n)
}
