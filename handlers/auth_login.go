package handlers

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/crypto/bcrypt"

	"knobs/db"
	"knobs/views"
	"knobs/web/session"
)

// ShowLoginPage renders the sign-in form.
func (h *Handler) ShowLoginPage(c *fiber.Ctx) error {
	if _, ok := CurrentUser(c); ok {
		return c.Redirect("/", fiber.StatusSeeOther)
	}
	n, err := h.store.CountUsers(ctx(c))
	if err != nil {
		return err
	}
	return Render(c, fiber.StatusOK, views.LoginPage(views.LoginForm{
		Page:    h.page(c, "Sign in", ""),
		Next:    safeNext(c.Query("next")),
		NoUsers: n == 0,
		SSO:     h.ssoView(),
	}))
}

// Login checks a username and password, limiting failures per account and
// per client address.
func (h *Handler) Login(c *fiber.Ctx) error {
	username := strings.TrimSpace(c.FormValue("username"))
	password := c.FormValue("password")
	form := views.LoginForm{Page: h.page(c, "Sign in", ""), Username: username, Next: safeNext(c.FormValue("next")), SSO: h.ssoView()}
	if len(username) > maxUsername || len(password) > maxPassword || username == "" || password == "" {
		form.Username = ""
		form.Error = "Enter your username and password."
		return Render(c, fiber.StatusUnprocessableEntity, views.LoginPage(form))
	}
	accountKey, addrKey := loginKey(username), "addr:"+c.IP()
	// The attempt counts before the password is checked: parallel guesses
	// must not all pass the limit while the first of them is hashing.
	if ok, wait := h.logins.Reserve(accountKey, addrKey); !ok {
		form.Error = fmt.Sprintf("Too many failed sign-in attempts. Try again in %d minutes.", max(1, int(math.Ceil(wait.Minutes()))))
		return Render(c, fiber.StatusTooManyRequests, views.LoginPage(form))
	}
	u, err := h.store.UserByName(ctx(c), username)
	// An unknown name is checked against a dummy hash of the same cost,
	// so that it takes as long as a wrong password and names cannot be probed.
	hash := h.dummyHash
	if err == nil {
		hash = []byte(u.PasswordHash)
	} else if !errors.Is(err, db.ErrNotFound) {
		h.logins.Release(accountKey, addrKey)
		return err
	}
	if bcrypt.CompareHashAndPassword(hash, passwordInput(password)) != nil || err != nil {
		h.log.InfoContext(ctx(c), "sign-in failed", "username", username, "addr", c.IP())
		form.Error = "Wrong username or password."
		return Render(c, fiber.StatusUnauthorized, views.LoginPage(form))
	}
	h.logins.Release(addrKey)
	h.logins.Reset(accountKey)
	if err := h.signIn(c, u.ID); err != nil {
		return err
	}
	return c.Redirect(form.Next, fiber.StatusSeeOther)
}

// Logout ends this session on the server, so that a copy of the cookie
// signs nobody in either.
func (h *Handler) Logout(c *fiber.Ctx) error {
	s := session.From(c)
	if s.Token != "" {
		if err := h.store.RemoveSession(ctx(c), s.Token); err != nil {
			return err
		}
	}
	s.SignOut()
	return c.Redirect("/login", fiber.StatusSeeOther)
}

// signIn starts a server-side session for user and puts its token in the
// cookie.
func (h *Handler) signIn(c *fiber.Ctx, user int64) error {
	token, err := h.store.CreateSession(ctx(c), user)
	if err != nil {
		return err
	}
	session.From(c).SignIn(token)
	return nil
}

// safeNext keeps a redirect target on this site: a plain local path, or
// "/". Browsers drop tabs and line breaks from URLs and read "\\" as "/",
// so "/\t/evil.example" would leave the site: such characters are refused.
func safeNext(next string) string {
	if next == "" || next[0] != '/' || strings.ContainsAny(next, "\\\t\r\n") {
		return "/"
	}
	for _, r := range next {
		if r < 0x20 || r == 0x7f {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(u.Path, "//") || strings.HasPrefix(next, "//") {
		return "/"
	}
	return next
}
