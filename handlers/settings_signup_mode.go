package handlers

import (
	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
)

// SetSignUpMode switches sign-up between invite-only and open.
func (h *Handler) SetSignUpMode(c *fiber.Ctx) error {
	mode := c.FormValue("mode")
	if mode != "open" && mode != "invite" {
		return h.renderSettings(c, fiber.StatusUnprocessableEntity, field.Errors{"mode": "Choose invite-only or open."}, "")
	}
	if err := h.store.SetSetting(ctx(c), db.SettingSignUpMode, mode); err != nil {
		return err
	}
	if mode == "open" {
		return redirectWith(c, "/settings", "Anyone who can reach this server can now sign up.")
	}
	return redirectWith(c, "/settings", "Sign-up now needs an invite link.")
}
