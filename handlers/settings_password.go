package handlers

import (
	"github.com/gofiber/fiber/v2"
	"golang.org/x/crypto/bcrypt"

	"knobs/field"
	"knobs/web/session"
)

// ChangePassword sets a new password once the current one is proved, and
// signs the user out of every other session. An account single sign-on
// made has no password, and gets none this way: it stays one its identity
// provider alone lets in, so that someone switched off there cannot keep
// a way in here (an admin's reset link can give it one).
func (h *Handler) ChangePassword(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	if u.PasswordHash == "" {
		return fiber.NewError(fiber.StatusConflict, "You sign in with "+h.ssoName()+": your account has no password to change.")
	}
	current, password, password2 := c.FormValue("current"), c.FormValue("password"), c.FormValue("password2")
	errs := field.Errors{}
	checkNewPassword(errs, password, password2)
	if len(current) > maxPassword || current == "" {
		errs["current"] = "Enter your current password."
	}
	if len(errs) > 0 {
		return h.renderSettings(c, fiber.StatusUnprocessableEntity, errs, "")
	}
	// Guessing the current password from a stolen session counts against
	// the same limit as signing in.
	accountKey := loginKey(u.Username)
	if ok, _ := h.logins.Reserve(accountKey); !ok {
		return h.renderSettings(c, fiber.StatusTooManyRequests, field.Errors{"current": "Too many wrong passwords. Try again later."}, "")
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), passwordInput(current)) != nil {
		h.log.InfoContext(ctx(c), "password change with a wrong current password", "user", u.Username, "addr", c.IP())
		return h.renderSettings(c, fiber.StatusUnprocessableEntity, field.Errors{"current": "That is not your current password."}, "")
	}
	h.logins.Reset(accountKey)
	hash, err := bcrypt.GenerateFromPassword(passwordInput(password), h.bcryptCost)
	if err != nil {
		return err
	}
	if err := h.store.SetPassword(ctx(c), u.ID, string(hash), session.From(c).Token); err != nil {
		return err
	}
	h.log.InfoContext(ctx(c), "password changed", "user", u.Username)
	return redirectWith(c, "/settings", "Your password is changed; every other session is signed out.")
}
