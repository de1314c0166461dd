package handlers

import (
	"context"

	"github.com/gofiber/fiber/v2"
)

// UpdateBudgetsInput is PUT /api/v1/budgets: every cap, replacing the
// ones set before.
type UpdateBudgetsInput struct {
	Body BudgetCaps
}

// UpdateAPIBudgets replaces the monthly caps (admins only), in effect
// for the next run: a cap raised lets it through at once. Wrong fields
// are a 422 naming each, with nothing changed.
func (h *Handler) UpdateAPIBudgets(ctx context.Context, in *UpdateBudgetsInput) (*ShowBudgetsOutput, error) {
	u := apiUser(ctx)
	if !u.IsAdmin() {
		return nil, &Problem{Status: fiber.StatusForbidden, Message: "Only an admin can set budgets."}
	}
	b, fe, err := h.checkBudgets(ctx, in.Body)
	if err != nil {
		return nil, err
	}
	if len(fe) > 0 {
		return nil, apiInvalid(fe)
	}
	if err := h.store.SaveBudgets(ctx, b, h.now()); err != nil {
		return nil, err
	}
	h.log.InfoContext(ctx, "budgets changed", "by", u.ID)
	a, err := h.budgetsAnswer(ctx, u)
	if err != nil {
		return nil, err
	}
	return &ShowBudgetsOutput{Body: a}, nil
}
