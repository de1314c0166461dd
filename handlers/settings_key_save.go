package handlers

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/vault"
)

// SavePersonalKey stores the user's own key for a provider.
func (h *Handler) SavePersonalKey(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	return h.saveKey(c, u.ID, "personal")
}

// SaveTeamKey stores the team-wide key for a provider (admins only).
func (h *Handler) SaveTeamKey(c *fiber.Ctx) error {
	return h.saveKey(c, db.Team, "team")
}

func (h *Handler) saveKey(c *fiber.Ctx, owner int64, scope string) error {
	provider := c.FormValue("provider")
	ref, err := h.keyedProvider(c, provider)
	if err != nil {
		return err
	}
	key := strings.TrimSpace(c.FormValue("key"))
	if msg := checkKey(key); msg != "" {
		return h.renderSettings(c, fiber.StatusUnprocessableEntity, field.Errors{scope + "-key-" + ref.ID: msg}, "")
	}
	if err := h.store.SetProviderKey(ctx(c), owner, ref.ID, h.box.Seal(key, keyAssociation(owner, ref.ID)), vault.Last4(key)); err != nil {
		return err
	}
	return redirectWith(c, "/settings", "Saved the "+scope+" key for "+ref.Name+".")
}
