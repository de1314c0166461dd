package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/llm"
	"knobs/preset"
)

// PresetSummary is a preset as the API lists it.
type PresetSummary struct {
	ID          int64       `json:"id"`
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Tags        []string    `json:"tags" nullable:"false"`
	Visibility  string      `json:"visibility" enum:"private,team"`
	Owner       string      `json:"owner" doc:"The owner's username."`
	Version     int         `json:"version" doc:"The latest version."`
	Labels      []LabelItem `json:"labels" nullable:"false" doc:"The preset's labels, by name."`
	UpdatedAt   time.Time   `json:"updated_at"`
}

// LabelItem is a label of a preset: a name that points at one version.
type LabelItem struct {
	Name      string    `json:"name"`
	Version   int       `json:"version"`
	Protected bool      `json:"protected" doc:"Moved by the preset's owner or an admin only."`
	MovedAt   time.Time `json:"moved_at"`
	MovedBy   string    `json:"moved_by" doc:"Who moved it last; empty once that account is removed."`
}

func labelItems(ls []db.PresetLabel) []LabelItem {
	out := make([]LabelItem, 0, len(ls))
	for _, l := range ls {
		out = append(out, LabelItem{Name: l.Name, Version: l.Version, Protected: l.Protected, MovedAt: l.MovedAt, MovedBy: l.MovedBy})
	}
	return out
}

func presetSummary(p db.Preset, ls []db.PresetLabel) PresetSummary {
	tags := p.Tags
	if tags == nil {
		tags = []string{}
	}
	return PresetSummary{ID: p.ID, Name: p.Name, Description: p.Description, Tags: tags, Visibility: p.Visibility,
		Owner: p.OwnerName, Version: p.Version, Labels: labelItems(ls), UpdatedAt: p.UpdatedAt}
}

// PresetFile is a preset in the export format, as pages export it and
// GET /api/v1/presets/{preset} answers it.
type PresetFile struct {
	Format      string            `json:"format" enum:"knobs-preset"`
	Version     int               `json:"version" enum:"1" doc:"The file format's version (not the preset's)."`
	Name        string            `json:"name" doc:"Up to 100 characters."`
	Description string            `json:"description,omitempty"`
	Tags        []string          `json:"tags,omitempty" maxItems:"20" doc:"Up to 20 of a-z, 0-9, - and _."`
	Variables   map[string]string `json:"variables,omitempty" doc:"Default values of the body's {{placeholders}}, by name."`
	Spec        llm.RunSpec       `json:"spec" doc:"{provider, endpoint, body}: the request as the playground sends it."`
}

// PresetRef is a preset named in a path: its id, or its name.
type PresetRef struct {
	Ref string `path:"preset" maxLength:"100" doc:"The preset's id, or its name: your own preset of that name before a team preset of it."`
}

// apiPreset loads the preset ref names for the caller: 404 when there
// is none they see, 409 when the name names more than one.
func (h *Handler) apiPreset(ctx context.Context, ref string) (db.Preset, error) {
	p, err := h.store.FindPreset(ctx, apiUser(ctx).ID, ref)
	var amb *db.AmbiguousError
	switch {
	case errors.Is(err, db.ErrNotFound):
		return db.Preset{}, apiNotFound("preset")
	case errors.As(err, &amb):
		ids := make([]string, len(amb.IDs))
		for i, id := range amb.IDs {
			ids[i] = strconv.FormatInt(id, 10)
		}
		return db.Preset{}, &Problem{Status: fiber.StatusConflict,
			Message: fmt.Sprintf("%q names more than one preset you see (ids %s): name it by id.", amb.Name, strings.Join(ids, ", "))}
	}
	return p, err
}

// PresetPick is how a request chooses a version of a preset: a label or
// a version, or neither (the production label, else the latest).
type PresetPick struct {
	Label   string `json:"label,omitempty" query:"label" maxLength:"32" doc:"Answer the version this label points at."`
	Version int    `json:"version,omitempty" query:"version" minimum:"0" doc:"Answer this version. Without label or version: the version the production label points at, else the latest."`
}

// apiPresetAt loads the version of p that pick names, and the label
// that chose it.
func (h *Handler) apiPresetAt(ctx context.Context, p db.Preset, pick PresetPick) (db.PresetVersion, string, error) {
	if pick.Label != "" && pick.Version != 0 {
		return db.PresetVersion{}, "", apiInvalid(field.Errors{"label": "Name a label or a version, not both."})
	}
	label := pick.Label
	if label != "" {
		var msg string
		if label, msg = preset.LabelName(label); msg != "" {
			return db.PresetVersion{}, "", apiInvalid(field.Errors{"label": msg})
		}
	}
	v, label, err := h.store.PresetAt(ctx, apiUser(ctx).ID, p, label, pick.Version)
	switch {
	case errors.Is(err, db.ErrNotFound) && pick.Label != "":
		return db.PresetVersion{}, "", apiNotFound("label " + strconv.Quote(pick.Label) + " on this preset")
	case errors.Is(err, db.ErrNotFound):
		return db.PresetVersion{}, "", apiNotFound("version " + strconv.Itoa(pick.Version) + " of this preset")
	}
	return v, label, err
}

// versionFile is a version of a preset as its export file holds it.
func versionFile(v db.PresetVersion) preset.File {
	var spec llm.RunSpec
	_ = json.Unmarshal([]byte(v.Spec), &spec)
	return preset.File{Name: v.Name, Description: v.Description, Tags: v.Tags, Variables: v.Variables, Spec: spec}
}

// exportTag is the ETag of an export: its bytes' hash, so that it
// changes exactly when what a client would read does.
func exportTag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
}

// presetFileInput reads a preset file sent to the API with the rules of
// the page's import (the file format's, then the preset's and the
// spec's), as a preset of owner. Field errors come back in fe.
func (h *Handler) presetFileInput(ctx context.Context, owner int64, in PresetFile, visibility string) (db.Preset, field.Errors, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return db.Preset{}, nil, err
	}
	file, err := preset.Import(raw)
	var ie *preset.ImportError
	if errors.As(err, &ie) {
		return db.Preset{}, field.Errors{"body": ie.Problem}, nil
	} else if err != nil {
		return db.Preset{}, nil, err
	}
	fe, err := h.checkSpec(ctx, file.Spec)
	if err != nil || !fe.Empty() {
		return db.Preset{}, fe, err
	}
	spec, _ := json.Marshal(file.Spec)
	p, fe := preset.Normalize(db.Preset{OwnerID: owner, Name: file.Name, Description: file.Description, Tags: file.Tags,
		Visibility: visibility, Spec: string(spec), Variables: file.Variables})
	return p, fe, nil
}

// checkSpec checks a spec to be saved as a preset as a run would be:
// its provider is one this Knobs has, its body valid for the provider
// and model. Field errors are named as in a preset file ("spec.body").
func (h *Handler) checkSpec(ctx context.Context, spec llm.RunSpec) (field.Errors, error) {
	prov, err := h.findProvider(ctx, spec.Provider)
	if errors.Is(err, errNoProvider) {
		return field.Errors{"spec.provider": "There is no provider " + strconv.Quote(spec.Provider) + "; GET /api/v1/providers lists them."}, nil
	} else if err != nil {
		return nil, err
	}
	fe := field.Errors{}
	for k, v := range llm.Validate(spec, prov.Dialect, modelInfo(prov, spec.Model())) {
		fe.Add("spec."+k, v)
	}
	return fe, nil
}

// presetProblem answers the store's refusals of a change to a preset.
func presetProblem(err error) error {
	switch {
	case errors.Is(err, db.ErrNotFound):
		return apiNotFound("preset")
	case errors.Is(err, db.ErrForbidden):
		return &Problem{Status: fiber.StatusForbidden, Message: "Only its owner or an admin can change this preset."}
	case errors.Is(err, db.ErrPresetStale):
		return &Problem{Status: fiber.StatusConflict, Message: "base_version is not the preset's latest version: someone saved it since. Fetch it again, and send its version as base_version."}
	case errors.Is(err, db.ErrLabelProtected):
		return &Problem{Status: fiber.StatusForbidden, Message: "This label is protected: only the preset's owner or an admin moves it."}
	}
	return err
}

// PresetRun is how a request runs or renders a preset: which one, at
// which label or version, with which variables and body fields changed.
type PresetRun struct {
	Ref       string                     `json:"preset,omitempty" maxLength:"100" doc:"The preset's id or name, instead of provider, endpoint and body."`
	Label     string                     `json:"label,omitempty" maxLength:"32" doc:"Run the version this label of the preset points at."`
	Version   int                        `json:"version,omitempty" minimum:"0" doc:"Run this version of the preset. Without label or version: the production label's, else the latest."`
	Overrides map[string]json.RawMessage `json:"overrides,omitempty" doc:"Top-level body fields to set over the preset's (\"temperature\": 0.2); null removes one."`
}

// presetState is the setup a run of a preset sends: the version's spec
// with the overrides set, its variables' defaults under the values given.
func (h *Handler) presetState(ctx context.Context, in PresetRun, values map[string]string) (playgroundState, error) {
	p, err := h.apiPreset(ctx, in.Ref)
	if err != nil {
		return playgroundState{}, err
	}
	v, _, err := h.apiPresetAt(ctx, p, PresetPick{Label: in.Label, Version: in.Version})
	if err != nil {
		return playgroundState{}, err
	}
	spec := versionFile(v).Spec
	if spec.Body, err = preset.Override(spec.Body, in.Overrides); err != nil {
		return playgroundState{}, apiInvalid(field.Errors{"overrides": "The preset's body cannot take overrides: " + err.Error() + "."})
	}
	vars := map[string]string{}
	for k, val := range v.Variables {
		vars[k] = val
	}
	for k, val := range values {
		vars[k] = val
	}
	if len(vars) == 0 {
		vars = nil
	}
	return playgroundState{RunSpec: spec, PresetID: p.ID, PresetVersion: v.Version, PresetName: v.Name, Variables: vars}, nil
}
