package handlers

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"
)

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
	again, _, fields, err := h.startRun(c.UserContext(), run.UserID, st)
	var refused *budgetError
	if errors.As(err, &refused) {
		return redirectWith(c, runPath(run.ID), refused.Error())
	}
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
