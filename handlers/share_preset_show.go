package handlers

import (
	"net/url"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/views"
)

// ShowSharedPreset shows a shared preset read-only.
func (h *Handler) ShowSharedPreset(c *fiber.Ctx) error {
	p, share, err := h.sharedPreset(c)
	if err != nil {
		return err
	}
	_, signedIn := CurrentUser(c)
	if share.Audience == db.ShareTeam && !signedIn {
		return c.Redirect("/login?next="+url.QueryEscape(c.OriginalURL()), fiber.StatusSeeOther)
	}
	v := presetView(p)
	v.Page = h.page(c, p.Name, "")
	v.Shared, v.ShareToken, v.CanCopy = true, share.Token, signedIn
	c.Set("Cache-Control", "private, no-store")
	return Render(c, fiber.StatusOK, views.PresetPage(v))
}
