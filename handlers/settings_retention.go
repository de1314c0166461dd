package handlers

import (
	"slices"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/retention"
)

// SetRetention sets how long runs are kept: forever, or one of
// retention.Choices days. Main's purge loop deletes older runs.
func (h *Handler) SetRetention(c *fiber.Ctx) error {
	days, err := strconv.Atoi(c.FormValue("days"))
	if err != nil || !slices.Contains(retention.Choices, days) {
		return h.renderSettings(c, fiber.StatusUnprocessableEntity, field.Errors{"retention": "Choose forever, 7, 30, 90 or 365 days."}, "")
	}
	if err := h.store.SetSetting(ctx(c), db.SettingRetentionDays, strconv.Itoa(days)); err != nil {
		return err
	}
	if days == 0 {
		return redirectWith(c, "/settings", "Runs are now kept forever.")
	}
	return redirectWith(c, "/settings", "Runs are now kept for "+strconv.Itoa(days)+" days; older ones are deleted within the hour.")
}
