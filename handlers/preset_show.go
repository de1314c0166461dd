package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

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

// ShowPresetPage shows a preset: its setup, versions, a diff of two of
// them (?a=&b=), and its settings and shares for whoever may change it.
func (h *Handler) ShowPresetPage(c *fiber.Ctx) error {
	return h.renderPreset(c, fiber.StatusOK, nil)
}

func (h *Handler) renderPreset(c *fiber.Ctx, status int, errs field.Errors) error {
	u, _ := CurrentUser(c)
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
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
		return err
	}
	for _, ver := range versions {
		v.Versions = append(v.Versions, views.PresetVersionRow{Version: ver.Version, Name: ver.Name, SavedAt: day(ver.SavedAt), SavedBy: ver.SavedBy, Current: ver.Version == p.Version})
	}
	a, errA := strconv.Atoi(c.Query("a"))
	b, errB := strconv.Atoi(c.Query("b"))
	if errA == nil && errB == nil {
		va, err := h.store.PresetVersion(ctx(c), u.ID, p.ID, a)
		if err != nil {
			return err
		}
		vb, err := h.store.PresetVersion(ctx(c), u.ID, p.ID, b)
		if err != nil {
			return err
		}
		v.Diff = &views.PresetDiffView{A: a, B: b, Rows: versionDiff(va, vb)}
	}
	if v.Mine { // only the owner shares, and revokes, a preset's links
		shares, err := h.store.Shares(ctx(c), p.OwnerID, db.SharePreset, p.ID)
		if err != nil {
			return err
		}
		for _, s := range shares {
			v.Shares = append(v.Shares, shareRow(c, s))
		}
	}
	return Render(c, status, views.PresetPage(v))
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

// SavePresetSettings changes a preset's name, description, tags and
// visibility.
func (h *Handler) SavePresetSettings(c *fiber.Ctx) error {
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	p.Name = strings.TrimSpace(c.FormValue("name"))
	p.Description = strings.TrimSpace(c.FormValue("description"))
	p.Tags = preset.ParseTags(c.FormValue("tags"))
	p.Visibility = c.FormValue("visibility")
	p.Version = 0 // settings win over concurrent saves of the setup
	_, fe, err := h.updatePreset(c, p)
	switch {
	case !fe.Empty():
		return h.renderPreset(c, fiber.StatusUnprocessableEntity, fe)
	case errors.Is(err, db.ErrForbidden):
		return fiber.NewError(fiber.StatusForbidden, "Only its owner or an admin can change this preset.")
	case err != nil:
		return err
	}
	return redirectWith(c, presetPath(p.ID), "Saved.")
}

// RestorePreset makes an old version the current one, as a new version.
func (h *Handler) RestorePreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "preset")
	if err != nil {
		return err
	}
	version, err := strconv.Atoi(c.FormValue("version"))
	if err != nil {
		return fiber.NewError(fiber.StatusNotFound, "There is no such version.")
	}
	p, err := h.store.RestorePresetVersion(ctx(c), u.ID, u.IsAdmin(), id, version)
	if errors.Is(err, db.ErrForbidden) {
		return fiber.NewError(fiber.StatusForbidden, "Only its owner or an admin can change this preset.")
	} else if err != nil {
		return err
	}
	return redirectWith(c, presetPath(id), fmt.Sprintf("Restored version %d as version %d.", version, p.Version))
}

// RemovePreset deletes a preset, its versions and its share links.
func (h *Handler) RemovePreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "preset")
	if err != nil {
		return err
	}
	err = h.store.RemovePreset(ctx(c), u.ID, u.IsAdmin(), id)
	if errors.Is(err, db.ErrForbidden) {
		return fiber.NewError(fiber.StatusForbidden, "Only its owner or an admin can delete this preset.")
	} else if err != nil {
		return err
	}
	return redirectWith(c, "/presets", "Deleted the preset.")
}

// DuplicatePreset copies a preset the user can see into a new private one
// they own.
func (h *Handler) DuplicatePreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	copied, fe, err := h.createPreset(c, db.Preset{
		OwnerID: u.ID, Name: copyName(p.Name), Description: p.Description, Tags: p.Tags,
		Visibility: db.PresetPrivate, Spec: p.Spec, Variables: p.Variables,
	})
	if !fe.Empty() {
		return fiber.NewError(fiber.StatusUnprocessableEntity, "The copy was not saved: "+fe.Describe())
	}
	if err != nil {
		return err
	}
	return redirectWith(c, presetPath(copied.ID), "This is your own copy.")
}

func copyName(name string) string {
	n := []rune(name + " (copy)")
	if len(n) > preset.NameMax {
		n = n[len(n)-preset.NameMax:]
	}
	return string(n)
}

// OpenPreset loads a preset into the playground.
func (h *Handler) OpenPreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	asked, err := h.loadPreset(c, u.ID, p)
	if err != nil {
		return err
	}
	return openedOrAsk(c, asked, "Opened the preset "+p.Name+".")
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

// SetDefaultPreset makes a preset (or none) what a fresh playground loads.
func (h *Handler) SetDefaultPreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	id, msg := p.ID, "A fresh playground now opens with "+p.Name+"."
	if c.FormValue("default") != "1" {
		id, msg = 0, "A fresh playground opens with the built-in example again."
	}
	if err := h.store.SetDefaultPreset(ctx(c), u.ID, id); err != nil {
		return err
	}
	return redirectWith(c, presetPath(p.ID), msg)
}

// ExportPreset answers a preset as a JSON file, with no secret in it.
func (h *Handler) ExportPreset(c *fiber.Ctx) error {
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	b, err := preset.Export(preset.File{Name: p.Name, Description: p.Description, Tags: p.Tags, Variables: p.Variables, Spec: presetSpec(p)})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s.knobs.json"`, fileSlug(p.Name)))
	return c.Send(b)
}

// fileSlug makes a file name out of a preset's name.
func fileSlug(name string) string {
	s := providerSlug(name)
	if s == "" {
		return "preset"
	}
	return s
}

// CreatePresetShare makes a read-only link to a preset, as
// CreateRunShare does for a run.
func (h *Handler) CreatePresetShare(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	if p.OwnerID != u.ID {
		return fiber.NewError(fiber.StatusForbidden, "Only its owner can share this preset.")
	}
	audience, ok := shareAudience(c)
	if !ok {
		return refuseShare(c, presetPath(p.ID))
	}
	sh, err := h.store.CreateShare(ctx(c), u.ID, db.SharePreset, p.ID, audience)
	if err != nil {
		return err
	}
	return answerShare(c, sh, presetPath(p.ID))
}

// ImportPreset reads a preset file, a raw request body or a curl command,
// saves it as a new preset of the user's and opens it in the playground.
func (h *Handler) ImportPreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	data := []byte(strings.TrimSpace(c.FormValue("text")))
	if fh, err := c.FormFile("file"); err == nil && fh.Size > 0 {
		if fh.Size > preset.MaxSize {
			return h.renderPresets(c, fiber.StatusUnprocessableEntity, field.Errors{"import": fmt.Sprintf("The file is %d bytes; a preset file has at most %d.", fh.Size, preset.MaxSize)})
		}
		f, err := fh.Open()
		if err != nil {
			return err
		}
		defer f.Close()
		buf := make([]byte, fh.Size)
		if _, err := io.ReadFull(f, buf); err != nil {
			return err
		}
		data = buf
	}
	if len(data) == 0 {
		return h.renderPresets(c, fiber.StatusUnprocessableEntity, field.Errors{"import": "Choose a file or paste something to import."})
	}
	file, err := preset.Import(data)
	var ie *preset.ImportError
	if errors.As(err, &ie) {
		return h.renderPresets(c, fiber.StatusUnprocessableEntity, field.Errors{"import": ie.Problem})
	} else if err != nil {
		return err
	}
	if file.Spec.Provider == "" {
		file.Spec.Provider = "sim" // the request did not say where it was sent: try it offline first
	}
	prov, err := h.findProvider(ctx(c), file.Spec.Provider)
	if errors.Is(err, errNoProvider) {
		return h.renderPresets(c, fiber.StatusUnprocessableEntity, field.Errors{"import": "The file is for the provider " + strconv.Quote(file.Spec.Provider) + ", which this Knobs does not have."})
	} else if err != nil {
		return err
	}
	if fields := llm.Validate(file.Spec, prov.Dialect, modelInfo(prov, file.Spec.Model())); len(fields) > 0 {
		return h.renderPresets(c, fiber.StatusUnprocessableEntity, field.Errors{"import": "Nothing was imported: " + fields.Describe()})
	}
	name := file.Name
	if name == "" {
		name = "Imported " + time.Now().Format("2 Jan 15:04")
	}
	spec, _ := json.Marshal(file.Spec)
	p, fe, err := h.createPreset(c, db.Preset{
		OwnerID: u.ID, Name: name, Description: file.Description, Tags: file.Tags,
		Visibility: db.PresetPrivate, Spec: string(spec), Variables: file.Variables,
	})
	if !fe.Empty() {
		return h.renderPresets(c, fiber.StatusUnprocessableEntity, field.Errors{"import": "Nothing was imported: " + fe.Describe()})
	} else if err != nil {
		return err
	}
	asked, err := h.loadPreset(c, u.ID, p)
	if err != nil {
		return err
	}
	msg := "Imported as the preset " + p.Name + "."
	if asked {
		msg += " Your playground has unsaved changes: choose whether to open it there."
	}
	if len(file.Dropped) > 0 {
		sort.Strings(file.Dropped)
		msg += " Left out: " + strings.Join(file.Dropped, ", ") + "."
	}
	return redirectWith(c, "/", msg)
}
