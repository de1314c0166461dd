package handlers

import (
	"context"
	"errors"

	"knobs/db"
)

// RemoveRunInput is DELETE /api/v1/runs/{id}.
type RemoveRunInput struct {
	ID int64 `path:"id" minimum:"1" doc:"The run's id."`
}

// RemoveAPIRun deletes one of the caller's runs, its search entry and its
// share links, stopping it first when it is live, as the page does;
// another user's run is 404.
func (h *Handler) RemoveAPIRun(ctx context.Context, in *RemoveRunInput) (*struct{}, error) {
	u := apiUser(ctx)
	if err := h.removeRun(ctx, u.ID, in.ID); errors.Is(err, db.ErrNotFound) {
		return nil, apiNotFound("run")
	} else if err != nil {
		return nil, err
	}
	return nil, nil
}
