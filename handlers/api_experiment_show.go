package handlers

import "context"

// ShowExperimentInput is GET /api/v1/experiments/{id}.
type ShowExperimentInput struct {
	ID int64 `path:"id" minimum:"1" doc:"The experiment's id."`
}

// ShowAPIExperiment answers an experiment the caller sees: its status,
// progress and per-variant aggregates.
func (h *Handler) ShowAPIExperiment(ctx context.Context, in *ShowExperimentInput) (*ExperimentOutput, error) {
	e, err := h.apiExperiment(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	d, err := h.experimentDetail(ctx, apiUser(ctx).ID, e)
	if err != nil {
		return nil, err
	}
	return &ExperimentOutput{Body: d}, nil
}
