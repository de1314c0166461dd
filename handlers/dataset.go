package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"knobs/dataset"
	"knobs/db"
	"knobs/field"
)

// DatasetUploadLimit bounds the body of a dataset upload: a file of the
// dataset package's largest size and the multipart framing around it.
// Every other request keeps MaxBody (see web/app.go).
const DatasetUploadLimit = 50<<20 + 1<<20

// DatasetUploadPaths are the routes that take a dataset file, POSTed.
var DatasetUploadPaths = []string{"/api/v1/datasets/import", "/datasets"}

// DatasetTooLarge is what a user sees for an upload over
// DatasetUploadLimit, which is refused before Knobs reads it.
var DatasetTooLarge = fmt.Sprintf("The file is too large: a dataset file is at most %d MB. Nothing was saved.", dataset.DefaultLimits.MaxBytes>>20)

// Bounds of a dataset's own fields and pages.
const (
	maxDatasetName  = 100
	maxDatasetDesc  = 2000
	datasetPageRows = 50 // rows on one page of the grid
)

func datasetPath(id int64) string { return "/datasets/" + strconv.FormatInt(id, 10) }

// datasetFields checks a dataset's name, description and visibility;
// it answers the first two trimmed.
func datasetFields(name, desc, visibility string) (string, string, field.Errors) {
	fe := field.Errors{}
	name, desc = strings.TrimSpace(name), strings.TrimSpace(desc)
	switch {
	case name == "":
		fe.Add("name", "Give the dataset a name.")
	case utf8.RuneCountInString(name) > maxDatasetName:
		fe.Add("name", fmt.Sprintf("A name is at most %d characters.", maxDatasetName))
	case !utf8.ValidString(name):
		fe.Add("name", "The name is not valid text (UTF-8).")
	}
	if utf8.RuneCountInString(desc) > maxDatasetDesc {
		fe.Add("description", fmt.Sprintf("A description is at most %d characters.", maxDatasetDesc))
	}
	if visibility != "" && visibility != db.PresetPrivate && visibility != db.PresetTeam {
		fe.Add("visibility", "Choose private or team.")
	}
	return name, desc, fe
}

// tableRows is a file's table as the store keeps its rows.
func tableRows(t dataset.Table) []db.DatasetRow {
	out := make([]db.DatasetRow, len(t.Rows))
	for i, r := range t.Rows {
		out[i] = db.DatasetRow{Vars: r.Vars, Expected: r.Expected, Tags: r.Tags}
	}
	return out
}

// rowsTable is stored rows as the dataset package writes them.
func rowsTable(cols []string, rows []db.DatasetRow) dataset.Table {
	t := dataset.Table{Columns: cols, Rows: make([]dataset.Row, len(rows))}
	for i, r := range rows {
		t.Rows[i] = dataset.Row{Vars: r.Vars, Expected: r.Expected, Tags: r.Tags}
	}
	return t
}

// readRowLines reads rows given one JSON object a line (as JSON Lines:
// {"vars": {...}, "expected": ..., "tags": ...}) by the dataset
// package's rules, so that rows sent to the API or typed into the grid
// are checked exactly as a file's. An *dataset.Error's line is the row's
// number from 1.
func readRowLines(lines [][]byte) (dataset.Table, error) {
	return dataset.ReadJSONL(bytes.NewReader(bytes.Join(lines, []byte("\n"))), dataset.DefaultLimits)
}

// rowLine is a row in the shape readRowLines reads, its variables in
// the order given.
func rowLine(vars, expected, tags json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"vars":`)
	if len(vars) == 0 {
		b.WriteString("{}")
	} else {
		_ = json.Compact(&b, vars) // decoded as JSON already
	}
	for _, m := range []struct {
		name string
		v    json.RawMessage
	}{{"expected", expected}, {"tags", tags}} {
		if len(m.v) > 0 {
			b.WriteString(`,"` + m.name + `":`)
			_ = json.Compact(&b, m.v)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// mergeColumns adds the variables of rows that cols lacks, in the order
// they come; a name that differs from a column only by case is an error
// for the user.
func mergeColumns(cols, more []string) ([]string, string) {
	out := append([]string(nil), cols...)
	seen := map[string]string{}
	for _, c := range cols {
		seen[strings.ToLower(c)] = c
	}
	for _, c := range more {
		prev, ok := seen[strings.ToLower(c)]
		switch {
		case ok && prev != c:
			return nil, fmt.Sprintf("the variable %q differs from the column %q only by case; use %q", c, prev, prev)
		case !ok:
			seen[strings.ToLower(c)] = c
			out = append(out, c)
		}
	}
	return out, ""
}

// readDatasetFile reads an uploaded or pasted file by the dataset
// package's rules: a *dataset.Error is the user's to fix.
func readDatasetFile(name string, r io.Reader) (dataset.Table, error) {
	return dataset.Read(name, r, dataset.DefaultLimits)
}

// allDatasetRows reads every row of a version, for an export: at most
// the package's row limit, a page at a time.
func (h *Handler) allDatasetRows(ctx context.Context, viewer, id int64, version int) ([]db.DatasetRow, error) {
	var out []db.DatasetRow
	const batch = 5000
	for off := 0; off <= dataset.DefaultLimits.MaxRows; off += batch {
		rows, err := h.store.DatasetRows(ctx, viewer, id, version, off, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
		if len(rows) < batch {
			break
		}
	}
	return out, nil
}

// writeDatasetExport writes a version's rows as format ("csv" or
// "jsonl").
func writeDatasetExport(w io.Writer, cols []string, rows []db.DatasetRow, format string) error {
	t := rowsTable(cols, rows)
	if format == "jsonl" {
		return dataset.WriteJSONL(w, t)
	}
	return dataset.WriteCSV(w, t)
}

// exportName is the file name of a dataset's export.
func exportName(d db.Dataset, version int, format string) string {
	name := clip(providerSlug(d.Name), 60)
	if name == "" {
		name = "dataset"
	}
	return fmt.Sprintf("%s-v%d.%s", name, version, format)
}

// exportType is the content type of an export format.
func exportType(format string) string {
	if format == "jsonl" {
		return "application/x-ndjson; charset=utf-8"
	}
	return "text/csv; charset=utf-8"
}

// datasetRefusal is how a page says the store refused a change.
func datasetRefusal(err error) error {
	switch {
	case errors.Is(err, db.ErrNotFound):
		return fiber.NewError(fiber.StatusNotFound, "There is no such dataset, or no such row in it.")
	case errors.Is(err, db.ErrForbidden):
		return fiber.NewError(fiber.StatusForbidden, "Only its owner or an admin can change this dataset.")
	}
	return err
}

// staleMessage is what a user sees when someone saved the dataset after
// the version their change was made on.
const staleMessage = "Someone saved a new version of this dataset since you loaded it: nothing was changed. Look at the latest version and make your change again."
