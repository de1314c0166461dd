package web

// The recoverer is tested here, inside the package, because no production
// route panics on purpose: the test mounts the app's own recoverer, request
// log and error handler in front of a route that does.

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"

	"knobs/config"
	"knobs/db"
	"knobs/handlers"
	knobslogs "knobs/logs"
	"knobs/vault"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestRecovererTurnsAPanicIntoA500(t *testing.T) {
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "knobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	box, err := vault.New("recover-test-secret-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	log := knobslogs.WithRequests(slog.New(slog.NewTextHandler(&logs, nil))) // as New makes it
	h := handlers.New(handlers.Options{Store: store, Box: box, Config: config.Config{}, Log: log, BcryptCost: 4})

	app := fiber.New(fiber.Config{ErrorHandler: errorHandler(h, log)})
	app.Use(requestID, requestLog(log, nil), recoverer(log), securityHeaders)
	app.Get("/boom", func(c *fiber.Ctx) error { panic("kaboom: secret detail") })
	app.Get("/fine", func(c *fiber.Ctx) error { return c.SendString("fine") })

	boom := httptest.NewRequest("GET", "/boom", nil)
	boom.Header.Set("X-Request-Id", "boom-1")
	resp, err := app.Test(boom, -1)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || !strings.Contains(string(body), "Something went wrong on the server. It has been logged; try again.") {
		t.Errorf("panic: %d %s, want 500 with the safe message", resp.StatusCode, body)
	}
	if strings.Contains(string(body), "kaboom") {
		t.Errorf("the page shows the panic")
	}
	if !strings.Contains(string(body), `<meta name="csrf-token"`) {
		t.Errorf("the 500 page is not in the layout")
	}
	l := logs.String()
	if !strings.Contains(l, "panic serving request") || !strings.Contains(l, "kaboom: secret detail") || !strings.Contains(l, "recover_internal_test.go") {
		t.Errorf("the panic and its stack are not logged:\n%s", l)
	}
	// The panic's line and the request's line carry the request's id, and
	// the request is logged as the 500 it was answered.
	if !regexp.MustCompile(`msg="panic serving request".*request_id=boom-1`).MatchString(l) ||
		!regexp.MustCompile(`msg=request method=GET path=/boom status=500 .*request_id=boom-1`).MatchString(l) {
		t.Errorf("the panic's and the request's lines do not carry the request id and status:\n%s", l)
	}

	resp, err = app.Test(httptest.NewRequest("GET", "/fine", nil), -1)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("after a panic, the next request: %v %v", resp, err)
	}
}
