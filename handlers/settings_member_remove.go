package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// RemoveMember deletes another account and everything it owns.
func (h *Handler) RemoveMember(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "member")
	if err != nil {
		return err
	}
	if id == u.ID {
		return redirectWith(c, "/settings", "You cannot remove your own account here.")
	}
	switch err := h.store.RemoveUser(ctx(c), id); {
	case errors.Is(err, db.ErrNotFound):
		return fiber.NewError(fiber.StatusNotFound, "There is no such member.")
	case errors.Is(err, db.ErrLastAdmin):
		return redirectWith(c, "/settings", "The team needs at least one admin.")
	case err != nil:
		return err
	}
	// Their live runs stop: no one may read them, and their rows are gone.
	if n := h.runner.CancelUser(id); n > 0 {
		h.log.InfoContext(ctx(c), "stopped the runs of a removed member", "user", id, "runs", n)
	}
	return redirectWith(c, "/settings", "Removed the member.")
}
