package handlers

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/gofiber/fiber/v2"
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
