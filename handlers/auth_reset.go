package handlers

import (
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/crypto/bcrypt"

	"knobs/db"
	"knobs/field"
	"knobs/views"
)

// resetTTL is how long a password reset link works.
const resetTTL = 24 * time.Hour

// resetForm is the form of the reset link in the request, and whether
// the link works; a link that does not has its page answered already.
func (h *Handler) resetForm(c *fiber.Ctx) (views.ResetForm, bool, error) {
	f := views.ResetForm{Page: h.page(c, "Set a new password", ""), Token: c.Params("token"), Errors: field.Errors{}}
	u, err := h.store.PasswordResetUser(ctx(c), f.Token)
	switch {
	case errors.Is(err, db.ErrResetInvalid):
		return f, false, Render(c, fiber.StatusNotFound, views.ResetPage(f))
	case err != nil:
		return f, false, err
	}
	f.Username = u.Username
	return f, true, nil
}

// ShowResetPage shows the form a password reset link opens.
func (h *Handler) ShowResetPage(c *fiber.Ctx) error {
	f, ok, err := h.resetForm(c)
	if !ok {
		return err
	}
	return Render(c, fiber.StatusOK, views.ResetPage(f))
}

// ResetPassword spends a reset link: the new password is set, every
// session of the account ends, and this browser is signed in to it.
func (h *Handler) ResetPassword(c *fiber.Ctx) error {
	f, ok, err := h.resetForm(c)
	if !ok {
		return err
	}
	token := f.Token
	checkNewPassword(f.Errors, c.FormValue("password"), c.FormValue("password2"))
	if len(f.Errors) > 0 {
		return Render(c, fiber.StatusUnprocessableEntity, views.ResetPage(f))
	}
	hash, err := bcrypt.GenerateFromPassword(passwordInput(c.FormValue("password")), h.bcryptCost)
	if err != nil {
		return err
	}
	// Spent in one transaction: a second use of the link, even at the
	// same moment, finds it used.
	u, err := h.store.ResetPassword(ctx(c), token, string(hash))
	switch {
	case errors.Is(err, db.ErrResetInvalid):
		f.Username = ""
		return Render(c, fiber.StatusNotFound, views.ResetPage(f))
	case err != nil:
		return err
	}
	h.log.InfoContext(ctx(c), "password reset with a link", "user", u.Username)
	h.logins.Reset(loginKey(u.Username))
	if err := h.signIn(c, u.ID); err != nil {
		return err
	}
	return redirectWith(c, "/", "Your new password is set; every other session is signed out.")
}
