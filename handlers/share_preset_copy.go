package handlers

import (
	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// CopySharedPreset gives the viewer their own private copy of a shared
// preset and opens it in their playground.
func (h *Handler) CopySharedPreset(c *fiber.Ctx) error {
	u, ok := CurrentUser(c)
	if !ok {
		return fiber.NewError(fiber.StatusUnauthorized, "Sign in first.")
	}
	p, _, err := h.sharedPreset(c)
	if err != nil {
		return err
	}
	copied, fe, err := h.createPreset(c, db.Preset{
		OwnerID: u.ID, Name: p.Name, Description: p.Description, Tags: p.Tags,
		Visibility: db.PresetPrivate, Spec: p.Spec, Variables: p.Variables,
	})
	if !fe.Empty() {
		return fiber.NewError(fiber.StatusUnprocessableEntity, "The copy was not saved: "+fe.Describe())
	}
	if err != nil {
		return err
	}
	asked, err := h.loadPreset(c, u.ID, copied)
	if err != nil {
		return err
	}
	return openedOrAsk(c, asked, "Opened your own copy of "+p.Name+".")
}
