package handlers

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"
)

// ShowPresetSpec answers the setup of a preset the user may see, as
// {"id","name","version","spec"}: pages list presets by name and fetch
// the setup of the one chosen, so that a team's big presets are not all
// sent with every page. Another member's private preset is 404.
func (h *Handler) ShowPresetSpec(c *fiber.Ctx) error {
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	spec := json.RawMessage(p.Spec)
	if !json.Valid(spec) {
		spec = json.RawMessage(`{}`)
	}
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	return c.JSON(fiber.Map{"id": p.ID, "name": p.Name, "version": p.Version, "spec": spec})
}
