package handlers

import (
	"context"

	"knobs/dataset"
	"knobs/db"
	"knobs/field"
)

// UpdateDatasetInput is PUT /api/v1/datasets/{id}: an edit saved as the
// dataset's next version.
type UpdateDatasetInput struct {
	ID   int64 `path:"id" minimum:"1" doc:"The dataset's id."`
	Body struct {
		BaseVersion int                `json:"base_version" minimum:"1" doc:"The version your edit was made on: refused with 409 when another was saved since."`
		Add         []DatasetRowInput  `json:"add,omitempty" maxItems:"100000" doc:"Rows to add at the end."`
		Change      []DatasetRowChange `json:"change,omitempty" maxItems:"100000" doc:"Rows to replace, by key."`
		Remove      []int64            `json:"remove,omitempty" maxItems:"100000" doc:"Keys of rows to remove."`
		Note        string             `json:"note,omitempty" maxLength:"500" doc:"What the version changed, shown in its list."`
	}
}

// UpdateAPIDataset saves an edit of a dataset the caller may change (its
// owner or an admin) as its next version, unless another version was
// saved after base_version (409). Rows are checked as a file's; a key
// the version does not have is 404; either way nothing changes.
func (h *Handler) UpdateAPIDataset(ctx context.Context, in *UpdateDatasetInput) (*DatasetOutput, error) {
	u := apiUser(ctx)
	cur, err := h.store.Dataset(ctx, u.ID, in.ID)
	if err != nil {
		return nil, datasetProblem(err)
	}
	if cur.OwnerID != u.ID && !u.IsAdmin() {
		return nil, datasetProblem(db.ErrForbidden)
	}
	e := db.DatasetEdit{Base: in.Body.BaseVersion, Remove: in.Body.Remove, Note: in.Body.Note}
	lines := make([][]byte, 0, len(in.Body.Add)+len(in.Body.Change))
	for _, r := range in.Body.Add {
		lines = append(lines, r.line)
	}
	for _, r := range in.Body.Change {
		lines = append(lines, r.line)
	}
	if len(lines) > 0 {
		t, err := readRowLines(lines)
		if fe, ok := rowErrors(err, rowList("add", len(in.Body.Add)), rowList("change", len(in.Body.Change))); ok {
			return nil, apiInvalid(fe)
		} else if err != nil {
			return nil, err
		}
		cols, msg := mergeColumns(cur.Columns, t.Columns)
		if msg != "" {
			return nil, apiInvalid(field.Errors{"body": msg})
		}
		if len(cols) > dataset.MaxColumns {
			return nil, apiInvalid(field.Errors{"body": "A dataset has at most 1000 variables."})
		}
		e.Columns = cols
		rows := tableRows(t)
		e.Add = rows[:len(in.Body.Add)]
		e.Change = rows[len(in.Body.Add):]
		for i, r := range in.Body.Change {
			e.Change[i].Key = r.Key
		}
	}
	d, err := h.store.EditDataset(ctx, u.ID, u.IsAdmin(), in.ID, e)
	if err != nil {
		return nil, datasetProblem(err)
	}
	return &DatasetOutput{Body: datasetSummary(d)}, nil
}
