package handlers

import (
	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/views"
)

// arenaMaxContestants is the most contestants an arena takes, as the
// API says.
const arenaMaxContestants = 8

// ShowNewArenaPage shows the form that makes an arena, with two
// contestants to fill in.
func (h *Handler) ShowNewArenaPage(c *fiber.Ctx) error {
	f := views.ArenaForm{Contestants: make([]views.ContestantForm, 2), Source: "list", Audience: db.SharePublic, Mode: "pregenerated"}
	return h.renderNewArena(c, fiber.StatusOK, f, nil)
}

// renderNewArena shows the form with what was sent and what is wrong
// with it.
func (h *Handler) renderNewArena(c *fiber.Ctx, status int, f views.ArenaForm, errs field.Errors) error {
	u, _ := CurrentUser(c)
	v := views.NewArenaView{Page: h.page(c, "New arena", "arenas"), Form: f, Errors: errs}
	var err error
	if v.Datasets, v.Presets, err = h.sourceChoices(ctx(c), u.ID); err != nil {
		return err
	}
	return Render(c, status, views.NewArenaPage(v))
}
