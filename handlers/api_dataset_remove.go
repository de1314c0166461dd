package handlers

import "context"

// RemoveDatasetInput is DELETE /api/v1/datasets/{id}.
type RemoveDatasetInput struct {
	ID int64 `path:"id" minimum:"1" doc:"The dataset's id."`
}

// RemoveAPIDataset deletes a dataset the caller may change, with its
// rows and versions.
func (h *Handler) RemoveAPIDataset(ctx context.Context, in *RemoveDatasetInput) (*struct{}, error) {
	u := apiUser(ctx)
	if err := h.store.RemoveDataset(ctx, u.ID, u.IsAdmin(), in.ID); err != nil {
		return nil, datasetProblem(err)
	}
	return nil, nil
}
