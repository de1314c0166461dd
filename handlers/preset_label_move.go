package handlers

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/preset"
	"knobs/views"
)

// labelProtectedMsg is what a member is told who moves, or removes, a
// protected label.
func labelProtectedMsg(name string) string {
	return "The label " + name + " is protected: only the preset's owner or an admin moves or removes it."
}

// MovePresetLabel points a label of the :id preset at one of its
// versions, making the label when the preset has none of that name. A
// protected label is moved by the preset's owner or an admin only, and
// only once they have seen the diff of the two versions and confirmed
// it, with the version they saw it at: a move made meanwhile is shown
// again instead of being confirmed blindly.
func (h *Handler) MovePresetLabel(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	p, err := h.visiblePreset(c)
	if err != nil {
		return err
	}
	canProtect := p.OwnerID == u.ID || u.IsAdmin()
	name, msg := preset.LabelName(c.FormValue("label"))
	form := views.LabelForm{Label: clip(name, 32), Protected: c.FormValue("protected") == "1"}
	if msg != "" {
		return h.renderLabelForm(c, fiber.StatusUnprocessableEntity, form, field.Errors{"label": msg}, nil)
	}
	version, err := strconv.Atoi(c.FormValue("version"))
	if err != nil || version < 1 {
		return h.renderLabelForm(c, fiber.StatusUnprocessableEntity, form, field.Errors{"label_version": "Choose one of the preset's versions."}, nil)
	}
	form.Version = version
	// A ticked box protects; an unticked one stops protecting only where
	// the form says it is authoritative (a label's own row, a confirm).
	var protect *bool
	switch {
	case form.Protected:
		protect = &form.Protected
	case c.FormValue("set_protected") == "1":
		protect = new(bool)
	}
	if protect != nil && !canProtect {
		return h.renderLabelForm(c, fiber.StatusForbidden, form, field.Errors{"protected": "Only the preset's owner or an admin protects a label or stops protecting it."}, nil)
	}

	cur, err := h.presetLabel(c, u.ID, p.ID, name)
	if err != nil {
		return err
	}
	if cur != nil && cur.Protected {
		if !canProtect {
			return h.renderLabelForm(c, fiber.StatusForbidden, form, field.Errors{"label": labelProtectedMsg(name)}, nil)
		}
		if cur.Version != version {
			stays := protect == nil || *protect
			expect, _ := strconv.Atoi(c.FormValue("expect"))
			confirmed := c.FormValue("confirm") == "1"
			if !confirmed || expect != cur.Version {
				status, errs := fiber.StatusOK, field.Errors(nil)
				if confirmed {
					status = fiber.StatusConflict
					errs = field.Errors{"label": fmt.Sprintf("The label %s was moved to version %d since you confirmed: check the changes from version %d and confirm again.", name, cur.Version, cur.Version)}
				}
				confirm, err := h.labelConfirm(c, u.ID, p.ID, name, cur.Version, version, stays)
				if errors.Is(err, db.ErrNotFound) {
					return h.renderLabelForm(c, fiber.StatusUnprocessableEntity, form, field.Errors{"label_version": "The preset has no version " + strconv.Itoa(version) + "."}, nil)
				} else if err != nil {
					return err
				}
				return h.renderLabelForm(c, status, form, errs, confirm)
			}
		}
	}

	// The move is made at the version the user saw (and, for a protected
	// label, confirmed the diff from), in the same transaction as the
	// check: one moved meanwhile is asked about again.
	from := 0
	if cur != nil {
		from = cur.Version
	}
	l, err := h.store.MovePresetLabel(ctx(c), u.ID, u.IsAdmin(), db.LabelChange{PresetID: p.ID, Label: name, Version: version, Protect: protect, From: from})
	switch {
	case errors.Is(err, db.ErrLabelMoved):
		return h.renderLabelForm(c, fiber.StatusConflict, form, field.Errors{"label": fmt.Sprintf("The label %s was moved by someone else a moment ago: check where it points now and try again.", name)}, nil)
	case errors.Is(err, db.ErrNoVersion):
		return h.renderLabelForm(c, fiber.StatusUnprocessableEntity, form, field.Errors{"label_version": "The preset has no version " + strconv.Itoa(version) + "."}, nil)
	case errors.Is(err, db.ErrLabelProtected):
		// Protected by someone else since this page was read.
		return h.renderLabelForm(c, fiber.StatusForbidden, form, field.Errors{"label": labelProtectedMsg(name)}, nil)
	case errors.Is(err, db.ErrForbidden):
		return h.renderLabelForm(c, fiber.StatusForbidden, form, field.Errors{"protected": "Only the preset's owner or an admin protects a label or stops protecting it."}, nil)
	case err != nil:
		return err
	}
	done := fmt.Sprintf("The label %s points at version %d.", l.Name, l.Version)
	switch {
	case cur == nil:
		done = fmt.Sprintf("Made the label %s, pointing at version %d.", l.Name, l.Version)
	case cur.Version == l.Version && cur.Protected == l.Protected:
		done = fmt.Sprintf("The label %s already pointed at version %d: nothing changed.", l.Name, l.Version)
	case cur.Version != l.Version:
		done = fmt.Sprintf("Moved the label %s from version %d to version %d.", l.Name, cur.Version, l.Version)
	}
	if cur != nil && cur.Protected != l.Protected {
		if l.Protected {
			done += " It is protected now."
		} else {
			done += " It is no longer protected."
		}
	} else if cur == nil && l.Protected {
		done += " It is protected."
	}
	return redirectWith(c, presetPath(p.ID)+"#labels", done)
}

// presetLabel is the label name of preset id as viewer sees it, nil when
// the preset has none of that name.
func (h *Handler) presetLabel(c *fiber.Ctx, viewer, id int64, name string) (*db.PresetLabel, error) {
	ls, err := h.store.PresetLabels(ctx(c), viewer, id)
	if err != nil {
		return nil, err
	}
	for _, l := range ls {
		if l.Name == name {
			return &l, nil
		}
	}
	return nil, nil
}

// labelConfirm is the question asked before a protected label moves from
// version from to version to: the diff of the two.
func (h *Handler) labelConfirm(c *fiber.Ctx, viewer, id int64, name string, from, to int, protected bool) (*views.LabelConfirmView, error) {
	a, err := h.store.PresetVersion(ctx(c), viewer, id, from)
	if err != nil {
		return nil, err
	}
	b, err := h.store.PresetVersion(ctx(c), viewer, id, to)
	if err != nil {
		return nil, err
	}
	return &views.LabelConfirmView{Label: name, Protected: protected, Diff: views.PresetDiffView{A: from, B: to, Rows: versionDiff(a, b)}}, nil
}

// renderLabelForm shows the preset's page again with the label form as
// sent, errs at its fields and, when set, a move to confirm.
func (h *Handler) renderLabelForm(c *fiber.Ctx, status int, form views.LabelForm, errs field.Errors, confirm *views.LabelConfirmView) error {
	v, err := h.presetPage(c, errs)
	if err != nil {
		return err
	}
	v.LabelForm = form
	v.LabelConfirm = confirm
	return Render(c, status, views.PresetPage(v))
}
