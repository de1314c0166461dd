package handlers

import (
	"context"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/views"
)

// Healthz answers 200 when the database answers, 503 otherwise: the
// process is alive. /readyz says whether it should get traffic.
func (h *Handler) Healthz(c *fiber.Ctx) error {
	if err := h.store.Ping(ctx(c)); err != nil {
		h.log.ErrorContext(ctx(c), "health check failed", "err", err)
		return c.Status(fiber.StatusServiceUnavailable).SendString("database unreachable\n")
	}
	return c.SendString("ok\n")
}

// readyTimeout bounds the readiness probe's write: a writer held that
// long is as good as unwritable to the requests waiting behind it.
const readyTimeout = 5 * time.Second

// readyFresh is how long a readiness probe's answer is reused: the
// probe takes the database's single writer, so a flood of /readyz (it
// needs no sign-in) must not queue a write per request in front of the
// runs'.
const readyFresh = time.Second

// readiness shares one write probe between the /readyz requests of a
// second: concurrent ones wait for the probe in progress.
type readiness struct {
	mu  sync.Mutex
	at  time.Time
	err error
}

// Readyz answers 200 when Knobs can take traffic: it is not shutting
// down and the database takes a write (a probe that keeps nothing, see
// db.CheckWritable, made at most once a second). Otherwise 503, with the
// reason.
func (h *Handler) Readyz(c *fiber.Ctx) error {
	select {
	case <-h.stopping:
		return c.Status(fiber.StatusServiceUnavailable).SendString("not ready: Knobs is shutting down\n")
	default:
	}
	r := &h.ready
	r.mu.Lock()
	if r.at.IsZero() || time.Since(r.at) >= readyFresh {
		probe, cancel := context.WithTimeout(ctx(c), readyTimeout)
		r.err = h.store.CheckWritable(probe)
		cancel()
		r.at = time.Now()
		h.metrics.ReadyProbe(r.err == nil)
		if r.err != nil {
			h.log.WarnContext(ctx(c), "readiness check failed: the database cannot be written", "err", r.err)
		}
	}
	err := r.err
	r.mu.Unlock()
	if err != nil {
		return c.Status(fiber.StatusServiceUnavailable).SendString("not ready: the database cannot be written (is the disk full or read-only?)\n")
	}
	return c.SendString("ready\n")
}

// ErrorPage renders a 4xx or 5xx page; the web layer's error handler calls it.
func (h *Handler) ErrorPage(c *fiber.Ctx, status int, heading, message string) error {
	return Render(c, status, views.ErrorPage(views.ErrorView{Page: h.page(c, heading, ""), Status: status, Heading: heading, Message: message}))
}
