package handlers

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/llm"
	"knobs/views"
)

// ShowPresetsPage lists the user's presets and the team's, most recently
// used first, searchable by name and tag.
func (h *Handler) ShowPresetsPage(c *fiber.Ctx) error {
	return h.renderPresets(c, fiber.StatusOK, nil)
}

func (h *Handler) renderPresets(c *fiber.Ctx, status int, errs field.Errors) error {
	u, _ := CurrentUser(c)
	q := strings.TrimSpace(c.Query("q"))
	q = clip(q, 100)
	presets, err := h.store.Presets(ctx(c), u.ID, q)
	if err != nil {
		return err
	}
	v := views.PresetsView{Page: h.page(c, "Presets", "presets"), Query: q, Errors: errs}
	if d, err := h.store.DefaultPreset(ctx(c), u.ID); err == nil {
		v.Default = d.ID
	} else if !errors.Is(err, db.ErrNotFound) {
		return err
	}
	labels, err := h.store.VisibleLabels(ctx(c), u.ID)
	if err != nil {
		return err
	}
	for _, p := range presets {
		spec := presetSpec(p)
		row := views.PresetRow{
			ID: p.ID, Name: p.Name, Description: firstLine(p.Description), Tags: p.Tags,
			Owner: p.OwnerName, Mine: p.OwnerID == u.ID, Team: p.Visibility == db.PresetTeam,
			CanEdit: p.OwnerID == u.ID || u.IsAdmin(), Provider: spec.Provider, Model: spec.Model(), Version: p.Version,
		}
		for _, l := range labels[p.ID] {
			row.Labels = append(row.Labels, views.LabelChip{Name: l.Name, Version: l.Version, Protected: l.Protected})
		}
		if !p.LastUsedAt.IsZero() {
			row.LastUsed = when(p.LastUsedAt)
		}
		v.Rows = append(v.Rows, row)
	}
	return Render(c, status, views.PresetsPage(v))
}

// presetSpec decodes a preset's RunSpec; a broken one reads as empty.
func presetSpec(p db.Preset) llm.RunSpec {
	var s llm.RunSpec
	_ = json.Unmarshal([]byte(p.Spec), &s)
	return s
}
