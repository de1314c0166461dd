package handlers

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/field"
	"knobs/views"
)

// CreateToken makes a personal API token from the Settings form and
// shows it once.
func (h *Handler) CreateToken(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	f := views.TokenForm{Name: c.FormValue("name"), Scope: c.FormValue("scope"), Days: c.FormValue("days")}
	days := -1
	if f.Days == "never" {
		days = 0
	} else if d, err := strconv.Atoi(f.Days); err == nil && d > 0 {
		days = d
	}
	in, fe := h.newTokenInput(u.ID, f.Name, f.Scope, days)
	if !fe.Empty() {
		// The page has other forms with a "name": these messages are the
		// token form's own.
		errs := field.Errors{}
		for k, msg := range fe {
			errs.Add(map[string]string{"name": "token_name", "scope": "token_scope", "expires_in_days": "token_days"}[k], msg)
		}
		return h.renderSettingsView(c, fiber.StatusUnprocessableEntity, views.SettingsView{Errors: errs, TokenForm: f})
	}
	_, secret, err := h.store.CreateToken(ctx(c), in, h.now())
	if err != nil {
		return err
	}
	return h.renderSettingsView(c, fiber.StatusOK, views.SettingsView{NewToken: secret})
}
