package handlers

import (
	"context"

	"knobs/db"
)

// CreateDatasetInput is POST /api/v1/datasets.
type CreateDatasetInput struct {
	Body struct {
		Name        string            `json:"name" maxLength:"300" doc:"Up to 100 characters."`
		Description string            `json:"description,omitempty" maxLength:"8000"`
		Visibility  string            `json:"visibility,omitempty" enum:"private,team" doc:"Who sees it: private (you) by default, or team."`
		Rows        []DatasetRowInput `json:"rows" minItems:"1" maxItems:"100000" doc:"The rows, checked as a JSON Lines file's lines are."`
	}
}

// DatasetOutput answers a dataset as the list shows it.
type DatasetOutput struct {
	Body DatasetSummary
}

// CreateAPIDataset saves rows as a new dataset of the caller's, version
// 1; a row the dataset rules refuse is a 422 naming it, and nothing is
// saved.
func (h *Handler) CreateAPIDataset(ctx context.Context, in *CreateDatasetInput) (*DatasetOutput, error) {
	u := apiUser(ctx)
	name, desc, fe := datasetFields(in.Body.Name, in.Body.Description, in.Body.Visibility)
	if !fe.Empty() {
		return nil, apiInvalid(fe)
	}
	lines := make([][]byte, len(in.Body.Rows))
	for i, r := range in.Body.Rows {
		lines[i] = r.line
	}
	t, err := readRowLines(lines)
	if fe, ok := rowErrors(err, rowList("rows", len(lines))); ok {
		return nil, apiInvalid(fe)
	} else if err != nil {
		return nil, err
	}
	d, err := h.store.CreateDataset(ctx, db.Dataset{OwnerID: u.ID, Name: name, Description: desc, Visibility: in.Body.Visibility, Columns: t.Columns}, tableRows(t))
	if err != nil {
		return nil, err
	}
	return &DatasetOutput{Body: datasetSummary(d)}, nil
}
