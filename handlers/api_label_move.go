package handlers

import (
	"context"
	"errors"
	"strconv"

	"knobs/db"
	"knobs/field"
	"knobs/preset"
)

// MoveLabelInput is PUT /api/v1/presets/{id}/labels/{label}.
type MoveLabelInput struct {
	ID    int64  `path:"id" minimum:"1" doc:"The preset's id."`
	Label string `path:"label" maxLength:"32" doc:"The label: 1 to 32 of a-z, 0-9, ., - and _."`
	Body  struct {
		Version   int   `json:"version" minimum:"1" doc:"The version the label points at from now on."`
		Protected *bool `json:"protected,omitempty" doc:"Protect the label (only the preset's owner or an admin then moves it), or stop protecting it; unchanged when absent. Only the owner or an admin sets it."`
	}
}

// LabelOutput answers a label.
type LabelOutput struct {
	Body LabelItem
}

// MoveAPILabel points a label of a preset at one of its versions, making
// it if the preset has none of that name, and records the move.
func (h *Handler) MoveAPILabel(ctx context.Context, in *MoveLabelInput) (*LabelOutput, error) {
	u := apiUser(ctx)
	name, msg := preset.LabelName(in.Label)
	if msg != "" {
		return nil, apiInvalid(field.Errors{"label": msg})
	}
	l, err := h.store.MovePresetLabel(ctx, u.ID, u.IsAdmin(), db.LabelChange{PresetID: in.ID, Label: name, Version: in.Body.Version, Protect: in.Body.Protected})
	if errors.Is(err, db.ErrNoVersion) {
		return nil, apiInvalid(field.Errors{"version": "The preset has no version " + strconv.Itoa(in.Body.Version) + "."})
	}
	if errors.Is(err, db.ErrForbidden) {
		return nil, &Problem{Status: 403, Message: "Only the preset's owner or an admin protects a label or stops protecting it."}
	}
	if err != nil {
		return nil, presetProblem(err)
	}
	return &LabelOutput{Body: labelItems([]db.PresetLabel{l})[0]}, nil
}
