package handlers

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/dataset"
	"knobs/db"
	"knobs/field"
	"knobs/ordered"
	"knobs/views"
)

// editableDataset loads the dataset of the path for a change: 404 when
// the user does not see it, 403 when they may not change it.
func (h *Handler) editableDataset(c *fiber.Ctx) (db.Dataset, error) {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "dataset")
	if err != nil {
		return db.Dataset{}, err
	}
	d, err := h.store.Dataset(ctx(c), u.ID, id)
	if err != nil {
		return db.Dataset{}, datasetRefusal(err)
	}
	if d.OwnerID != u.ID && !u.IsAdmin() {
		return db.Dataset{}, datasetRefusal(db.ErrForbidden)
	}
	return d, nil
}

// formRow reads a row of the grid from the form: a value per column
// (an empty one the row lacked stays lacking), expected (empty: none)
// and tags, checked by the dataset package's rules.
func formRow(c *fiber.Ctx, cols []string) (db.DatasetRow, views.DatasetRowView, string, error) {
	var lacks []string
	for _, l := range c.Request().PostArgs().PeekMulti("lacks") {
		lacks = append(lacks, string(l))
	}
	sent := views.DatasetRowView{Expected: c.FormValue("expected"), Tags: c.FormValue("tags")}
	var line struct {
		Vars     *ordered.Object `json:"vars"`
		Expected *string         `json:"expected,omitempty"`
		Tags     string          `json:"tags,omitempty"`
	}
	line.Vars = ordered.NewObject()
	for _, col := range cols {
		val := c.FormValue("var." + col)
		sent.Values = append(sent.Values, views.DatasetCell{Column: col, Value: val})
		if val == "" && slices.Contains(lacks, col) {
			continue
		}
		line.Vars.Set(col, val)
	}
	if sent.Expected != "" {
		line.Expected = &sent.Expected
	}
	line.Tags = sent.Tags
	b, err := json.Marshal(line)
	if err != nil {
		return db.DatasetRow{}, sent, "", err
	}
	t, err := readRowLines([][]byte{b})
	var de *dataset.Error
	if errors.As(err, &de) {
		return db.DatasetRow{}, sent, de.Message, nil
	} else if err != nil {
		return db.DatasetRow{}, sent, "", err
	}
	return tableRows(t)[0], sent, "", nil
}

// saveDatasetEdit saves e and sends the user back to the page they were
// on, or shows it again with why nothing was saved.
func (h *Handler) saveDatasetEdit(c *fiber.Ctx, d db.Dataset, e db.DatasetEdit, errKey string, add *views.DatasetRowView) error {
	u, _ := CurrentUser(c)
	e.Base = formInt(c, "base")
	saved, err := h.store.EditDataset(ctx(c), u.ID, u.IsAdmin(), d.ID, e)
	switch {
	case errors.Is(err, db.ErrDatasetStale):
		return h.renderDataset(c, fiber.StatusConflict, field.Errors{errKey: staleMessage}, add)
	case errors.Is(err, db.ErrNotFound):
		return h.renderDataset(c, fiber.StatusNotFound, field.Errors{errKey: "That row is not in the latest version any more: nothing was changed."}, add)
	case err != nil:
		return datasetRefusal(err)
	}
	path := datasetPath(d.ID)
	if p := formInt(c, "page"); p > 1 {
		path += "?page=" + strconv.Itoa(p)
	}
	return redirectWith(c, path, e.Note+": saved as version "+strconv.Itoa(saved.Version)+".")
}
