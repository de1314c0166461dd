package handlers

import (
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/field"
)

// CreateInvite makes a single-use invite link and shows it once.
func (h *Handler) CreateInvite(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	days, err := strconv.Atoi(c.FormValue("days"))
	if err != nil || days < 1 || days > 30 {
		return h.renderSettings(c, fiber.StatusUnprocessableEntity, field.Errors{"days": "Choose 1 to 30 days."}, "")
	}
	token, err := h.store.CreateInvite(ctx(c), u.ID, time.Duration(days)*24*time.Hour)
	if err != nil {
		return err
	}
	return h.renderSettings(c, fiber.StatusOK, nil, c.BaseURL()+"/signup?invite="+token)
}
