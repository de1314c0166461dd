package handlers

import (
	"encoding/json"
	"fmt"
	"strconv"

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
