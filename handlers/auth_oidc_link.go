package handlers

import (
	"errors"
	"fmt"
	"math"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/crypto/bcrypt"

	"knobs/db"
	"knobs/views"
	"knobs/web/session"
)

// linkForm loads the identity waiting to be linked and its account.
func (h *Handler) linkForm(c *fiber.Ctx) (views.LinkForm, pendingLink, db.User, error) {
	var l pendingLink
	if h.sso == nil || !h.sso.readCookie(c, linkCookie, &l) {
		return views.LinkForm{}, l, db.User{}, errSSO(fiber.StatusBadRequest, "No single sign-on is waiting to be linked to an account in this browser, or it took longer than 10 minutes.")
	}
	u, err := h.store.User(ctx(c), l.User)
	if errors.Is(err, db.ErrNotFound) {
		h.sso.clearCookie(c, linkCookie)
		return views.LinkForm{}, l, u, errSSO(fiber.StatusNotFound, "The account to link was removed.")
	}
	if err != nil {
		return views.LinkForm{}, l, u, err
	}
	f := views.LinkForm{Page: h.page(c, "Link your account", ""), Username: u.Username, Email: l.Email, Provider: h.cfg.OIDC.Name, ByName: l.ByName}
	return f, l, u, nil
}

// ShowLinkPage asks for the password of the account that has the email
// the identity provider vouched for.
func (h *Handler) ShowLinkPage(c *fiber.Ctx) error {
	f, _, _, err := h.linkForm(c)
	if err != nil {
		return err
	}
	return Render(c, fiber.StatusOK, views.LinkPage(f))
}

// LinkAccount links the identity to the account once its password is
// proved, with the sign-in form's limits on failures, and signs in.
func (h *Handler) LinkAccount(c *fiber.Ctx) error {
	f, l, u, err := h.linkForm(c)
	if err != nil {
		return err
	}
	password := c.FormValue("password")
	if password == "" || len(password) > maxPassword {
		f.Error = "Enter the password of this account."
		return Render(c, fiber.StatusUnprocessableEntity, views.LinkPage(f))
	}
	accountKey, addrKey := loginKey(u.Username), "addr:"+c.IP()
	if ok, wait := h.logins.Reserve(accountKey, addrKey); !ok {
		f.Error = fmt.Sprintf("Too many failed sign-in attempts. Try again in %d minutes.", max(1, int(math.Ceil(wait.Minutes()))))
		return Render(c, fiber.StatusTooManyRequests, views.LinkPage(f))
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), passwordInput(password)) != nil {
		h.log.InfoContext(ctx(c), "linking a single sign-on identity failed: wrong password", "username", u.Username, "addr", c.IP())
		f.Error = "Wrong password."
		return Render(c, fiber.StatusUnauthorized, views.LinkPage(f))
	}
	h.logins.Release(addrKey)
	h.logins.Reset(accountKey)
	// One identity of a provider per account: another may have been
	// linked since the callback.
	linked, err := h.store.HasIdentityAt(ctx(c), u.ID, l.Issuer)
	if err != nil {
		return err
	}
	if linked {
		h.sso.clearCookie(c, linkCookie)
		return errSSO(fiber.StatusConflict, "This account was linked to another identity of this provider a moment ago.")
	}
	id := db.Identity{Issuer: l.Issuer, Subject: l.Subject, Email: l.Email}
	switch err := h.store.LinkIdentity(ctx(c), u.ID, id); {
	case errors.Is(err, db.ErrIdentityTaken):
		h.sso.clearCookie(c, linkCookie)
		return errSSO(fiber.StatusConflict, "This identity was linked to an account a moment ago, by another sign-in.")
	case err != nil:
		return err
	}
	h.sso.clearCookie(c, linkCookie)
	h.log.InfoContext(ctx(c), "single sign-on identity linked to an account", "user", u.Username)
	session.From(c).SetFlash("Your account is linked: sign in with " + h.cfg.OIDC.Name + " from now on.")
	return h.ssoSignIn(c, u, id, l.Admin, l.Next)
}

// NewSSOAccount makes a new account for the identity waiting to be
// linked, when the account it matched only has the email as its username
// (anyone may have picked that name), as the policy or an invite allows.
func (h *Handler) NewSSOAccount(c *fiber.Ctx) error {
	_, l, _, err := h.linkForm(c)
	if err != nil {
		return err
	}
	if !l.ByName {
		return errSSO(fiber.StatusConflict, "An account has this verified email: link it with its password, or ask an admin.")
	}
	h.sso.clearCookie(c, linkCookie)
	return h.createSSOAccount(c, db.Identity{Issuer: l.Issuer, Subject: l.Subject, Email: l.Email}, l.Admin, l.Invite, l.Next)
}
