package handlers

import "github.com/gofiber/fiber/v2"

// ShowRawResponse answers the provider's answer to a run byte for byte, as
// text, for the raw view.
func (h *Handler) ShowRawResponse(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	raw, err := h.store.RunRawResponse(ctx(c), u.ID, id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	c.Set("Content-Disposition", "inline")
	return c.Send(raw)
}
