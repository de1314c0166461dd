package handlers

import (
	"net/url"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/views"
)

// ShowSharedRun shows a shared run read-only: the prompt, the parameters,
// the output and the metrics, never a key.
func (h *Handler) ShowSharedRun(c *fiber.Ctx) error {
	run, share, err := h.sharedRun(c)
	if err != nil {
		return err
	}
	_, signedIn := CurrentUser(c)
	if share.Audience == db.ShareTeam && !signedIn {
		return c.Redirect("/login?next="+url.QueryEscape(c.OriginalURL()), fiber.StatusSeeOther)
	}
	v := h.runView(h.readRunLogged(ctx(c), share.OwnerID, run))
	v.Page = h.page(c, "Shared run", "")
	v.Shared, v.ShareToken, v.CanOpen = true, share.Token, signedIn
	v.Note, v.Starred = "", false // the owner's own notes stay theirs
	if owner, err := h.store.User(ctx(c), share.OwnerID); err == nil {
		v.SharedBy = owner.Username
	}
	c.Set("Cache-Control", "private, no-store")
	return Render(c, fiber.StatusOK, views.RunPage(v))
}
