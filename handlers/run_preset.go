package handlers

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
)

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
