// Package web is Knobs' Fiber app: every route, the middleware (sessions,
// auth, CSRF, logging, recovery), the error handler and, later, the SSE
// writer.
package web

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/handlers"
	"knobs/logs"
	"knobs/metrics"
	"knobs/web/session"
)

// BodyLimit bounds every request body; the handlers bound a body with its
// variables filled in by the same figure.
const BodyLimit = handlers.MaxBody

// StorageFullMessage is what a user sees when a write fails because the
// disk under the database is full.
const StorageFullMessage = "Knobs' storage is full: nothing new can be saved until an administrator frees disk space. Everything already saved can still be read."

// New builds the app with its middleware and routes.
func New(h *handlers.Handler, sessions *session.Manager, log *slog.Logger) *fiber.App {
	// Lines logged with a request's context carry its id.
	log = logs.WithRequests(log)
	app := fiber.New(fiber.Config{
		AppName:               "Knobs",
		BodyLimit:             BodyLimit,
		ReadTimeout:           30 * time.Second,
		IdleTimeout:           2 * time.Minute,
		WriteTimeout:          0, // SSE streams are long; fasthttp sets the deadline once per response
		DisableStartupMessage: true,
		ErrorHandler:          errorHandler(h, log),
	})
	allowUploads(app)
	// The request line and its count come after the recoverer, so that a
	// request whose handler panicked is logged and counted as its 500.
	app.Use(requestID, requestLog(log, h.Metrics()), recoverer(log), securityHeaders)
	routes(app, h, sessions, log)
	return app
}

// requestID gives the request its id: the X-Request-Id a client or
// proxy sent when it is a sane one (see logs.ValidRequestID), else a new
// one. The answer carries it in X-Request-Id, and every line logged with
// the request's context (c.UserContext(), what handlers pass the store)
// carries it as request_id.
func requestID(c *fiber.Ctx) error {
	id := c.Get(fiber.HeaderXRequestID)
	if !logs.ValidRequestID(id) {
		id = logs.NewRequestID()
	}
	c.Set(fiber.HeaderXRequestID, id)
	c.SetUserContext(logs.WithRequestID(c.UserContext(), id))
	return c.Next()
}

// recoverer turns a panic in a handler into a 500 and a logged stack.
func recoverer(log *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) (err error) {
		defer func() {
			if r := recover(); r != nil {
				log.ErrorContext(c.UserContext(), "panic serving request", "method", c.Method(), "path", logPath(c), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = fiber.NewError(fiber.StatusInternalServerError, "")
			}
		}()
		return c.Next()
	}
}

// requestLog writes one line per request, and counts it in the metrics
// by its route's pattern; it never logs bodies or query strings.
func requestLog(log *slog.Logger, m *metrics.Metrics) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		status := c.Response().StatusCode()
		var fe *fiber.Error
		switch {
		case errors.As(err, &fe):
			status = fe.Code
		case errors.Is(err, db.ErrNotFound):
			status = fiber.StatusNotFound
		case db.IsFull(err):
			status = fiber.StatusInsufficientStorage
		case err != nil:
			status = fiber.StatusInternalServerError
		}
		log.InfoContext(c.UserContext(), "request", "method", c.Method(), "path", logPath(c), "status", status,
			"ms", float64(time.Since(start).Microseconds())/1000, "addr", c.IP())
		m.Request(methodLabel(c.Method()), routeLabel(c, status), status)
		return err
	}
}

// methodLabel is method as a label value: one of the constants, since
// Fiber's strings point into buffers it reuses for the next request, and
// a label value is kept.
func methodLabel(method string) string {
	for _, m := range []string{fiber.MethodGet, fiber.MethodPost, fiber.MethodPut, fiber.MethodDelete, fiber.MethodPatch, fiber.MethodHead, fiber.MethodOptions} {
		if method == m {
			return m
		}
	}
	return "other"
}

// routeLabel is the pattern of the route that answered c (/runs/:id),
// never its path: ids and share tokens must not become label values. A
// request answered by a middleware (a sign-in redirect, a CSRF refusal)
// or by no route at all has no pattern of its own.
func routeLabel(c *fiber.Ctx, status int) string {
	r := c.Route()
	switch {
	case r == nil:
		return "unmatched"
	case r.Method != "USE":
		return r.Path
	case strings.HasPrefix(r.Path, "/static"):
		return "/static/*"
	case status == fiber.StatusNotFound:
		return "unmatched"
	}
	return "middleware"
}

// logPath is the path as logs may show it: the route's pattern for share
// links (/s/:token), whose paths are credentials, the path otherwise.
func logPath(c *fiber.Ctx) string {
	p := c.Path()
	for _, prefix := range []string{"/s/", "/p/", "/g/", "/e/", "/a/", "/r/", "/reset/"} {
		if strings.HasPrefix(p, prefix) {
			return prefix + ":token" + tail(p[len(prefix):])
		}
	}
	return p
}

// tail is what follows the first segment of p: "tok/open" -> "/open".
func tail(p string) string {
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[i:]
	}
	return ""
}

func securityHeaders(c *fiber.Ctx) error {
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("X-Frame-Options", "DENY")
	// Share links carry their token in the path: never send it elsewhere.
	c.Set("Referrer-Policy", "same-origin")
	c.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	return c.Next()
}

// csrf refuses a state-changing request that does not carry the session's
// token, as the X-CSRF-Token header or the _csrf form field.
func csrf(c *fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return c.Next()
	}
	token := c.Get("X-CSRF-Token")
	if token == "" && !strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEApplicationJSON) {
		token = c.FormValue("_csrf")
	}
	if !session.From(c).CheckCSRF(token) {
		return fiber.NewError(fiber.StatusForbidden, "This form has expired or did not come from Knobs. Reload the page and try again.")
	}
	return c.Next()
}

// errorHandler is the one place errors become answers: a safe message for
// the user, the cause in the log.
func errorHandler(h *handlers.Handler, log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		status, msg, problem, logAs := describe(err)
		if logAs != "" {
			log.ErrorContext(c.UserContext(), logAs, "method", c.Method(), "path", logPath(c), "err", err)
		}
		if wantsJSON(c) {
			out := errorAnswer{Error: msg}
			if problem != nil {
				out.Fields, out.Panes, out.Budget = problem.Fields, problem.Panes, problem.Budget
			}
			return c.Status(status).JSON(out)
		}
		if problem != nil && !problem.Fields.Empty() {
			msg += " " + problem.Fields.Describe()
		}
		heading := headings[status]
		if heading == "" {
			heading = "Something went wrong"
		}
		if rerr := h.ErrorPage(c, status, heading, msg); rerr != nil {
			log.ErrorContext(c.UserContext(), "rendering error page", "err", rerr)
			return c.Status(status).SendString(msg)
		}
		return nil
	}
}

// describe is what a user is told of err: the status, a safe message,
// the Problem when err is one, and the line to log the cause under when
// it is not the user's to know ("" when there is nothing to log). Pages
// and the API (apiErrorWithContext) both answer by it.
func describe(err error) (status int, msg string, problem *handlers.Problem, logAs string) {
	status, msg = fiber.StatusInternalServerError, "Something went wrong on the server. It has been logged; try again."
	var fe *fiber.Error
	switch {
	case errors.As(err, &problem):
		status, msg = problem.Status, problem.Message
	case errors.As(err, &fe):
		status, msg = fe.Code, fe.Message
		switch status {
		case fiber.StatusNotFound:
			if msg == "" || strings.HasPrefix(msg, "Cannot ") || msg == "Not Found" {
				msg = "There is nothing at this address."
			}
		case fiber.StatusRequestEntityTooLarge:
			msg = fmt.Sprintf("The request is too large: Knobs accepts at most %d MB.", BodyLimit>>20)
		case fiber.StatusInternalServerError:
			msg = "Something went wrong on the server. It has been logged; try again."
		}
	case errors.Is(err, db.ErrNotFound):
		status, msg = fiber.StatusNotFound, "There is nothing at this address."
	case db.IsFull(err):
		// Nothing the user can fix by trying again: say what is wrong,
		// and that what is stored is safe to read.
		status, msg, logAs = fiber.StatusInsufficientStorage, StorageFullMessage, "storage is full"
	default:
		logAs = "request failed"
	}
	return status, msg, problem, logAs
}

// errorAnswer is every error as JSON: a message for the user and, for
// input that was wrong, what is wrong with each field (or pane).
type errorAnswer struct {
	Error  string                  `json:"error"`
	Fields field.Errors            `json:"fields,omitempty"`
	Panes  []handlers.PaneFields   `json:"panes,omitempty"`
	Budget *handlers.BudgetRefusal `json:"budget,omitempty"`
}

var headings = map[int]string{
	fiber.StatusBadRequest:            "Bad request",
	fiber.StatusUnauthorized:          "Sign in first",
	fiber.StatusForbidden:             "Not allowed",
	fiber.StatusNotFound:              "Not found",
	fiber.StatusMethodNotAllowed:      "Not allowed",
	fiber.StatusRequestEntityTooLarge: "Too large",
	fiber.StatusUnprocessableEntity:   "Invalid input",
	fiber.StatusTooManyRequests:       "Too many requests",
	fiber.StatusInsufficientStorage:   "Storage is full",
}

// wantsJSON reports whether c is answered in JSON: every API request, an
// arena's voting calls (/a/{token}/…, whose answers are JSON), and a
// page's script that sends or asks for JSON.
func wantsJSON(c *fiber.Ctx) bool {
	return strings.HasPrefix(c.Path(), APIPrefix+"/") || strings.HasPrefix(c.Path(), "/a/") && strings.Count(c.Path(), "/") >= 3 ||
		strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEApplicationJSON) ||
		strings.HasPrefix(c.Get(fiber.HeaderAccept), fiber.MIMEApplicationJSON)
}
