package handlers

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"knobs/preset"
)

// ExportPreset answers a preset as a JSON file, with no secret in it.
func (h *Handler) ExportPreset(c *fiber.Ctx) error {
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	b, err := preset.Export(preset.File{Name: p.Name, Description: p.Description, Tags: p.Tags, Variables: p.Variables, Spec: presetSpec(p)})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s.knobs.json"`, fileSlug(p.Name)))
	return c.Send(b)
}

// fileSlug makes a file name out of a preset's name.
func fileSlug(name string) string {
	s := providerSlug(name)
	if s == "" {
		return "preset"
	}
	return s
}
