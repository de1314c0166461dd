package handlers

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/oauth2"

	"knobs/db"
)

// maxProviderText bounds what Knobs repeats of a provider's error.
const maxProviderText = 300

// FinishSSO takes the provider's answer: it checks the state, exchanges
// the code with the PKCE verifier, verifies the ID token (signature,
// issuer, audience, expiry) and its nonce, requires a verified email,
// and signs in to the account of the identity. A first sign-in makes an
// account when the policy or an invite allows it, or, when an account has
// the same email, asks for its password before linking. Every refusal
// changes nothing.
func (h *Handler) FinishSSO(c *fiber.Ctx) error {
	s := h.sso
	if s == nil {
		return fiber.ErrNotFound
	}
	var f flow
	ok := s.readCookie(c, flowCookie, &f)
	s.clearCookie(c, flowCookie)
	if !ok {
		return errSSO(fiber.StatusBadRequest, "This sign-in did not start in this browser, or took longer than 10 minutes.")
	}
	if subtle.ConstantTimeCompare([]byte(c.Query("state")), []byte(f.State)) != 1 {
		h.log.WarnContext(ctx(c), "single sign-on refused: the answer's state is not this browser's", "addr", c.IP())
		return errSSO(fiber.StatusBadRequest, "The answer from the identity provider does not belong to the sign-in this browser started (its state differs).")
	}
	if e := c.Query("error"); e != "" {
		msg := e
		if d := c.Query("error_description"); d != "" {
			msg += ": " + d
		}
		h.log.InfoContext(ctx(c), "single sign-on refused by the identity provider", "error", clipProvider(e), "addr", c.IP())
		return errSSO(fiber.StatusForbidden, "The identity provider did not sign you in: "+clipProvider(msg)+".")
	}
	code := c.Query("code")
	if code == "" {
		return errSSO(fiber.StatusBadRequest, "The answer from the identity provider carries no sign-in code.")
	}
	p, verifier, err := s.discover(ctx(c))
	if err != nil {
		h.log.ErrorContext(ctx(c), "single sign-on: the identity provider's discovery document could not be read", "issuer", s.cfg.Issuer, "err", err)
		return fiber.NewError(fiber.StatusBadGateway, "Knobs cannot reach the identity provider right now. Try again in a minute, or tell an admin if it goes on.")
	}
	tok, err := s.oauth(p).Exchange(s.ctx(c), code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode != "" {
			h.log.WarnContext(ctx(c), "single sign-on: the identity provider refused the code", "error", re.ErrorCode, "status", re.Response.StatusCode)
			msg := re.ErrorCode
			if re.ErrorDescription != "" {
				msg += ": " + re.ErrorDescription
			}
			return errSSO(fiber.StatusBadGateway, "The identity provider did not accept the sign-in code: "+clipProvider(msg)+".")
		}
		h.log.ErrorContext(ctx(c), "single sign-on: exchanging the code failed", "err", err)
		return errSSO(fiber.StatusBadGateway, "Knobs could not complete the sign-in with the identity provider.")
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return errSSO(fiber.StatusBadGateway, "The identity provider sent no ID token.")
	}
	idt, err := verifier.Verify(s.ctx(c), raw)
	if err != nil {
		h.log.WarnContext(ctx(c), "single sign-on refused: the ID token did not verify", "err", err, "addr", c.IP())
		return errSSO(fiber.StatusUnauthorized, ssoFailure(err))
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		h.log.WarnContext(ctx(c), "single sign-on refused: the ID token's nonce is not this sign-in's", "addr", c.IP())
		return errSSO(fiber.StatusUnauthorized, "The sign-in token does not belong to the sign-in this browser started (its nonce differs).")
	}
	var all map[string]json.RawMessage
	if err := idt.Claims(&all); err != nil {
		return errSSO(fiber.StatusBadGateway, "The identity provider's sign-in token could not be read.")
	}
	cl := readClaims(all, s.cfg.GroupsClaim)
	if cl.Email == "" || !cl.EmailVerified {
		return errSSO(fiber.StatusForbidden, "The identity provider did not confirm your email address, and Knobs needs a verified email to sign you in.")
	}
	// OpenID Connect bounds a subject at 255 characters, and an email
	// address has at most 254.
	if idt.Subject == "" || len(idt.Subject) > 255 || len(cl.Email) > 254 || !strings.Contains(cl.Email, "@") {
		return errSSO(fiber.StatusBadGateway, "The identity provider sent a subject or an email address that Knobs cannot use.")
	}
	id := db.Identity{Issuer: idt.Issuer, Subject: idt.Subject, Email: cl.Email}
	admin := s.inAdminGroup(cl.Groups)

	// A returning identity.
	u, err := h.store.IdentityUser(ctx(c), id.Issuer, id.Subject)
	if err == nil {
		return h.ssoSignIn(c, u, id, admin, f.Next)
	}
	if !errors.Is(err, db.ErrNotFound) {
		return err
	}

	// An account with the same email is linked once its password is
	// proved. A match on the username alone may be someone else's pick of
	// that name: the link page then also offers a new account.
	u, byEmail, err := h.store.UserByEmail(ctx(c), cl.Email)
	if err == nil {
		linked, err := h.store.HasIdentityAt(ctx(c), u.ID, id.Issuer)
		if err != nil {
			return err
		}
		if byEmail && (linked || u.PasswordHash == "") {
			return errSSO(fiber.StatusConflict, fmt.Sprintf("An account with the email %s exists on this Knobs but signs in with another identity of this provider, so it cannot be linked to this one. Ask an admin.", cl.Email))
		}
		if !linked && u.PasswordHash != "" {
			l := pendingLink{User: u.ID, Issuer: id.Issuer, Subject: id.Subject, Email: id.Email, Admin: admin, Next: f.Next, ByName: !byEmail, Invite: f.Invite}
			if err := s.setCookie(c, linkCookie, l); err != nil {
				return err
			}
			return c.Redirect("/auth/oidc/link", fiber.StatusSeeOther)
		}
		// A username that only looks like the email, on an account
		// that cannot be linked: a new account, as for anyone else.
	} else if !errors.Is(err, db.ErrNotFound) {
		return err
	}
	return h.createSSOAccount(c, id, admin, f.Invite, f.Next)
}

// createSSOAccount makes the account of a first single sign-on, as the
// policy (email domain, admin group) or an invite allows, and signs in.
func (h *Handler) createSSOAccount(c *fiber.Ctx, id db.Identity, admin bool, invite, next string) error {
	s := h.sso
	removed, err := h.store.IdentityRemoved(ctx(c), id)
	if err != nil {
		return err
	}
	allowed := (s.domainAllowed(id.Email) || admin) && !removed
	role := db.RoleMember
	if admin {
		role = db.RoleAdmin
	}
	u, err := h.store.CreateSSOUser(ctx(c), db.SSOSignUp{Identity: id, Username: usernameFor(id.Email), Role: role, Allowed: allowed,
		InviteToken: invite, AdminGroupSet: h.cfg.OIDC.AdminGroup != ""})
	switch {
	case errors.Is(err, db.ErrInviteInvalid):
		return errSSO(fiber.StatusForbidden, "Your invite link was already used, has expired or was revoked. Ask an admin for a new one.")
	case errors.Is(err, db.ErrFirstNotAdmin):
		return errSSO(fiber.StatusForbidden, fmt.Sprintf("This Knobs has no account yet, and its first account becomes the admin: it must be made by a member of the admin group %s.", h.cfg.OIDC.AdminGroup))
	case errors.Is(err, db.ErrSignUpClosed) && removed:
		return errSSO(fiber.StatusForbidden, "An admin removed your account from this Knobs. To come back, ask an admin for an invite link.")
	case errors.Is(err, db.ErrSignUpClosed):
		return errSSO(fiber.StatusForbidden, fmt.Sprintf("Accounts for %s are not made here by single sign-on: its email domain is not allowed on this Knobs. Ask an admin for an invite link.", id.Email))
	case errors.Is(err, db.ErrIdentityTaken):
		return errSSO(fiber.StatusConflict, "This identity was linked to an account a moment ago, by another sign-in.")
	case err != nil:
		return err
	}
	h.log.InfoContext(ctx(c), "account created by single sign-on", "user", u.Username, "role", u.Role)
	if err := h.signIn(c, u.ID); err != nil {
		return err
	}
	return redirectWith(c, next, "Welcome to Knobs, "+u.Username+".")
}

// ssoSignIn signs in to u through identity id: the role follows the
// admin group when one is set, and the session starts as a password
// sign-in's does.
func (h *Handler) ssoSignIn(c *fiber.Ctx, u db.User, id db.Identity, admin bool, next string) error {
	if h.cfg.OIDC.AdminGroup != "" {
		want := db.RoleMember
		if admin {
			want = db.RoleAdmin
		}
		if u.Role != want {
			switch err := h.store.SetUserRole(ctx(c), u.ID, want, ""); {
			case errors.Is(err, db.ErrLastAdmin):
				h.log.WarnContext(ctx(c), "single sign-on: the last admin is outside the admin group and stays admin", "user", u.Username, "group", h.cfg.OIDC.AdminGroup)
			case err != nil:
				return err
			default:
				h.log.InfoContext(ctx(c), "single sign-on: role set by the admin group", "user", u.Username, "role", want)
			}
		}
	}
	if err := h.store.TouchIdentity(ctx(c), id); err != nil {
		return err
	}
	if err := h.signIn(c, u.ID); err != nil {
		return err
	}
	return c.Redirect(next, fiber.StatusSeeOther)
}

// clipProvider bounds a provider's text repeated to the user or the log.
func clipProvider(s string) string {
	if len(s) > maxProviderText {
		return clip(s, maxProviderText) + "…"
	}
	return s
}
