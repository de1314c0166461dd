package handlers

import (
	"context"
	"errors"

	"knobs/db"
)

// CancelRunInput is POST /api/v1/runs/{id}/cancel.
type CancelRunInput struct {
	ID int64 `path:"id" minimum:"1" doc:"The run's id."`
}

// CancelRunOutput is the answer to POST /api/v1/runs/{id}/cancel.
type CancelRunOutput struct {
	Body RunDetail
}

// CancelAPIRun stops one of the caller's live runs, keeping its partial
// output, and answers the run as stored once the runner has ended it. A
// run whose ending was already decided is 409, as the page's cancel is;
// another user's run is 404.
func (h *Handler) CancelAPIRun(ctx context.Context, in *CancelRunInput) (*CancelRunOutput, error) {
	u := apiUser(ctx)
	run, err := h.cancelRun(ctx, u.ID, in.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, apiNotFound("run")
	} else if err != nil {
		return nil, err
	}
	select {
	case <-run.Ending(): // published once the ending is stored
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	d, err := h.apiRun(ctx, u.ID, in.ID)
	if err != nil {
		return nil, err
	}
	return &CancelRunOutput{Body: d}, nil
}
