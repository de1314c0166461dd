package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// RevokeArena ends an arena's voting link from its page: its owner's or
// an admin's to do. Its votes and results stay.
func (h *Handler) RevokeArena(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "arena")
	if err != nil {
		return err
	}
	a, err := h.store.Arena(ctx(c), id)
	if errors.Is(err, db.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "There is no such arena.")
	} else if err != nil {
		return err
	}
	if a.OwnerID != u.ID && !u.IsAdmin() {
		return fiber.NewError(fiber.StatusForbidden, "Only the arena's owner or an admin revokes its link.")
	}
	if err := h.store.RevokeArena(ctx(c), u.ID, u.IsAdmin(), a.ID); err != nil && !errors.Is(err, db.ErrNotFound) {
		return err
	}
	return redirectWith(c, arenaPath(a.ID), "The voting link no longer opens; the votes stay.")
}
