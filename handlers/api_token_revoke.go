package handlers

import (
	"context"
	"errors"

	"knobs/db"
)

// RevokeTokenInput is DELETE /api/v1/tokens/{id}.
type RevokeTokenInput struct {
	ID int64 `path:"id" minimum:"1" doc:"The token's id."`
}

// RevokeAPIToken revokes one of the caller's tokens at once; another
// user's token id is 404, like an unknown one.
func (h *Handler) RevokeAPIToken(ctx context.Context, in *RevokeTokenInput) (*struct{}, error) {
	err := h.store.RevokeToken(ctx, apiUser(ctx).ID, in.ID, h.now())
	if errors.Is(err, db.ErrNotFound) {
		return nil, apiNotFound("API token")
	}
	return nil, err
}
