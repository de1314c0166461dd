package handlers

import (
	"context"

	"knobs/db"
)

// ListDatasetsInput is GET /api/v1/datasets.
type ListDatasetsInput struct {
	PageQuery
}

// ListDatasetsOutput is the answer to GET /api/v1/datasets.
type ListDatasetsOutput struct {
	Body Page[DatasetSummary]
}

// ListAPIDatasets lists the caller's datasets and the team's, newest
// first.
func (h *Handler) ListAPIDatasets(ctx context.Context, in *ListDatasetsInput) (*ListDatasetsOutput, error) {
	before, err := in.before()
	if err != nil {
		return nil, err
	}
	all, err := h.store.Datasets(ctx, apiUser(ctx).ID)
	if err != nil {
		return nil, err
	}
	// A team's datasets are few; they come newest first by id.
	var rows []db.Dataset
	for _, d := range all {
		if (before == 0 || d.ID < before) && len(rows) <= in.Limit {
			rows = append(rows, d)
		}
	}
	return &ListDatasetsOutput{Body: pageOf(in.PageQuery, rows, func(d db.Dataset) int64 { return d.ID }, datasetSummary)}, nil
}
