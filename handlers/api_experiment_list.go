package handlers

import (
	"context"
	"time"

	"knobs/db"
)

// ListExperimentsInput is GET /api/v1/experiments.
type ListExperimentsInput struct {
	PageQuery
}

// ExperimentItem is an experiment as the list shows it.
type ExperimentItem struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Status    string    `json:"status" enum:"running,done,cancelled,error"`
	Owner     string    `json:"owner"`
	Dataset   string    `json:"dataset"`
	Done      int       `json:"done"`
	Total     int       `json:"total"`
	Failed    int       `json:"failed"`
	CreatedAt time.Time `json:"created_at"`
}

// ListExperimentsOutput is the answer to GET /api/v1/experiments.
type ListExperimentsOutput struct {
	Body Page[ExperimentItem]
}

// ListAPIExperiments lists the caller's experiments and the team's,
// newest first.
func (h *Handler) ListAPIExperiments(ctx context.Context, in *ListExperimentsInput) (*ListExperimentsOutput, error) {
	before, err := in.before()
	if err != nil {
		return nil, err
	}
	es, err := h.store.Experiments(ctx, apiUser(ctx).ID, before, in.Limit+1)
	if err != nil {
		return nil, err
	}
	page := pageOf(in.PageQuery, es, func(e db.Experiment) int64 { return e.ID }, func(e db.Experiment) ExperimentItem {
		return ExperimentItem{ID: e.ID, Name: e.Name, Status: e.Status, Owner: e.OwnerName, Dataset: e.DatasetName,
			Done: e.Finished, Total: e.Total, Failed: e.Failed, CreatedAt: e.CreatedAt}
	})
	return &ListExperimentsOutput{Body: page}, nil
}
