package handlers

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// RestorePreset makes an old version the current one, as a new version.
func (h *Handler) RestorePreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "preset")
	if err != nil {
		return err
	}
	version, err := strconv.Atoi(c.FormValue("version"))
	if err != nil {
		return fiber.NewError(fiber.StatusNotFound, "There is no such version.")
	}
	p, err := h.store.RestorePresetVersion(ctx(c), u.ID, u.IsAdmin(), id, version)
	if errors.Is(err, db.ErrForbidden) {
		return fiber.NewError(fiber.StatusForbidden, "Only its owner or an admin can change this preset.")
	} else if err != nil {
		return err
	}
	return redirectWith(c, presetPath(id), fmt.Sprintf("Restored version %d as version %d.", version, p.Version))
}
