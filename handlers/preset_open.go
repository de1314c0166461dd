package handlers

import "github.com/gofiber/fiber/v2"

// OpenPreset loads a preset into the playground.
func (h *Handler) OpenPreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	asked, err := h.loadPreset(c, u.ID, p)
	if err != nil {
		return err
	}
	return openedOrAsk(c, asked, "Opened the preset "+p.Name+".")
}
