package handlers

import (
	"context"
	"errors"
	"strconv"
	"time"

	"knobs/db"
)

// ShowDatasetInput is GET /api/v1/datasets/{id}.
type ShowDatasetInput struct {
	ID      int64  `path:"id" minimum:"1" doc:"The dataset's id."`
	Version int    `query:"version" minimum:"0" doc:"The version to answer; the latest when absent."`
	Limit   int    `query:"limit" minimum:"1" maximum:"1000" default:"100" doc:"How many rows to answer at most."`
	Cursor  string `query:"cursor" maxLength:"100" doc:"The rows' next_cursor of the previous page; empty for the first rows."`
}

// DatasetVersionItem is one saved version of a dataset.
type DatasetVersionItem struct {
	Version int       `json:"version"`
	Columns []string  `json:"columns" nullable:"false"`
	Rows    int       `json:"rows"`
	Note    string    `json:"note"`
	SavedAt time.Time `json:"saved_at"`
	SavedBy string    `json:"saved_by" doc:"Who saved it; empty once that account is removed."`
}

// DatasetDetail is a dataset at one version, with a page of its rows.
type DatasetDetail struct {
	DatasetSummary
	Shown    int                  `json:"shown_version" doc:"The version whose columns and rows this answer holds."`
	Versions []DatasetVersionItem `json:"versions" nullable:"false" doc:"Every version, newest first."`
	RowPage  Page[DatasetRowItem] `json:"row_page" doc:"A page of the shown version's rows, in order."`
}

// ShowDatasetOutput is the answer to GET /api/v1/datasets/{id}.
type ShowDatasetOutput struct {
	Body DatasetDetail
}

// ShowAPIDataset answers a dataset the caller sees at a version, with its
// versions and a page of its rows.
func (h *Handler) ShowAPIDataset(ctx context.Context, in *ShowDatasetInput) (*ShowDatasetOutput, error) {
	u := apiUser(ctx)
	off, err := rowOffset(in.Cursor)
	if err != nil {
		return nil, err
	}
	d, err := h.store.Dataset(ctx, u.ID, in.ID)
	if err != nil {
		return nil, datasetProblem(err)
	}
	versions, err := h.store.DatasetVersions(ctx, u.ID, d.ID)
	if err != nil {
		return nil, datasetProblem(err)
	}
	shown := in.Version
	if shown == 0 {
		shown = d.Version
	}
	out := DatasetDetail{DatasetSummary: datasetSummary(d), Shown: shown, Versions: []DatasetVersionItem{}}
	found := false
	for _, v := range versions {
		cols := v.Columns
		if cols == nil {
			cols = []string{}
		}
		out.Versions = append(out.Versions, DatasetVersionItem{Version: v.Version, Columns: cols, Rows: v.Rows, Note: v.Note, SavedAt: v.SavedAt, SavedBy: v.SavedBy})
		if v.Version == shown {
			found = true
			out.Columns, out.Rows = cols, v.Rows
		}
	}
	if !found {
		return nil, apiNotFound("version " + strconv.Itoa(shown) + " of this dataset")
	}
	rows, err := h.store.DatasetRows(ctx, u.ID, d.ID, shown, off, in.Limit+1)
	if errors.Is(err, db.ErrNotFound) {
		return nil, apiNotFound("dataset")
	} else if err != nil {
		return nil, err
	}
	out.RowPage = Page[DatasetRowItem]{Items: make([]DatasetRowItem, 0, min(len(rows), in.Limit))}
	for i, r := range rows {
		if i == in.Limit {
			out.RowPage.NextCursor = rowCursor(off + in.Limit)
			break
		}
		out.RowPage.Items = append(out.RowPage.Items, rowItem(r))
	}
	return &ShowDatasetOutput{Body: out}, nil
}
