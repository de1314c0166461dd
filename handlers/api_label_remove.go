package handlers

import (
	"context"
	"errors"

	"knobs/db"
	"knobs/preset"
)

// RemoveLabelInput is DELETE /api/v1/presets/{id}/labels/{label}.
type RemoveLabelInput struct {
	ID    int64  `path:"id" minimum:"1" doc:"The preset's id."`
	Label string `path:"label" maxLength:"32" doc:"The label."`
}

// RemoveAPILabel takes a label off a preset, by the rules of a move,
// and records it.
func (h *Handler) RemoveAPILabel(ctx context.Context, in *RemoveLabelInput) (*struct{}, error) {
	u := apiUser(ctx)
	name, _ := preset.LabelName(in.Label)
	err := h.store.RemovePresetLabel(ctx, u.ID, u.IsAdmin(), in.ID, name)
	if errors.Is(err, db.ErrNotFound) {
		if _, perr := h.store.Preset(ctx, u.ID, in.ID); perr == nil {
			return nil, apiNotFound("label " + name + " on this preset")
		}
	}
	return nil, presetProblem(err)
}
