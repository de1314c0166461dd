package handlers

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/crypto/bcrypt"

	"knobs/db"
	"knobs/field"
	"knobs/views"
)

const (
	maxUsername = 64
	minPassword = 8
	// maxPassword bounds the work of hashing a password (see passwordInput).
	maxPassword = 1024
)

var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9._@-]+$`)

// passwordInput is what bcrypt is given for a password. bcrypt refuses
// more than 72 bytes and a password may have 1,024, so it gets the
// password's SHA-256 (base64: 44 bytes, no NUL), which keeps every byte
// of a long password significant.
func passwordInput(password string) []byte {
	sum := sha256.Sum256([]byte(password))
	return []byte(base64.StdEncoding.EncodeToString(sum[:]))
}

// signupState says who may sign up right now, with the invite in token.
func (h *Handler) signupState(c *fiber.Ctx, token string) (first, allowed bool, err error) {
	n, err := h.store.CountUsers(ctx(c))
	if err != nil || n == 0 {
		return n == 0, n == 0, err
	}
	mode, err := h.store.Setting(ctx(c), db.SettingSignUpMode)
	if err != nil || mode == "open" {
		return false, mode == "open", err
	}
	if token == "" {
		return false, false, nil
	}
	ok, err := h.store.InviteValid(ctx(c), token)
	return false, ok, err
}

// ShowSignupPage renders the sign-up form, or says an invite is needed.
func (h *Handler) ShowSignupPage(c *fiber.Ctx) error {
	if _, ok := CurrentUser(c); ok {
		return c.Redirect("/", fiber.StatusSeeOther)
	}
	token := c.Query("invite")
	if len(token) > 64 {
		token = ""
	}
	first, allowed, err := h.signupState(c, token)
	if err != nil {
		return err
	}
	f := views.SignupForm{Page: h.page(c, "Sign up", ""), Invite: token, First: first, Allowed: allowed, SSO: h.ssoView()}
	if !allowed && token != "" {
		f.Error = "This invite link was already used, has expired or was revoked. Ask an admin for a new one."
	}
	return Render(c, fiber.StatusOK, views.SignupPage(f))
}

// Signup creates an account and signs it in.
func (h *Handler) Signup(c *fiber.Ctx) error {
	username := strings.TrimSpace(c.FormValue("username"))
	password, password2 := c.FormValue("password"), c.FormValue("password2")
	token := c.FormValue("invite")
	if len(token) > 64 {
		token = ""
	}
	first, allowed, err := h.signupState(c, token)
	if err != nil {
		return err
	}
	f := views.SignupForm{Page: h.page(c, "Sign up", ""), Username: username, Invite: token, First: first, Allowed: allowed, Errors: field.Errors{}, SSO: h.ssoView()}
	if !allowed {
		f.Error = "Sign-up needs a valid invite link. This one is missing, used, expired or revoked."
		return Render(c, fiber.StatusForbidden, views.SignupPage(f))
	}
	switch {
	case username == "":
		f.Errors["username"] = "Choose a username."
	case len(username) > maxUsername:
		f.Errors["username"] = "A username has at most 64 characters."
		f.Username = ""
	case !usernamePattern.MatchString(username):
		f.Errors["username"] = "Use only letters, digits, dots, dashes, underscores or @."
	}
	checkNewPassword(f.Errors, password, password2)
	if len(f.Errors) > 0 {
		return Render(c, fiber.StatusUnprocessableEntity, views.SignupPage(f))
	}
	hash, err := bcrypt.GenerateFromPassword(passwordInput(password), h.bcryptCost)
	if err != nil {
		return err
	}
	mode, err := h.store.Setting(ctx(c), db.SettingSignUpMode)
	if err != nil {
		return err
	}
	u, err := h.store.CreateUser(ctx(c), db.SignUp{Username: username, PasswordHash: string(hash), InviteToken: token, Open: mode == "open"})
	switch {
	case errors.Is(err, db.ErrUsernameTaken):
		f.Errors["username"] = "That username is taken."
		return Render(c, fiber.StatusConflict, views.SignupPage(f))
	case errors.Is(err, db.ErrInviteInvalid), errors.Is(err, db.ErrSignUpClosed):
		f.Allowed = false
		f.Error = "Sign-up needs a valid invite link. This one is missing, used, expired or revoked."
		return Render(c, fiber.StatusForbidden, views.SignupPage(f))
	case err != nil:
		return err
	}
	h.log.InfoContext(ctx(c), "account created", "user", u.Username, "role", u.Role)
	if err := h.signIn(c, u.ID); err != nil {
		return err
	}
	return redirectWith(c, "/", "Welcome to Knobs, "+u.Username+".")
}

// checkNewPassword puts a message in errs, under "password" or
// "password2", when a new password and its repetition are not acceptable.
func checkNewPassword(errs field.Errors, password, password2 string) {
	switch {
	case len(password) < minPassword:
		errs["password"] = "A password needs at least 8 characters."
	case len(password) > maxPassword:
		errs["password"] = "A password has at most 1,024 bytes."
	case password != password2:
		errs["password2"] = "The two passwords differ."
	}
}
