package handlers

import (
	"context"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
)

// tokenKey holds the db.Token a bearer request came with.
const tokenKey = "knobs.token"

// TokenAuth authenticates an /api/v1 request that carries
// "Authorization: Bearer knobs_…" as the token's user, read afresh with
// the token so that a demotion counts at once. A bad, revoked or expired
// token is 401; a read token on anything but a read is 403. A request
// without the header goes on to the session cookie's checks.
func (h *Handler) TokenAuth(c *fiber.Ctx) error {
	auth := c.Get(fiber.HeaderAuthorization)
	if auth == "" {
		return c.Next()
	}
	c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="knobs"`)
	scheme, secret, _ := strings.Cut(auth, " ")
	secret = strings.TrimSpace(secret)
	if !strings.EqualFold(scheme, "Bearer") || !strings.HasPrefix(secret, db.TokenPrefix) {
		return fiber.NewError(fiber.StatusUnauthorized, "Send a personal API token as \"Authorization: Bearer knobs_…\"; make one in Settings → API tokens.")
	}
	u, t, err := h.store.TokenUser(ctx(c), secret, h.now())
	if errors.Is(err, db.ErrTokenInvalid) {
		return fiber.NewError(fiber.StatusUnauthorized, "This API token is unknown, revoked or expired; make a new one in Settings → API tokens.")
	}
	if err != nil {
		return err
	}
	if t.Scope != db.ScopeWrite && !safeMethod(c.Method()) && !readingPost(c) {
		return fiber.NewError(fiber.StatusForbidden, "This API token may only read; use a token with the write scope to change anything.")
	}
	c.Locals(userKey, u)
	c.Locals(tokenKey, t)
	return c.Next()
}

// ByToken reports whether the request was authenticated by a bearer
// token (it then needs no CSRF token, and its cookie is not read).
func ByToken(c *fiber.Ctx) bool {
	_, ok := c.Locals(tokenKey).(db.Token)
	return ok
}

// RequireAPIUser refuses an API request that is neither signed in nor
// carries a token, with 401.
func (h *Handler) RequireAPIUser(c *fiber.Ctx) error {
	if _, ok := CurrentUser(c); ok {
		return c.Next()
	}
	c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="knobs"`)
	return fiber.NewError(fiber.StatusUnauthorized, "Sign in first, or send a personal API token as \"Authorization: Bearer knobs_…\".")
}

// readingPost reports whether c is a POST that only reads, which a read
// token may make: rendering a preset.
func readingPost(c *fiber.Ctx) bool {
	return c.Method() == fiber.MethodPost && strings.HasPrefix(c.Path(), "/api/v1/presets/") && strings.HasSuffix(c.Path(), "/render")
}

func safeMethod(m string) bool {
	return m == fiber.MethodGet || m == fiber.MethodHead || m == fiber.MethodOptions
}

// apiUser is the user an API operation runs as. Fiber's locals reach an
// operation's context through the huma adapter (humafiber copies them).
func apiUser(ctx context.Context) db.User {
	u, _ := ctx.Value(userKey).(db.User)
	return u
}

// apiInvalid refuses an API request whose fields are wrong (422).
func apiInvalid(fe field.Errors) error {
	return &Problem{Status: fiber.StatusUnprocessableEntity, Message: "Nothing was changed: fix the fields named in \"fields\".", Fields: fe}
}

// apiNotFound is a 404 for an id that is not the caller's or does not
// exist: the two are not told apart.
func apiNotFound(what string) error {
	return &Problem{Status: fiber.StatusNotFound, Message: "There is no such " + what + "."}
}
