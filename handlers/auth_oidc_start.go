package handlers

import (
	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gofiber/fiber/v2"
	"golang.org/x/oauth2"
)

// StartSSO sends the browser to the identity provider, with the state,
// nonce and PKCE verifier of this sign-in kept in the flow cookie.
func (h *Handler) StartSSO(c *fiber.Ctx) error {
	s := h.sso
	if s == nil {
		return fiber.ErrNotFound
	}
	if _, ok := CurrentUser(c); ok {
		return c.Redirect("/", fiber.StatusSeeOther)
	}
	p, _, err := s.discover(ctx(c))
	if err != nil {
		h.log.ErrorContext(ctx(c), "single sign-on: the identity provider's discovery document could not be read", "issuer", s.cfg.Issuer, "err", err)
		return fiber.NewError(fiber.StatusBadGateway, "Knobs cannot reach the identity provider right now. Try again in a minute, or tell an admin if it goes on.")
	}
	f := flow{State: randomToken(), Nonce: randomToken(), Verifier: oauth2.GenerateVerifier(), Next: safeNext(c.Query("next"))}
	if invite := c.Query("invite"); len(invite) <= 64 {
		f.Invite = invite
	}
	if err := s.setCookie(c, flowCookie, f); err != nil {
		return err
	}
	return c.Redirect(s.oauth(p).AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), fiber.StatusSeeOther)
}
