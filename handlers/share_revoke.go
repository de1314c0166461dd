package handlers

import (
	"net/url"

	"github.com/gofiber/fiber/v2"
)

// RevokeShare stops a share link from opening. A page script gets
// {"id","revoked"}; a form post goes back where it came from.
func (h *Handler) RevokeShare(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "share link")
	if err != nil {
		return err
	}
	if err := h.store.RevokeShare(ctx(c), u.ID, id); err != nil {
		return err
	}
	h.shared.cut(id) // replays streaming through the link end now
	if wantsJSON(c) {
		return c.JSON(fiber.Map{"id": id, "revoked": true})
	}
	back := "/history"
	if ref, err := url.Parse(c.Get(fiber.HeaderReferer)); err == nil && ref.Host == string(c.Request().Host()) {
		back = safeNext(ref.Path)
	}
	return redirectWith(c, back, "The share link no longer opens.")
}
