package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/llm"
)

// SavePlaygroundState keeps the spec the user is editing, so that a
// reload, or another browser, finds the playground as it was left.
func (h *Handler) SavePlaygroundState(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	var st playgroundSaved
	dec := json.NewDecoder(bytes.NewReader(c.Body()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return fiber.NewError(fiber.StatusBadRequest, "The playground state is not valid: "+err.Error()+".")
	}
	spec := st.RunSpec
	if !spec.Endpoint.Valid() {
		return fiber.NewError(fiber.StatusUnprocessableEntity, `The endpoint is "chat" or "completion".`)
	}
	if _, err := h.findProvider(ctx(c), spec.Provider); errors.Is(err, errNoProvider) {
		return fiber.NewError(fiber.StatusUnprocessableEntity, "There is no provider "+strconv.Quote(spec.Provider)+".")
	} else if err != nil {
		return err
	}
	var body map[string]json.RawMessage
	if json.Unmarshal(spec.Body, &body) != nil {
		return fiber.NewError(fiber.StatusBadRequest, "The body is not a JSON object.")
	}
	if st.LastRun != 0 {
		// A run just started may not have its row yet: the runner knows it.
		if _, live := h.runner.Run(st.LastRun, u.ID); !live {
			if _, err := h.store.Run(ctx(c), u.ID, st.LastRun); err != nil {
				return err // another user's run, or none: 404
			}
		}
	}
	// A setup waiting to be opened is the server's to offer and the
	// user's to answer (ResolvePendingSetup): a save of the editor keeps it.
	cur, _, err := h.savedPlayground(ctx(c), u.ID)
	if err != nil {
		return err
	}
	st.Pending = cur.Pending
	if err := h.storePlayground(ctx(c), u.ID, st); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// modelEntry is one model of the models list the page shows.
type modelEntry struct {
	ID   string    `json:"id"`
	Hint string    `json:"hint"`
	Info llm.Model `json:"info"`
}

// ListModels answers the provider's models as JSON: its own list when it
// answers, else the built-in one, with a note saying so.
func (h *Handler) ListModels(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	p, err := h.findProvider(ctx(c), c.Query("provider"))
	if errors.Is(err, errNoProvider) {
		return fiber.NewError(fiber.StatusNotFound, "There is no such provider.")
	} else if err != nil {
		return err
	}
	models, note := h.providerModels(ctx(c), u.ID, p)
	out := make([]modelEntry, 0, len(models))
	for _, m := range models {
		out = append(out, modelEntry{ID: m.ID, Hint: modelHint(m), Info: m})
	}
	return c.JSON(fiber.Map{"models": out, "note": note})
}
