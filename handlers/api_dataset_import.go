package handlers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"

	"github.com/gofiber/fiber/v2"

	"knobs/dataset"
	"knobs/db"
	"knobs/field"
)

// importTypes maps the content types a raw upload may have to the
// extension the dataset reader chooses its format by ("" sniffs).
var importTypes = map[string]string{
	"text/csv":                  ".csv",
	"text/tab-separated-values": ".tsv",
	"application/x-ndjson":      ".jsonl",
	"application/jsonl":         ".jsonl",
	"application/jsonlines":     ".jsonl",
	"text/plain":                "",
}

// ImportAPIDataset is POST /api/v1/datasets/import: a dataset file, as
// the multipart field "file" (with "name", and optionally "description"
// and "visibility") or as the raw body (text/csv,
// text/tab-separated-values or application/x-ndjson, with ?name=),
// saved as a new dataset of the caller's: 201 with it, or 422 with the
// line and column of the file's first problem and nothing saved. It is
// a plain route: huma would read the whole body before it could be
// checked, and the route takes bodies up to DatasetUploadLimit.
func (h *Handler) ImportAPIDataset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	mt, _, _ := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	var name, desc, vis, fileName string
	var body io.Reader
	if mt == fiber.MIMEMultipartForm {
		name, desc, vis = c.FormValue("name"), c.FormValue("description"), c.FormValue("visibility")
		fh, err := c.FormFile("file")
		if err != nil {
			return apiInvalid(field.Errors{"file": "Send the dataset file as the multipart field \"file\"."})
		}
		f, err := fh.Open()
		if err != nil {
			return err
		}
		defer f.Close()
		body, fileName = f, fh.Filename
	} else {
		ext, ok := importTypes[mt]
		if !ok {
			return &Problem{Status: fiber.StatusUnsupportedMediaType,
				Message: "Send the file as multipart/form-data (field \"file\"), or as the body with Content-Type text/csv, text/tab-separated-values or application/x-ndjson."}
		}
		name, desc, vis = c.Query("name"), c.Query("description"), c.Query("visibility")
		body, fileName = bytes.NewReader(c.Body()), "upload"+ext
	}
	d, fe, err := h.importDataset(c.UserContext(), u.ID, name, desc, vis, fileName, body)
	if err != nil {
		return err
	}
	if !fe.Empty() {
		return apiInvalid(fe)
	}
	return c.Status(fiber.StatusCreated).JSON(datasetSummary(d))
}

// importDataset reads a dataset file and saves it as a new dataset of
// owner's, whole or not at all: what is wrong with the name or the file
// comes back as field errors ("file": "line 3, column 7: …").
func (h *Handler) importDataset(ctx context.Context, owner int64, name, desc, vis, fileName string, r io.Reader) (db.Dataset, field.Errors, error) {
	return h.newDataset(ctx, owner, name, desc, vis, func() (dataset.Table, error) { return readDatasetFile(fileName, r) })
}

// newDataset checks a new dataset's name and the rows read, and saves
// it, whole or not at all: the upload of the API and of the page, and a
// paste. A problem with the rows is a field error "file" naming its line
// and column.
func (h *Handler) newDataset(ctx context.Context, owner int64, name, desc, vis string, read func() (dataset.Table, error)) (db.Dataset, field.Errors, error) {
	name, desc, fe := datasetFields(name, desc, vis)
	t, err := read()
	var de *dataset.Error
	if errors.As(err, &de) {
		fe.Add("file", de.Error())
	} else if err != nil {
		return db.Dataset{}, nil, err
	}
	if !fe.Empty() {
		return db.Dataset{}, fe, nil
	}
	d, err := h.store.CreateDataset(ctx, db.Dataset{OwnerID: owner, Name: name, Description: desc, Visibility: vis, Columns: t.Columns}, tableRows(t))
	return d, nil, err
}
