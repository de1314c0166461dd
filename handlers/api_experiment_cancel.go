package handlers

import (
	"context"

	"knobs/db"
)

// CancelExperimentInput is POST /api/v1/experiments/{id}/cancel.
type CancelExperimentInput struct {
	ID int64 `path:"id" minimum:"1" doc:"The experiment's id."`
}

// CancelAPIExperiment stops a running experiment (its owner's or an
// admin's): runs going stop with their partial output kept in history,
// cells not started are marked cancelled. An experiment already ended is
// answered as it is.
func (h *Handler) CancelAPIExperiment(ctx context.Context, in *CancelExperimentInput) (*ExperimentOutput, error) {
	u := apiUser(ctx)
	e, err := h.apiExperiment(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if err := canChangeExperiment(u, e); err != nil {
		return nil, err
	}
	if e.Status == db.ExperimentRunning {
		if !h.experiments.Cancel(e.ID) {
			// Running in the store but not here (it failed to resume).
			if err := h.store.EndExperiment(ctx, e.ID, db.ExperimentCancelled, ""); err != nil {
				return nil, err
			}
		}
		h.experiments.Wait(ctx, e.ID)
		if e, err = h.apiExperiment(ctx, in.ID); err != nil {
			return nil, err
		}
	}
	d, err := h.experimentDetail(ctx, u.ID, e)
	if err != nil {
		return nil, err
	}
	return &ExperimentOutput{Body: d}, nil
}
