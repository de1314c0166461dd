package handlers

import (
	"encoding/json"
	"errors"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/llm"
	"knobs/preset"
)

// presetSave is what the playground sends to save a preset.
type presetSave struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Tags        string            `json:"tags"`
	Visibility  string            `json:"visibility"`
	Spec        llm.RunSpec       `json:"spec"`
	Variables   map[string]string `json:"variables"`
	// Version is the version the playground loaded; a save over a newer
	// one is refused rather than silently losing someone's change.
	Version int `json:"version"`
}

// savedPreset answers a save.
type savedPreset struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Version int    `json:"version"`
}

func readPresetSave(c *fiber.Ctx) (presetSave, error) {
	var in presetSave
	if err := json.Unmarshal(c.Body(), &in); err != nil {
		return in, errors.New("The preset is not valid JSON: " + err.Error())
	}
	if !in.Spec.Endpoint.Valid() || len(in.Spec.Body) == 0 {
		return in, errors.New(`The preset needs a spec: {"provider", "endpoint", "body"}.`)
	}
	return in, nil
}

// createPreset stores p as a new preset once it passes the preset rules;
// otherwise fe says what is wrong and nothing is stored.
func (h *Handler) createPreset(c *fiber.Ctx, p db.Preset) (saved db.Preset, fe field.Errors, err error) {
	p, fe = preset.Normalize(p)
	if !fe.Empty() {
		return db.Preset{}, fe, nil
	}
	saved, err = h.store.CreatePreset(ctx(c), p)
	return saved, nil, err
}

// updatePreset saves p over its preset, as the signed-in user, once it
// passes the preset rules; otherwise fe says what is wrong.
func (h *Handler) updatePreset(c *fiber.Ctx, p db.Preset) (saved db.Preset, fe field.Errors, err error) {
	u, _ := CurrentUser(c)
	p, fe = preset.Normalize(p)
	if !fe.Empty() {
		return db.Preset{}, fe, nil
	}
	saved, err = h.store.UpdatePreset(ctx(c), u.ID, u.IsAdmin(), p)
	return saved, nil, err
}

// invalidPreset refuses a preset that does not pass the preset rules.
func invalidPreset(fe field.Errors) error {
	return invalid("The preset was not saved: fix the fields marked.", fe)
}

// CreatePreset saves the playground's setup as a new preset ("Save as new").
func (h *Handler) CreatePreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	in, err := readPresetSave(c)
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	spec, _ := json.Marshal(in.Spec)
	vis := in.Visibility
	if vis == "" {
		vis = db.PresetPrivate
	}
	p, fe, err := h.createPreset(c, db.Preset{
		OwnerID: u.ID, Name: in.Name, Description: in.Description, Tags: preset.ParseTags(in.Tags),
		Visibility: vis, Spec: string(spec), Variables: in.Variables,
	})
	if !fe.Empty() {
		return invalidPreset(fe)
	}
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(savedPreset{ID: p.ID, Name: p.Name, Version: p.Version})
}

// UpdatePreset saves the playground's setup over the loaded preset ("Save"),
// keeping the previous version.
func (h *Handler) UpdatePreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "preset")
	if err != nil {
		return err
	}
	in, err := readPresetSave(c)
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	cur, err := h.store.Preset(ctx(c), u.ID, id)
	if err != nil {
		return err
	}
	// Without the version it builds on, a save cannot tell whether it
	// would overwrite someone's newer one (the store takes version 0 as
	// "whatever is current", for the settings form). Who may not change
	// the preset at all is told that first.
	if in.Version <= 0 && (cur.OwnerID == u.ID || u.IsAdmin()) {
		return fiber.NewError(fiber.StatusConflict, "This save names no version of the preset to build on, so it could overwrite a newer one. Open the preset again, or save yours as a new preset.")
	}
	spec, _ := json.Marshal(in.Spec)
	next := cur
	next.Spec, next.Variables, next.Version = string(spec), in.Variables, in.Version
	if in.Name != "" {
		next.Name = in.Name
	}
	p, fe, err := h.updatePreset(c, next)
	if !fe.Empty() {
		return invalidPreset(fe)
	}
	switch {
	case errors.Is(err, db.ErrForbidden):
		return fiber.NewError(fiber.StatusForbidden, "Only its owner or an admin can change this preset. Save it as a new one instead.")
	case errors.Is(err, db.ErrPresetStale):
		return fiber.NewError(fiber.StatusConflict, "Someone saved this preset since you loaded it. Save yours as a new preset, or open the preset again.")
	}
	if err != nil {
		return err
	}
	return c.JSON(savedPreset{ID: p.ID, Name: p.Name, Version: p.Version})
}
