package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// RevokeToken revokes one of the user's API tokens from Settings.
func (h *Handler) RevokeToken(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "API token")
	if err != nil {
		return err
	}
	if err := h.store.RevokeToken(ctx(c), u.ID, id, h.now()); errors.Is(err, db.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "There is no such API token.")
	} else if err != nil {
		return err
	}
	return redirectWith(c, "/settings", "Revoked the API token: it no longer works.")
}
