package handlers

import (
	"context"
)

// CreatePresetInput is POST /api/v1/presets: a preset file.
type CreatePresetInput struct {
	Body struct {
		PresetFile
		Visibility string `json:"visibility,omitempty" enum:"private,team" doc:"Who sees it: private (you) by default, or team."`
	}
}

// PresetOutput answers a preset as the list shows it.
type PresetOutput struct {
	Body PresetSummary
}

// CreateAPIPreset saves a preset file as a new preset of the caller's,
// version 1, by the rules of the page's import; nothing is saved when a
// field is wrong (422).
func (h *Handler) CreateAPIPreset(ctx context.Context, in *CreatePresetInput) (*PresetOutput, error) {
	u := apiUser(ctx)
	p, fe, err := h.presetFileInput(ctx, u.ID, in.Body.PresetFile, in.Body.Visibility)
	if err != nil {
		return nil, err
	}
	if !fe.Empty() {
		return nil, apiInvalid(fe)
	}
	saved, err := h.store.CreatePreset(ctx, p)
	if err != nil {
		return nil, err
	}
	return &PresetOutput{Body: presetSummary(saved, nil)}, nil
}
