package handlers

import (
	"encoding/json"
	"errors"
	"fmt"

	"knobs/db"
	"knobs/llm"
	"knobs/runner"
)

// storedRun is a run as the database keeps it, its JSON columns read:
// the one reading behind the run page, a shared run's page and
// GET /api/v1/runs/{id}.
type storedRun struct {
	db.Run
	Spec      llm.RunSpec       // as the user wrote it, placeholders and all
	Vars      map[string]string // nil when none
	Result    runner.Result     // empty until the run has ended
	Raw       *llm.RawRequest   // the request as sent, its key redacted; nil until sent
	Displayed string            // Status, but interrupted for a run stored as running that this process does not run
}

// readRun reads a stored run of user's. A run stored as running that
// this process does not run ends interrupted, as its next start will mark
// it. Empty columns are fine (a run cut short may hold no result); a
// column that does not decode is an error, and the rest is still read.
func (h *Handler) readRun(user int64, run db.Run) (storedRun, error) {
	s := storedRun{Run: run, Displayed: run.Status}
	if run.Status == db.RunRunning {
		if _, live := h.runner.Run(run.ID, user); !live {
			s.Displayed = db.RunInterrupted
		}
	}
	var errs []error
	decode := func(what, col string, v any) {
		if col == "" {
			return
		}
		if err := json.Unmarshal([]byte(col), v); err != nil {
			errs = append(errs, fmt.Errorf("handlers: run %d has an unreadable %s: %w", run.ID, what, err))
		}
	}
	decode("spec", run.Spec, &s.Spec)
	decode("variables", run.Variables, &s.Vars)
	decode("result", run.Result, &s.Result)
	if run.RawRequest != "" {
		s.Raw = &llm.RawRequest{}
		decode("request", run.RawRequest, s.Raw)
	}
	return s, errors.Join(errs...)
}
