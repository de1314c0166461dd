package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/views"
)

// CreatePasswordReset makes a one-time link with which a member who
// forgot their password sets a new one; an admin hands it over.
func (h *Handler) CreatePasswordReset(c *fiber.Ctx) error {
	if !h.cfg.PasswordLogin {
		return fiber.NewError(fiber.StatusConflict, "Password sign-in is switched off on this Knobs, so a password reset link would let nobody in: members sign in with "+h.ssoName()+".")
	}
	admin, _ := CurrentUser(c)
	id, err := pathID(c, "member")
	if err != nil {
		return err
	}
	if id == admin.ID {
		return redirectWith(c, "/settings", "Change your own password under Your account.")
	}
	member, err := h.store.User(ctx(c), id)
	if errors.Is(err, db.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "There is no such member.")
	} else if err != nil {
		return err
	}
	token, err := h.store.CreatePasswordReset(ctx(c), admin.ID, id, resetTTL)
	if errors.Is(err, db.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "There is no such member.")
	} else if err != nil {
		return err
	}
	h.log.InfoContext(ctx(c), "password reset link made", "by", admin.Username, "for", member.Username)
	return h.renderSettingsView(c, fiber.StatusOK, views.SettingsView{ResetURL: c.BaseURL() + "/reset/" + token, ResetFor: member.Username})
}
