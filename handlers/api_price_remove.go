package handlers

import (
	"context"
	"errors"

	"knobs/db"
)

// RemovePriceInput is DELETE /api/v1/prices/{provider}/{model}.
type RemovePriceInput struct {
	Provider string `path:"provider" maxLength:"64" doc:"The provider's id."`
	Model    string `path:"model" maxLength:"600" doc:"The model's id; a / in it is sent as %2F."`
}

// RemoveAPIPrice takes an admin's price off a model, so that the
// provider's listing prices its runs again (or none, for a model the
// listing does not price). Members are refused (403).
func (h *Handler) RemoveAPIPrice(ctx context.Context, in *RemovePriceInput) (*struct{}, error) {
	err := h.removePrice(ctx, apiUser(ctx), in.Provider, pathModel(in.Model))
	if errors.Is(err, db.ErrNotFound) {
		return nil, apiNotFound("price set by an admin for this model")
	}
	return nil, err
}
