// Package session keeps who is signed in, and the CSRF token, in a signed
// and encrypted cookie (gorilla/sessions), behind a small API that handlers
// use without touching net/http.
package session

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gorilla/sessions"

	"knobs/vault"
)

// CookieName is the name of Knobs' session cookie.
const CookieName = "knobs_session"

const localsKey = "knobs.session"

// Session is the state kept in the cookie. Who is signed in is not: the
// cookie carries the token of a session kept on the server (db.Store's
// sessions), so that ending it there (sign-out, a password change, a
// removed member) ends every copy of the cookie at once.
type Session struct {
	Token string // the server-side session's token; "" when signed out
	CSRF  string
	Flash string // a one-time message shown on the next page
	dirty bool
}

// SignIn records the server-side session token and rotates the CSRF token.
func (s *Session) SignIn(token string) {
	s.Token, s.CSRF, s.dirty = token, newToken(), true
}

// SignOut forgets the session and rotates the CSRF token.
func (s *Session) SignOut() {
	s.Token, s.CSRF, s.dirty = "", newToken(), true
}

// SetFlash keeps msg for the next page shown.
func (s *Session) SetFlash(msg string) { s.Flash, s.dirty = msg, true }

// TakeFlash returns the pending message and clears it.
func (s *Session) TakeFlash() string {
	msg := s.Flash
	if msg != "" {
		s.Flash, s.dirty = "", true
	}
	return msg
}

// CheckCSRF reports whether token is this session's CSRF token.
func (s *Session) CheckCSRF(token string) bool {
	return s.CSRF != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.CSRF)) == 1
}

// From returns the request's session; the Manager's middleware put it there.
func From(c *fiber.Ctx) *Session {
	if s, ok := c.Locals(localsKey).(*Session); ok {
		return s
	}
	return &Session{}
}

// Manager loads the session before a request and saves it after.
type Manager struct {
	store *sessions.CookieStore
}

// NewManager derives the cookie's signing and encryption keys from secret.
func NewManager(secret string, secure bool) *Manager {
	store := sessions.NewCookieStore(vault.Derive(secret, "session-hash", 64), vault.Derive(secret, "session-block", 32))
	// The store's defaults (SameSite=None, HttpOnly=false) are wrong for us.
	store.Options = &sessions.Options{
		Path:     "/",
		MaxAge:   30 * 24 * 3600,
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
	}
	return &Manager{store: store}
}

// Middleware loads the session into the request, gives it a CSRF token if
// it has none, and writes the cookie back when the handler changed it. A
// cookie that fails to decode (tampered, from an old secret) is replaced by
// a fresh, signed-out session.
func (m *Manager) Middleware(c *fiber.Ctx) error {
	s := &Session{}
	if c.Cookies(CookieName) != "" {
		if r, err := adaptor.ConvertRequest(c, false); err == nil {
			if gs, err := m.store.Get(r, CookieName); err == nil {
				s.Token, _ = gs.Values["sid"].(string)
				s.CSRF, _ = gs.Values["csrf"].(string)
				s.Flash, _ = gs.Values["flash"].(string)
			}
		}
	}
	if s.CSRF == "" {
		s.CSRF, s.dirty = newToken(), true
	}
	c.Locals(localsKey, s)
	err := c.Next()
	if s.dirty {
		if serr := m.save(c, s); serr != nil && err == nil {
			err = serr
		}
	}
	return err
}

func (m *Manager) save(c *fiber.Ctx, s *Session) error {
	gs := sessions.NewSession(m.store, CookieName)
	opts := *m.store.Options
	gs.Options = &opts
	gs.IsNew = false
	gs.Values["sid"] = s.Token
	gs.Values["csrf"] = s.CSRF
	if s.Flash != "" {
		gs.Values["flash"] = s.Flash
	}
	w := &headerWriter{h: http.Header{}}
	if err := m.store.Save(nil, w, gs); err != nil {
		return err
	}
	for _, v := range w.h.Values("Set-Cookie") {
		c.Response().Header.Add(fiber.HeaderSetCookie, v)
	}
	return nil
}

// headerWriter collects the Set-Cookie headers gorilla writes.
type headerWriter struct{ h http.Header }

func (w *headerWriter) Header() http.Header         { return w.h }
func (w *headerWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *headerWriter) WriteHeader(int)             {}

func newToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return strings.TrimRight(base64.RawURLEncoding.EncodeToString(b), "=")
}
