package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// RemoveProvider deletes a custom provider and its keys.
func (h *Handler) RemoveProvider(c *fiber.Ctx) error {
	err := h.store.RemoveCustomProvider(ctx(c), c.Params("id"))
	if errors.Is(err, db.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "There is no such provider.")
	}
	if err != nil {
		return err
	}
	return redirectWith(c, "/settings", "Removed the provider.")
}
