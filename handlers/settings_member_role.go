package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/web/session"
)

// SetMemberRole makes a member an admin or back.
func (h *Handler) SetMemberRole(c *fiber.Ctx) error {
	id, err := pathID(c, "member")
	if err != nil {
		return err
	}
	role := c.FormValue("role")
	if role != db.RoleAdmin && role != db.RoleMember {
		return h.renderSettings(c, fiber.StatusUnprocessableEntity, field.Errors{"role": "Choose member or admin."}, "")
	}
	switch err := h.store.SetUserRole(ctx(c), id, role, session.From(c).Token); {
	case errors.Is(err, db.ErrNotFound):
		return fiber.NewError(fiber.StatusNotFound, "There is no such member.")
	case errors.Is(err, db.ErrLastAdmin):
		return redirectWith(c, "/settings", "The team needs at least one admin: make someone else admin first.")
	case err != nil:
		return err
	}
	return redirectWith(c, "/settings", "Changed the role.")
}
