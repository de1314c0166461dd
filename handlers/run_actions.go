package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

// runPath is the page of run id.
func runPath(id int64) string { return "/runs/" + strconv.FormatInt(id, 10) }

// ownRun loads the signed-in user's run named by the :id parameter.
func (h *Handler) ownRun(c *fiber.Ctx) (db.Run, error) {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "run")
	if err != nil {
		return db.Run{}, err
	}
	return h.store.Run(ctx(c), u.ID, id)
}

// StarRun stars or unstars a run.
func (h *Handler) StarRun(c *fiber.Ctx) error {
	run, err := h.ownRun(c)
	if err != nil {
		return err
	}
	if err := h.store.SetRunStarred(ctx(c), run.UserID, run.ID, c.FormValue("starred") == "1"); err != nil {
		return err
	}
	return c.Redirect(runPath(run.ID), fiber.StatusSeeOther)
}

// maxNote bounds a run's note, in characters.
const maxNote = 2000

// SaveRunNote keeps a free-text note on a run.
func (h *Handler) SaveRunNote(c *fiber.Ctx) error {
	run, err := h.ownRun(c)
	if err != nil {
		return err
	}
	note := strings.TrimSpace(c.FormValue("note"))
	if utf8.RuneCountInString(note) > maxNote {
		return redirectWith(c, runPath(run.ID), fmt.Sprintf("The note was not saved: it has more than %d characters.", maxNote))
	}
	if err := h.store.SetRunNote(ctx(c), run.UserID, run.ID, note); err != nil {
		return err
	}
	return redirectWith(c, runPath(run.ID), "Note saved.")
}

// RemoveRun deletes a run, its search entry and its share links.
func (h *Handler) RemoveRun(c *fiber.Ctx) error {
	run, err := h.ownRun(c)
	if err != nil {
		return err
	}
	if run.Status == db.RunRunning {
		h.runner.Cancel(run.ID, run.UserID)
	}
	if err := h.store.RemoveRun(ctx(c), run.UserID, run.ID); err != nil {
		return err
	}
	return redirectWith(c, "/history", fmt.Sprintf("Deleted run %d.", run.ID))
}

// runState is a stored run's setup: its spec template and variable values.
func runState(run db.Run) (playgroundState, error) {
	var st playgroundState
	if err := json.Unmarshal([]byte(run.Spec), &st.RunSpec); err != nil {
		return st, fmt.Errorf("handlers: run %d has an unreadable spec: %w", run.ID, err)
	}
	if run.Variables != "" {
		_ = json.Unmarshal([]byte(run.Variables), &st.Variables) // stored by us: well formed
	}
	return st, nil
}

// OpenRunInPlayground loads a run's exact spec into the playground.
func (h *Handler) OpenRunInPlayground(c *fiber.Ctx) error {
	run, err := h.ownRun(c)
	if err != nil {
		return err
	}
	st, err := runState(run)
	if err != nil {
		return err
	}
	// The run's answer comes with it: the output shows what this setup gave.
	asked, err := h.offerSetup(c, run.UserID, playgroundOffer{State: st, Label: fmt.Sprintf("run %d", run.ID), LastRun: run.ID})
	if err != nil {
		return err
	}
	return openedOrAsk(c, asked, fmt.Sprintf("Loaded the setup of run %d.", run.ID))
}

// RerunRun runs a run's spec again, on another provider and model when the
// form names them, and shows the new run.
func (h *Handler) RerunRun(c *fiber.Ctx) error {
	run, err := h.ownRun(c)
	if err != nil {
		return err
	}
	st, err := runState(run)
	if err != nil {
		return err
	}
	st.PresetID = run.PresetID
	spec := &st.RunSpec
	if p := c.FormValue("provider"); p != "" {
		spec.Provider = p
	}
	if m := strings.TrimSpace(c.FormValue("model")); m != "" && m != spec.Model() {
		if spec.Body, err = withModel(spec.Body, m); err != nil {
			return redirectWith(c, runPath(run.ID), "The run's request cannot take another model: "+err.Error())
		}
	}
	again, fields, err := h.startRun(c.UserContext(), run.UserID, st)
	if err != nil {
		return err
	}
	if len(fields) > 0 {
		return redirectWith(c, runPath(run.ID), "Nothing was sent: "+fields.Describe())
	}
	// The page it goes to reads the run's row.
	if err := again.WaitStored(); err != nil {
		return err
	}
	return c.Redirect(runPath(again.ID), fiber.StatusSeeOther)
}

// withModel returns body with its "model" field set to model.
func withModel(body json.RawMessage, model string) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, errors.New("its body is not a JSON object")
	}
	m, _ := json.Marshal(model)
	fields["model"] = m
	return json.Marshal(fields)
}

// CreateRunShare makes a read-only link to a run, for the team or for
// anyone; a page script gets the link as JSON (see answerShare).
func (h *Handler) CreateRunShare(c *fiber.Ctx) error {
	run, err := h.ownRun(c)
	if err != nil {
		return err
	}
	audience, ok := shareAudience(c)
	if !ok {
		return refuseShare(c, runPath(run.ID))
	}
	sh, err := h.store.CreateShare(ctx(c), run.UserID, db.ShareRun, run.ID, audience)
	if err != nil {
		return err
	}
	return answerShare(c, sh, runPath(run.ID))
}

// RevokeShare stops a share link from opening. A page script gets
// {"id","revoked"}; a form post goes back where it came from.
func (h *Handler) RevokeShare(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "share link")
	if err != nil {
		return err
	}
	if err := h.store.RevokeShare(ctx(c), u.ID, id); err != nil {
		return err
	}
	h.shared.cut(id) // replays streaming through the link end now
	if wantsJSON(c) {
		return c.JSON(fiber.Map{"id": id, "revoked": true})
	}
	back := "/history"
	if ref, err := url.Parse(c.Get(fiber.HeaderReferer)); err == nil && ref.Host == string(c.Request().Host()) {
		back = safeNext(ref.Path)
	}
	return redirectWith(c, back, "The share link no longer opens.")
}

// SaveRunAsPreset keeps a run's setup, with its variable values as the
// defaults, as a new private preset.
func (h *Handler) SaveRunAsPreset(c *fiber.Ctx) error {
	run, err := h.ownRun(c)
	if err != nil {
		return err
	}
	var vars map[string]string
	if run.Variables != "" {
		_ = json.Unmarshal([]byte(run.Variables), &vars) // stored by us: well formed
	}
	name := strings.TrimSpace(c.FormValue("name"))
	if name == "" {
		name = fmt.Sprintf("From run %d (%s)", run.ID, run.Model)
	}
	p, fe, err := h.createPreset(c, db.Preset{
		OwnerID: run.UserID, Name: name, Visibility: db.PresetPrivate, Spec: run.Spec, Variables: vars,
	})
	if !fe.Empty() {
		return redirectWith(c, runPath(run.ID), "The preset was not saved: "+fe.Describe())
	} else if err != nil {
		return err
	}
	return redirectWith(c, presetPath(p.ID), "Saved the run's setup as a preset.")
}
