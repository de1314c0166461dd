package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/runner"
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

// cancelRun stops user's live run id, keeping its partial output, for the
// page and the API alike. It returns the run, whose Ending says when the
// stop is stored; db.ErrNotFound when the user has no such run, and a 409
// Problem when its ending is already decided (it is stored as it ended).
func (h *Handler) cancelRun(ctx context.Context, user, id int64) (*runner.Run, error) {
	if run, live := h.runner.Run(id, user); live && h.runner.Cancel(id, user) {
		return run, nil
	}
	if _, err := h.store.Run(ctx, user, id); err != nil {
		return nil, err
	}
	return nil, &Problem{Status: fiber.StatusConflict, Message: "The run has already finished."}
}

// removeRun deletes user's run id, its search entry and its share links,
// for the page and the API alike; a live run stops first and is dropped
// from the runner's memory, so its events are not replayed from there.
// db.ErrNotFound when the user has no such run.
func (h *Handler) removeRun(ctx context.Context, user, id int64) error {
	h.runner.Drop(id, user)
	return h.store.RemoveRun(ctx, user, id)
}
