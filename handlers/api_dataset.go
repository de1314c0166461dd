package handlers

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/dataset"
	"knobs/db"
	"knobs/field"
)

// DatasetSummary is a dataset as the API lists it.
type DatasetSummary struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Visibility  string    `json:"visibility" enum:"private,team"`
	Owner       string    `json:"owner" doc:"The owner's username."`
	Version     int       `json:"version" doc:"The latest version."`
	Columns     []string  `json:"columns" nullable:"false" doc:"The variables of the latest version, in order."`
	Rows        int       `json:"rows" doc:"Rows in the latest version."`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func datasetSummary(d db.Dataset) DatasetSummary {
	cols := d.Columns
	if cols == nil {
		cols = []string{}
	}
	return DatasetSummary{ID: d.ID, Name: d.Name, Description: d.Description, Visibility: d.Visibility, Owner: d.OwnerName,
		Version: d.Version, Columns: cols, Rows: d.Rows, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

// DatasetRowItem is a row as the API answers it.
type DatasetRowItem struct {
	Key      int64             `json:"key" doc:"The row's identity across versions: name it to change or remove the row."`
	Vars     map[string]string `json:"vars" nullable:"false" doc:"A value per variable; a variable the row has no value for is absent."`
	Expected *string           `json:"expected" nullable:"true" doc:"The reference answer; null when the row has none."`
	Tags     []string          `json:"tags" nullable:"false"`
}

func rowItem(r db.DatasetRow) DatasetRowItem {
	it := DatasetRowItem{Key: r.Key, Vars: r.Vars, Expected: r.Expected, Tags: r.Tags}
	if it.Vars == nil {
		it.Vars = map[string]string{}
	}
	if it.Tags == nil {
		it.Tags = []string{}
	}
	return it
}

// DatasetRowInput is a row sent to the API, by the rules of a JSON Lines
// dataset file (see the dataset help).
type DatasetRowInput struct {
	Vars     map[string]any `json:"vars" doc:"A value per variable: a string, or a number or true/false taken as its JSON text; null means no value."`
	Expected any            `json:"expected,omitempty" doc:"The reference answer (a string), or null for none."`
	Tags     any            `json:"tags,omitempty" doc:"An array of tags, or one string of them separated by commas or spaces."`
	line     []byte
}

// UnmarshalJSON keeps the row as sent, with its variables in order, for
// the dataset package to read.
func (r *DatasetRowInput) UnmarshalJSON(b []byte) error {
	line, err := inputLine(b)
	if err != nil {
		return err
	}
	type plain DatasetRowInput
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	r.line = line
	return nil
}

// DatasetRowChange is a new content for a row, named by its key.
type DatasetRowChange struct {
	Key      int64          `json:"key" minimum:"1" doc:"The row's key."`
	Vars     map[string]any `json:"vars" doc:"The row's values, all of them."`
	Expected any            `json:"expected,omitempty"`
	Tags     any            `json:"tags,omitempty"`
	line     []byte
}

// UnmarshalJSON keeps the row as sent (see DatasetRowInput).
func (r *DatasetRowChange) UnmarshalJSON(b []byte) error {
	line, err := inputLine(b)
	if err != nil {
		return err
	}
	type plain DatasetRowChange
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	r.line = line
	return nil
}

func inputLine(b []byte) ([]byte, error) {
	var raw struct {
		Vars     json.RawMessage `json:"vars"`
		Expected json.RawMessage `json:"expected"`
		Tags     json.RawMessage `json:"tags"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	return rowLine(raw.Vars, raw.Expected, raw.Tags), nil
}

// rowErrors says which row of the API's input a dataset error is about:
// the error's line counts the rows of names, each a field named after
// the list ("rows[2]").
func rowErrors(err error, lists ...struct {
	name string
	n    int
}) (field.Errors, bool) {
	var de *dataset.Error
	if !errors.As(err, &de) {
		return nil, false
	}
	if de.Line == 0 {
		return field.Errors{lists[0].name: de.Message}, true
	}
	line := de.Line
	for _, l := range lists {
		if line <= l.n {
			return field.Errors{l.name + "[" + strconv.Itoa(line-1) + "]": de.Message}, true
		}
		line -= l.n
	}
	return field.Errors{lists[0].name: de.Message}, true
}

// rowList names a list of rows in the input for rowErrors.
func rowList(name string, n int) struct {
	name string
	n    int
} {
	return struct {
		name string
		n    int
	}{name, n}
}

// datasetProblem answers the store's refusals of a dataset change.
func datasetProblem(err error) error {
	switch {
	case errors.Is(err, db.ErrNotFound):
		return apiNotFound("dataset")
	case errors.Is(err, db.ErrForbidden):
		return &Problem{Status: fiber.StatusForbidden, Message: "Only its owner or an admin can change this dataset."}
	case errors.Is(err, db.ErrDatasetStale):
		return &Problem{Status: fiber.StatusConflict, Message: "base_version is not the dataset's latest version: someone saved it since. Fetch it again, and send its version as base_version."}
	}
	return err
}

// rowCursorTag starts a cursor into a dataset's rows.
const rowCursorTag = "row:"

// rowOffset is where a page of rows starts; a cursor Knobs did not give
// out is a field error.
func rowOffset(cursor string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	off, perr := strconv.Atoi(strings.TrimPrefix(string(raw), rowCursorTag))
	if err != nil || !strings.HasPrefix(string(raw), rowCursorTag) || perr != nil || off <= 0 {
		return 0, apiInvalid(field.Errors{"cursor": "This is not a cursor Knobs gave out: pass next_cursor from the previous page, or nothing."})
	}
	return off, nil
}

func rowCursor(off int) *string {
	s := base64.RawURLEncoding.EncodeToString([]byte(rowCursorTag + strconv.Itoa(off)))
	return &s
}
