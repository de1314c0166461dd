package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// RemovePersonalKey deletes the user's own key for a provider.
func (h *Handler) RemovePersonalKey(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	return h.removeKey(c, u.ID, "personal")
}

// RemoveTeamKey deletes the team-wide key for a provider (admins only).
func (h *Handler) RemoveTeamKey(c *fiber.Ctx) error {
	return h.removeKey(c, db.Team, "team")
}

func (h *Handler) removeKey(c *fiber.Ctx, owner int64, scope string) error {
	ref, err := h.keyedProvider(c, c.FormValue("provider"))
	if err != nil {
		return err
	}
	err = h.store.RemoveProviderKey(ctx(c), owner, ref.ID)
	if errors.Is(err, db.ErrNotFound) {
		return redirectWith(c, "/settings", "There was no "+scope+" key for "+ref.Name+".")
	}
	if err != nil {
		return err
	}
	return redirectWith(c, "/settings", "Removed the "+scope+" key for "+ref.Name+".")
}
