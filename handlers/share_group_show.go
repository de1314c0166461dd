package handlers

import (
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// sharedPane is one pane of a shared comparison.
type sharedPane struct {
	Pane     int             `json:"pane"`
	Run      int64           `json:"run"`
	Provider string          `json:"provider"`
	Model    string          `json:"model"`
	Endpoint string          `json:"endpoint"`
	Spec     json.RawMessage `json:"spec"`
	Status   string          `json:"status"`
	Metrics  json.RawMessage `json:"metrics"`
}

// sharedComparison is what GET /g/:token answers.
type sharedComparison struct {
	Title     string       `json:"title"`
	CreatedAt time.Time    `json:"created_at"`
	Panes     []sharedPane `json:"panes"`
	Replay    string       `json:"replay"`
}

// ShowSharedGroup answers a shared comparison: to a browser (Accept:
// text/html) the read-only compare page that replays it, to anything
// else JSON with each pane's provider, model, spec, status and metrics;
// never a key.
func (h *Handler) ShowSharedGroup(c *fiber.Ctx) error {
	g, runs, _, ok, err := h.sharedGroup(c)
	if err != nil {
		return err
	}
	if !ok {
		if strings.Contains(c.Get(fiber.HeaderAccept), fiber.MIMETextHTML) {
			return c.Redirect("/login?next="+url.QueryEscape(c.OriginalURL()), fiber.StatusSeeOther)
		}
		return fiber.NewError(fiber.StatusUnauthorized, "Sign in first.")
	}
	if wantsHTML(c) {
		return h.showSharedGroupPage(c, g, runs)
	}
	out := sharedComparison{Title: g.Title, CreatedAt: g.CreatedAt, Panes: []sharedPane{}, Replay: "/g/" + c.Params("token") + "/replay"}
	for _, r := range runs {
		var res struct {
			Metrics json.RawMessage `json:"metrics"`
		}
		_ = json.Unmarshal([]byte(r.Result), &res) // a broken checkpoint has no metrics
		if res.Metrics == nil {
			res.Metrics = json.RawMessage(`{}`)
		}
		spec := json.RawMessage(r.Spec)
		if !json.Valid(spec) {
			spec = json.RawMessage(`{}`)
		}
		out.Panes = append(out.Panes, sharedPane{Pane: r.Pane, Run: r.ID, Provider: r.Provider, Model: r.Model, Endpoint: r.Endpoint,
			Spec: spec, Status: r.Status, Metrics: res.Metrics})
	}
	c.Set("Cache-Control", "private, no-store")
	return c.JSON(out)
}
