package handlers

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"knobs/metrics"
)

// Metrics is what the handlers count and /metrics serves; nil when
// metrics are off.
func (h *Handler) Metrics() *metrics.Metrics { return h.metrics }

// ShowMetrics serves the metrics on the main port, to a scraper that
// sends KNOBS_METRICS_TOKEN as a bearer token. Without that setting the
// route does not exist (404), as for any unknown path: the metrics are
// then served on KNOBS_METRICS_ADDR, or not at all.
func (h *Handler) ShowMetrics(c *fiber.Ctx) error {
	want := h.cfg.MetricsToken
	if want == "" || h.metrics == nil {
		return fiber.ErrNotFound
	}
	got, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
	// Hashed first, so that the comparison takes as long whatever the
	// length of what was sent.
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	if !ok || subtle.ConstantTimeCompare(g[:], w[:]) != 1 {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="knobs-metrics"`)
		return c.Status(fiber.StatusUnauthorized).SendString("The metrics need Authorization: Bearer with KNOBS_METRICS_TOKEN.\n")
	}
	return adaptor.HTTPHandler(h.metrics.Handler())(c)
}
