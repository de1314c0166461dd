package handlers

import (
	"bytes"
	"context"

	"knobs/db"
	"knobs/preset"
)

// UpdatePresetInput is PUT /api/v1/presets/{id}: a preset file to save
// as the preset's next version, over the version it was made from.
type UpdatePresetInput struct {
	ID   int64 `path:"id" minimum:"1" doc:"The preset's id."`
	Body struct {
		PresetFile
		BaseVersion int    `json:"base_version" minimum:"1" doc:"The version your file was made from: refused with 409 when another was saved since."`
		Visibility  string `json:"visibility,omitempty" enum:"private,team" doc:"Who sees it; unchanged when absent."`
	}
}

// UpdateAPIPreset saves a preset file as the next version of a preset
// the caller may change (its owner or an admin), unless another version
// was saved after base_version (409). A file equal to the latest version
// adds no version: the answer names the latest.
func (h *Handler) UpdateAPIPreset(ctx context.Context, in *UpdatePresetInput) (*PresetOutput, error) {
	u := apiUser(ctx)
	cur, err := h.store.Preset(ctx, u.ID, in.ID)
	if err != nil {
		return nil, presetProblem(err)
	}
	vis := in.Body.Visibility
	if vis == "" {
		vis = cur.Visibility
	}
	if cur.OwnerID != u.ID && !u.IsAdmin() {
		return nil, presetProblem(db.ErrForbidden)
	}
	if in.Body.BaseVersion != cur.Version {
		return nil, presetProblem(db.ErrPresetStale)
	}
	next, fe, err := h.presetFileInput(ctx, cur.OwnerID, in.Body.PresetFile, vis)
	if err != nil {
		return nil, err
	}
	if !fe.Empty() {
		return nil, apiInvalid(fe)
	}
	// Pushing back what was pulled changes nothing.
	same, err := sameContent(cur, next)
	if err != nil {
		return nil, err
	}
	ls, err := h.store.PresetLabels(ctx, u.ID, cur.ID)
	if err != nil {
		return nil, err
	}
	if same && vis == cur.Visibility {
		return &PresetOutput{Body: presetSummary(cur, ls)}, nil
	}
	next.ID, next.Version = cur.ID, in.Body.BaseVersion
	saved, err := h.store.UpdatePreset(ctx, u.ID, u.IsAdmin(), next)
	if err != nil {
		return nil, presetProblem(err)
	}
	return &PresetOutput{Body: presetSummary(saved, ls)}, nil
}

// sameContent reports whether two presets export to the same file.
func sameContent(a, b db.Preset) (bool, error) {
	ea, err := preset.Export(versionFile(db.PresetVersion{Name: a.Name, Description: a.Description, Tags: a.Tags, Spec: a.Spec, Variables: a.Variables}))
	if err != nil {
		return false, err
	}
	eb, err := preset.Export(versionFile(db.PresetVersion{Name: b.Name, Description: b.Description, Tags: b.Tags, Spec: b.Spec, Variables: b.Variables}))
	return bytes.Equal(ea, eb), err
}
