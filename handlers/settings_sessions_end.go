package handlers

import (
	"github.com/gofiber/fiber/v2"

	"knobs/web/session"
)

// SignOutEverywhere ends every session of the user, this one included.
func (h *Handler) SignOutEverywhere(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	n, err := h.store.RemoveUserSessions(ctx(c), u.ID, "")
	if err != nil {
		return err
	}
	h.log.InfoContext(ctx(c), "signed out everywhere", "user", u.Username, "sessions", n)
	s := session.From(c)
	s.SignOut()
	s.SetFlash("You are signed out on every device.")
	return c.Redirect("/login", fiber.StatusSeeOther)
}
