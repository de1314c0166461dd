package handlers

import (
	"github.com/gofiber/fiber/v2"

	"knobs/markdown"
)

// CodeCSS serves the stylesheet for highlighted code blocks, built once
// from chroma's styles.
func (h *Handler) CodeCSS(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "text/css; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	return c.SendString(markdown.CSS())
}
