package handlers

import (
	"strconv"

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
	datasets, err := h.store.Datasets(ctx(c), u.ID)
	if err != nil {
		return err
	}
	for _, d := range datasets {
		v.Datasets = append(v.Datasets, views.DatasetChoice{ID: d.ID, Name: d.Name, Version: d.Version, Rows: d.Rows})
	}
	presets, err := h.store.PresetNames(ctx(c), u.ID)
	if err != nil {
		return err
	}
	for _, p := range presets {
		v.Presets = append(v.Presets, views.KeyValue{Key: strconv.FormatInt(p.ID, 10), Value: p.Name})
	}
	return Render(c, status, views.NewArenaPage(v))
}
