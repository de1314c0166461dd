package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// RevokeInvite deletes an unused invite.
func (h *Handler) RevokeInvite(c *fiber.Ctx) error {
	id, err := pathID(c, "invite")
	if err != nil {
		return err
	}
	if err := h.store.RevokeInvite(ctx(c), id); errors.Is(err, db.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "There is no open invite with that id.")
	} else if err != nil {
		return err
	}
	return redirectWith(c, "/settings", "Revoked the invite.")
}
