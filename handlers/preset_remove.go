package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// RemovePreset deletes a preset, its versions and its share links.
func (h *Handler) RemovePreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "preset")
	if err != nil {
		return err
	}
	err = h.store.RemovePreset(ctx(c), u.ID, u.IsAdmin(), id)
	if errors.Is(err, db.ErrForbidden) {
		return fiber.NewError(fiber.StatusForbidden, "Only its owner or an admin can delete this preset.")
	} else if err != nil {
		return err
	}
	return redirectWith(c, "/presets", "Deleted the preset.")
}
