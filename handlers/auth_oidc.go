package handlers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gofiber/fiber/v2"
	"github.com/gorilla/securecookie"
	"golang.org/x/oauth2"

	"knobs/config"
	"knobs/vault"
	"knobs/views"
)

// Single sign-on with OpenID Connect: /auth/oidc/start sends the browser
// to the provider with a state, a nonce and a PKCE challenge, kept in a
// short-lived signed and encrypted cookie; /auth/oidc/callback takes the
// provider's answer, checks it against that cookie, and signs in.

const (
	// flowCookie carries a sign-in in progress from start to callback.
	flowCookie = "knobs_oidc"
	// linkCookie carries a verified identity to the page where the user
	// proves the password of the account it is to be linked to.
	linkCookie = "knobs_oidc_link"
	// ssoCookiePath keeps both cookies to the sign-on routes.
	ssoCookiePath = "/auth/oidc"
	// flowTTL is how long a user may take at the provider.
	flowTTL = 10 * time.Minute
	// idpTimeout bounds every call to the provider.
	idpTimeout = 15 * time.Second
	// maxIdPBody caps what Knobs reads of any answer of the provider.
	maxIdPBody = 1 << 20
)

// sso signs people in through an OpenID Connect provider. The provider's
// discovery document is fetched at the first sign-in, and again after a
// failure, so that Knobs starts while the provider is unreachable.
type sso struct {
	cfg     config.OIDC
	client  *http.Client
	now     func() time.Time
	cookies *securecookie.SecureCookie
	secure  bool

	mu       sync.Mutex // guards provider and verifier
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
}

// newSSO returns nil when single sign-on is not set up.
func newSSO(cfg config.Config, now func() time.Time) *sso {
	if !cfg.OIDC.Enabled() {
		return nil
	}
	cookies := securecookie.New(vault.Derive(cfg.Secret, "oidc-cookie-hash", 64), vault.Derive(cfg.Secret, "oidc-cookie-block", 32))
	cookies.MaxAge(int(flowTTL.Seconds()))
	cookies.SetSerializer(securecookie.JSONEncoder{})
	return &sso{
		cfg:     cfg.OIDC,
		client:  &http.Client{Timeout: idpTimeout, Transport: cappedTransport{http.DefaultTransport}},
		now:     now,
		cookies: cookies,
		secure:  cfg.SecureCookies,
	}
}

// discover returns the provider and the ID token verifier, fetching the
// provider's discovery document the first time.
func (s *sso) discover(ctx context.Context) (*oidc.Provider, *oidc.IDTokenVerifier, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.provider != nil {
		return s.provider, s.verifier, nil
	}
	ctx, cancel := context.WithTimeout(ctx, idpTimeout)
	defer cancel()
	// The context's client is kept by the provider for its key set.
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, s.client), s.cfg.Issuer)
	if err != nil {
		return nil, nil, err
	}
	s.provider = p
	s.verifier = p.Verifier(&oidc.Config{ClientID: s.cfg.ClientID, Now: s.now})
	return s.provider, s.verifier, nil
}

// ctx is the request's context, carrying the client that calls the
// provider.
func (s *sso) ctx(c *fiber.Ctx) context.Context {
	return oidc.ClientContext(c.UserContext(), s.client)
}

// CheckSSO reads the identity provider's discovery document, when single
// sign-on is on, so that a wrong issuer shows at start.
func (h *Handler) CheckSSO(ctx context.Context) error {
	if h.sso == nil {
		return nil
	}
	_, _, err := h.sso.discover(ctx)
	return err
}

// oauth is the authorization code flow with the provider p.
func (s *sso) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     s.cfg.ClientID,
		ClientSecret: s.cfg.ClientSecret,
		Endpoint:     p.Endpoint(),
		RedirectURL:  s.cfg.RedirectURL,
		Scopes:       strings.Fields(s.cfg.Scopes),
	}
}

// flow is a sign-in in progress, in the flow cookie.
type flow struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Next     string `json:"next"`
	Invite   string `json:"i,omitempty"`
}

// pendingLink is an identity the provider vouched for, waiting for the
// password of the account with its email, in the link cookie.
type pendingLink struct {
	User    int64  `json:"u"`
	Issuer  string `json:"iss"`
	Subject string `json:"sub"`
	Email   string `json:"email"`
	Admin   bool   `json:"admin"` // in the admin group
	Next    string `json:"next"`
	// ByName is a match on the username alone, not a verified email:
	// the page also offers a new account instead.
	ByName bool   `json:"by_name,omitempty"`
	Invite string `json:"invite,omitempty"`
}

// setCookie writes v, signed and encrypted, as the cookie name.
func (s *sso) setCookie(c *fiber.Ctx, name string, v any) error {
	value, err := s.cookies.Encode(name, v)
	if err != nil {
		return err
	}
	c.Cookie(&fiber.Cookie{Name: name, Value: value, Path: ssoCookiePath, MaxAge: int(flowTTL.Seconds()),
		HTTPOnly: true, Secure: s.secure, SameSite: fiber.CookieSameSiteLaxMode})
	return nil
}

// readCookie decodes the cookie name into v; false when it is missing,
// tampered with or older than flowTTL.
func (s *sso) readCookie(c *fiber.Ctx, name string, v any) bool {
	value := c.Cookies(name)
	return value != "" && s.cookies.Decode(name, value, v) == nil
}

// clearCookie removes the cookie name from the browser.
func (s *sso) clearCookie(c *fiber.Ctx, name string) {
	c.Cookie(&fiber.Cookie{Name: name, Value: "", Path: ssoCookiePath, MaxAge: -1, Expires: time.Unix(1, 0),
		HTTPOnly: true, Secure: s.secure, SameSite: fiber.CookieSameSiteLaxMode})
}

// claims are what Knobs reads of an ID token beyond the standard ones.
type claims struct {
	Email         string
	EmailVerified bool
	Groups        []string
}

// readClaims reads the email, whether the provider verified it, and the
// groups claim named groupsClaim: a list of names or one name.
func readClaims(raw map[string]json.RawMessage, groupsClaim string) claims {
	var out claims
	_ = json.Unmarshal(raw["email"], &out.Email)
	out.Email = strings.ToLower(strings.TrimSpace(out.Email))
	// Some providers send "true" as a string. Microsoft Entra sends no
	// email_verified; its optional claim xms_edov says the email's domain
	// is verified by its owner.
	isTrue := func(name string) bool {
		var v any
		_ = json.Unmarshal(raw[name], &v)
		return v == true || v == "true"
	}
	out.EmailVerified = isTrue("email_verified")
	if _, ok := raw["email_verified"]; !ok {
		out.EmailVerified = isTrue("xms_edov")
	}
	if g, ok := raw[groupsClaim]; ok {
		if json.Unmarshal(g, &out.Groups) != nil {
			var one string
			if json.Unmarshal(g, &one) == nil && one != "" {
				out.Groups = []string{one}
			}
		}
	}
	return out
}

// domainAllowed reports whether email's domain gets an account at a first
// sign-in.
func (s *sso) domainAllowed(email string) bool {
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return false
	}
	domain := email[at+1:]
	allowed := strings.Split(s.cfg.AllowedDomains, ",")
	return s.cfg.AllowedDomains != "" && (slices.Contains(allowed, "*") || slices.Contains(allowed, domain))
}

// inAdminGroup reports whether groups include the admin group.
func (s *sso) inAdminGroup(groups []string) bool {
	return s.cfg.AdminGroup != "" && slices.Contains(groups, s.cfg.AdminGroup)
}

var notInUsername = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// usernameFor makes a username from an email's local part.
func usernameFor(email string) string {
	local, _, _ := strings.Cut(email, "@")
	name := strings.Trim(notInUsername.ReplaceAllString(local, "."), ".-_")
	if len(name) > maxUsername-12 { // room for a suffix that makes it unique
		name = name[:maxUsername-12]
	}
	if name == "" {
		name = "user"
	}
	return name
}

// randomToken returns 256 random bits, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ssoView is the sign-on button for the sign-in and sign-up pages;
// zero when single sign-on is off.
func (h *Handler) ssoView() views.SSO {
	return views.SSO{On: h.sso != nil, Name: h.cfg.OIDC.Name, PasswordOff: !h.cfg.PasswordLogin}
}

// RequirePasswordLogin refuses the password sign-in and sign-up forms'
// posts when password sign-in is switched off.
func (h *Handler) RequirePasswordLogin(c *fiber.Ctx) error {
	if h.cfg.PasswordLogin {
		return c.Next()
	}
	return fiber.NewError(fiber.StatusForbidden, "Password sign-in is switched off on this Knobs: sign in with "+h.cfg.OIDC.Name+".")
}

// cappedTransport cuts every answer of the provider at maxIdPBody.
type cappedTransport struct{ base http.RoundTripper }

func (t cappedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		resp.Body = cappedBody{io.LimitReader(resp.Body, maxIdPBody), resp.Body}
	}
	return resp, err
}

type cappedBody struct {
	io.Reader
	io.Closer
}

// errSSO is a refused single sign-on: the status and what the user reads.
func errSSO(status int, msg string) error {
	return fiber.NewError(status, msg+" Nothing was changed; start again from the sign-in page.")
}

// ssoFailure words why an ID token failed verification.
func ssoFailure(err error) string {
	var expired *oidc.TokenExpiredError
	switch msg := err.Error(); {
	case errors.As(err, &expired):
		return "The sign-in token from the identity provider has expired."
	case strings.Contains(msg, "audience"):
		return "The sign-in token from the identity provider was issued for another application, not this Knobs."
	case strings.Contains(msg, "issued by a different provider"):
		return "The sign-in token was issued by another identity provider than the one this Knobs trusts."
	default:
		return "The sign-in token from the identity provider could not be verified."
	}
}
