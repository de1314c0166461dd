package handlers

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/diff"
	"knobs/field"
	"knobs/llm"
	"knobs/preset"
	"knobs/views"
)

// visiblePreset loads the :id preset if the user may see it.
func (h *Handler) visiblePreset(c *fiber.Ctx) (db.Preset, error) {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "preset")
	if err != nil {
		return db.Preset{}, err
	}
	return h.store.Preset(ctx(c), u.ID, id)
}

func presetPath(id int64) string { return "/presets/" + strconv.FormatInt(id, 10) }

func (h *Handler) renderPreset(c *fiber.Ctx, status int, errs field.Errors) error {
	v, err := h.presetPage(c, errs)
	if err != nil {
		return err
	}
	return Render(c, status, views.PresetPage(v))
}

// labelMovesShown bounds the label history a preset's page shows.
const labelMovesShown = 50

// presetPage is the view of the :id preset's page, with errs at their
// fields; callers set what else a page shows (a label form sent back, a
// move to confirm) before rendering it.
func (h *Handler) presetPage(c *fiber.Ctx, errs field.Errors) (views.PresetView, error) {
	u, _ := CurrentUser(c)
	p, err := h.visiblePreset(c)
	if err != nil {
		return views.PresetView{}, err
	}
	v := presetView(p)
	v.Page = h.page(c, p.Name, "presets")
	v.Errors = errs
	v.Mine = p.OwnerID == u.ID
	v.CanEdit = v.Mine || u.IsAdmin()
	if d, err := h.store.DefaultPreset(ctx(c), u.ID); err == nil {
		v.IsDefault = d.ID == p.ID
	}
	versions, err := h.store.PresetVersions(ctx(c), u.ID, p.ID)
	if err != nil {
		return v, err
	}
	labels, err := h.store.PresetLabels(ctx(c), u.ID, p.ID)
	if err != nil {
		return v, err
	}
	at := map[int][]views.LabelChip{}
	for _, l := range labels {
		chip := views.LabelChip{Name: l.Name, Version: l.Version, Protected: l.Protected}
		at[l.Version] = append(at[l.Version], chip)
		v.Labels = append(v.Labels, views.PresetLabelRow{LabelChip: chip, MovedBy: l.MovedBy, MovedAt: day(l.MovedAt), CanMove: !l.Protected || v.CanEdit})
	}
	for _, ver := range versions {
		v.Versions = append(v.Versions, views.PresetVersionRow{Version: ver.Version, Name: ver.Name, SavedAt: day(ver.SavedAt), SavedBy: ver.SavedBy, Current: ver.Version == p.Version, Labels: at[ver.Version]})
	}
	moves, err := h.store.LabelMoves(ctx(c), u.ID, p.ID, labelMovesShown)
	if err != nil {
		return v, err
	}
	for _, m := range moves {
		v.LabelMoves = append(v.LabelMoves, views.LabelMoveRow{Label: m.Label, From: m.From, To: m.To, Protected: m.Protected, By: m.By, At: day(m.At)})
	}
	a, errA := strconv.Atoi(c.Query("a"))
	b, errB := strconv.Atoi(c.Query("b"))
	if errA == nil && errB == nil {
		va, err := h.store.PresetVersion(ctx(c), u.ID, p.ID, a)
		if err != nil {
			return v, err
		}
		vb, err := h.store.PresetVersion(ctx(c), u.ID, p.ID, b)
		if err != nil {
			return v, err
		}
		v.Diff = &views.PresetDiffView{A: a, B: b, Rows: versionDiff(va, vb)}
	}
	if v.Mine { // only the owner shares, and revokes, a preset's links
		shares, err := h.store.Shares(ctx(c), p.OwnerID, db.SharePreset, p.ID)
		if err != nil {
			return v, err
		}
		for _, s := range shares {
			v.Shares = append(v.Shares, shareRow(c, s))
		}
	}
	return v, nil
}

// presetView is what a preset's page shows of it.
func presetView(p db.Preset) views.PresetView {
	spec := presetSpec(p)
	v := views.PresetView{
		ID: p.ID, Name: p.Name, Description: p.Description, Tags: strings.Join(p.Tags, ", "),
		Visibility: p.Visibility, Owner: p.OwnerName, Version: p.Version,
		Provider: spec.Provider, Model: spec.Model(), Endpoint: string(spec.Endpoint),
	}
	v.Params, v.Messages, v.Prompt, v.HasPrompt = requestView(spec.Body)
	names := preset.Variables(spec)
	for _, n := range names {
		v.Variables = append(v.Variables, views.KeyValue{Key: n, Value: p.Variables[n]})
	}
	return v
}

// versionDiff compares two versions field by field: the name and tags,
// each variable, each parameter, each message and each tool.
func versionDiff(a, b db.PresetVersion) []views.PresetDiffRow {
	var rows []views.PresetDiffRow
	for _, r := range diff.Params(comparable(a), comparable(b)) {
		rows = append(rows, views.PresetDiffRow{Field: r.Key, A: r.A, B: r.B, Changed: r.State != diff.Same})
	}
	return rows
}

// comparable flattens a version into one JSON object whose arrays of
// messages and tools are objects keyed by position, so that each message
// and each tool is compared on its own.
func comparable(v db.PresetVersion) json.RawMessage {
	var spec llm.RunSpec
	_ = json.Unmarshal([]byte(v.Spec), &spec)
	var body map[string]json.RawMessage
	_ = json.Unmarshal(spec.Body, &body)
	for _, k := range []string{"messages", "tools", "stop"} {
		var items []json.RawMessage
		if json.Unmarshal(body[k], &items) == nil && items != nil {
			byPos := map[string]json.RawMessage{}
			for i, it := range items {
				byPos[strconv.Itoa(i)] = it
			}
			body[k], _ = json.Marshal(byPos)
		}
	}
	out := map[string]any{
		"name": v.Name, "description": v.Description, "tags": strings.Join(v.Tags, ", "),
		"provider": spec.Provider, "endpoint": spec.Endpoint, "variables": v.Variables, "body": body,
	}
	b, _ := json.Marshal(out)
	return b
}

// loadPreset makes p the user's playground state, and marks it used; when
// the playground has unsaved changes, it asks first (see offerSetup).
func (h *Handler) loadPreset(c *fiber.Ctx, user int64, p db.Preset) (asked bool, err error) {
	st := playgroundState{RunSpec: presetSpec(p), PresetID: p.ID, PresetVersion: p.Version, PresetName: p.Name, Variables: p.Variables}
	if asked, err = h.offerSetup(c, user, playgroundOffer{State: st, Label: "the preset " + p.Name}); err != nil {
		return false, err
	}
	return asked, h.store.TouchPreset(ctx(c), user, p.ID)
}

// loadPresetAt is loadPreset for version v of p, which label points at:
// the playground names the label until the user saves a new version.
func (h *Handler) loadPresetAt(c *fiber.Ctx, user int64, p db.Preset, v db.PresetVersion, label string) (asked bool, err error) {
	st := playgroundState{RunSpec: versionFile(v).Spec, PresetID: p.ID, PresetVersion: v.Version, PresetName: p.Name, PresetLabel: label, Variables: v.Variables}
	if asked, err = h.offerSetup(c, user, playgroundOffer{State: st, Label: "the preset " + p.Name + " at " + label}); err != nil {
		return false, err
	}
	return asked, h.store.TouchPreset(ctx(c), user, p.ID)
}
