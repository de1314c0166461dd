package handlers

import (
	"bytes"
	"context"
	"strconv"
)

// ExportDatasetInput is GET /api/v1/datasets/{id}/export.
type ExportDatasetInput struct {
	ID      int64  `path:"id" minimum:"1" doc:"The dataset's id."`
	Format  string `query:"format" enum:"csv,jsonl" default:"csv" doc:"csv (with a byte order mark, spreadsheet-safe) or jsonl."`
	Version int    `query:"version" minimum:"0" doc:"The version to export; the latest when absent."`
}

// ExportDatasetOutput is a dataset file.
type ExportDatasetOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	Body               []byte
}

// ExportAPIDataset answers a version of a dataset the caller sees as a
// file that an upload reads back to the same rows.
func (h *Handler) ExportAPIDataset(ctx context.Context, in *ExportDatasetInput) (*ExportDatasetOutput, error) {
	u := apiUser(ctx)
	d, err := h.store.Dataset(ctx, u.ID, in.ID)
	if err != nil {
		return nil, datasetProblem(err)
	}
	version := in.Version
	if version == 0 {
		version = d.Version
	}
	v, err := h.store.DatasetVersion(ctx, u.ID, d.ID, version)
	if err != nil {
		return nil, apiNotFound("version " + strconv.Itoa(version) + " of this dataset")
	}
	rows, err := h.allDatasetRows(ctx, u.ID, d.ID, version)
	if err != nil {
		return nil, datasetProblem(err)
	}
	var b bytes.Buffer
	if err := writeDatasetExport(&b, v.Columns, rows, in.Format); err != nil {
		return nil, err
	}
	return &ExportDatasetOutput{ContentType: exportType(in.Format),
		ContentDisposition: `attachment; filename="` + exportName(d, version, in.Format) + `"`, Body: b.Bytes()}, nil
}
