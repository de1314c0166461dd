package handlers

import (
	"errors"
	"strconv"
	"strings"
	"unicode"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/vault"
)

// keyAssociation binds a sealed key to its row, so it cannot be moved.
func keyAssociation(owner int64, provider string) string {
	return strconv.FormatInt(owner, 10) + "/" + provider
}

// checkKey returns a message when key cannot be an API key.
func checkKey(key string) string {
	switch {
	case key == "":
		return "Paste the key first."
	case len(key) > 512:
		return "That is longer than any API key (at most 512 characters)."
	case strings.IndexFunc(key, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return "An API key has no spaces or line breaks inside."
	}
	return ""
}

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

// keyedProvider finds a provider that takes keys, or answers 404.
func (h *Handler) keyedProvider(c *fiber.Ctx, id string) (Provider, error) {
	refs, err := h.keyedProviders(c)
	if err != nil {
		return Provider{}, err
	}
	if p, ok := providerByID(refs, id); ok {
		return p, nil
	}
	return Provider{}, fiber.NewError(fiber.StatusNotFound, "There is no provider "+strconv.Quote(id)+".")
}
