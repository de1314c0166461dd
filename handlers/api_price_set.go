package handlers

import "context"

// SetPriceInput is PUT /api/v1/prices/{provider}/{model}.
type SetPriceInput struct {
	Provider string `path:"provider" maxLength:"64" doc:"The provider's id."`
	Model    string `path:"model" maxLength:"600" doc:"The model's id; a / in it is sent as %2F."`
	Body     PriceFields
}

// PriceOutput is one model's price.
type PriceOutput struct {
	Body PriceItem
}

// SetAPIPrice sets an admin's price for a model, in force over the
// provider's listing for runs from now on; runs already made keep the
// cost they were given. Members are refused (403).
func (h *Handler) SetAPIPrice(ctx context.Context, in *SetPriceInput) (*PriceOutput, error) {
	item, fe, err := h.setPrice(ctx, apiUser(ctx), in.Provider, pathModel(in.Model), in.Body)
	if err != nil {
		return nil, err
	}
	if !fe.Empty() {
		return nil, apiInvalid(fe)
	}
	return &PriceOutput{Body: item}, nil
}
