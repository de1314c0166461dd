package handlers

import "context"

// ListPricesOutput is the answer to GET /api/v1/prices.
type ListPricesOutput struct {
	Body struct {
		Prices []PriceItem `json:"prices" nullable:"false"`
	}
}

// ListAPIPrices lists every model of every provider with the price its
// runs are costed at and where that price comes from.
func (h *Handler) ListAPIPrices(ctx context.Context, _ *struct{}) (*ListPricesOutput, error) {
	list, err := h.priceList(ctx, apiUser(ctx).ID)
	if err != nil {
		return nil, err
	}
	out := &ListPricesOutput{}
	out.Body.Prices = append([]PriceItem{}, list...)
	return out, nil
}
