package handlers

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"knobs/db"
)

// ListPresetsInput is GET /api/v1/presets.
type ListPresetsInput struct {
	PageQuery
	Query string `query:"q" maxLength:"100" doc:"Keep the presets matching every word: \"tag:x\" matches the tag x; any other word a tag equal to it or a name containing it."`
}

// ListPresetsOutput is the answer to GET /api/v1/presets.
type ListPresetsOutput struct {
	Body Page[PresetSummary]
}

// ListAPIPresets lists the caller's presets and the team's with their
// labels, newest first, searchable as the presets page is.
func (h *Handler) ListAPIPresets(ctx context.Context, in *ListPresetsInput) (*ListPresetsOutput, error) {
	before, err := in.before()
	if err != nil {
		return nil, err
	}
	u := apiUser(ctx)
	all, err := h.store.Presets(ctx, u.ID, strings.TrimSpace(in.Query))
	if err != nil {
		return nil, err
	}
	labels, err := h.store.VisibleLabels(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	// A team's presets are few: they are read whole and paged by id, an
	// order that a use of a preset does not change between pages.
	slices.SortFunc(all, func(a, b db.Preset) int { return cmp.Compare(b.ID, a.ID) })
	rows := all[:0]
	for _, p := range all {
		if (before == 0 || p.ID < before) && len(rows) <= in.Limit {
			rows = append(rows, p)
		}
	}
	page := pageOf(in.PageQuery, rows, func(p db.Preset) int64 { return p.ID },
		func(p db.Preset) PresetSummary { return presetSummary(p, labels[p.ID]) })
	return &ListPresetsOutput{Body: page}, nil
}
