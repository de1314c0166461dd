package handlers

import "github.com/gofiber/fiber/v2"

// ReplaySharedGroup replays a shared comparison: a public link needs no
// account, a team link a signed-in member.
func (h *Handler) ReplaySharedGroup(c *fiber.Ctx) error {
	g, _, share, ok, err := h.sharedGroup(c)
	if err != nil {
		return err
	}
	if !ok {
		return fiber.NewError(fiber.StatusUnauthorized, "Sign in first.")
	}
	c.Set("Cache-Control", "private, no-store")
	return h.serveReplay(c, g, share.ID)
}
