package handlers

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/views"
)

// ShowDatasetPage shows a page of a dataset's rows as a grid, at its
// latest version (editable by its owner or an admin) or, with
// ?version=, at an older one (read-only), with its versions.
func (h *Handler) ShowDatasetPage(c *fiber.Ctx) error {
	return h.renderDataset(c, fiber.StatusOK, nil, nil)
}

// renderDataset shows the dataset page; errs and add (the add-row form
// as sent) come with a refused change.
func (h *Handler) renderDataset(c *fiber.Ctx, status int, errs field.Errors, add *views.DatasetRowView) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "dataset")
	if err != nil {
		return err
	}
	d, err := h.store.Dataset(ctx(c), u.ID, id)
	if err != nil {
		return datasetRefusal(err)
	}
	versions, err := h.store.DatasetVersions(ctx(c), u.ID, id)
	if err != nil {
		return datasetRefusal(err)
	}
	shown := d.Version
	if n, err := strconv.Atoi(c.Query("version")); err == nil && n > 0 {
		shown = n
	}
	v := views.DatasetView{Page: h.page(c, d.Name, "datasets"), ID: d.ID, Name: d.Name, Description: d.Description,
		Owner: d.OwnerName, Team: d.Visibility == db.PresetTeam, Latest: d.Version, Shown: shown,
		CanEdit: d.OwnerID == u.ID || u.IsAdmin(), Errors: errs}
	v.Editable = v.CanEdit && shown == d.Version
	found := false
	for _, ver := range versions {
		v.Versions = append(v.Versions, views.DatasetVersionRow{Version: ver.Version, Rows: ver.Rows, SavedBy: ver.SavedBy,
			SavedAt: when(ver.SavedAt), Note: ver.Note, Shown: ver.Version == shown})
		if ver.Version == shown {
			found = true
			v.Columns, v.RowCount = ver.Columns, ver.Rows
		}
	}
	if !found {
		return fiber.NewError(fiber.StatusNotFound, "This dataset has no version "+strconv.Itoa(shown)+".")
	}
	pages := max(1, (v.RowCount+datasetPageRows-1)/datasetPageRows)
	v.PageNo = min(max(1, formInt(c, "page")), pages)
	rows, err := h.store.DatasetRows(ctx(c), u.ID, id, shown, (v.PageNo-1)*datasetPageRows, datasetPageRows)
	if err != nil {
		return datasetRefusal(err)
	}
	for i, r := range rows {
		v.Rows = append(v.Rows, rowView(v.Columns, r, (v.PageNo-1)*datasetPageRows+i+1))
	}
	pageURL := func(n int) string {
		q := "?page=" + strconv.Itoa(n)
		if shown != d.Version {
			q += "&version=" + strconv.Itoa(shown)
		}
		return datasetPath(id) + q
	}
	if v.PageNo > 1 {
		v.PrevURL = pageURL(v.PageNo - 1)
	}
	if v.PageNo < pages {
		v.NextURL = pageURL(v.PageNo + 1)
	}
	if add != nil {
		v.Add = *add
	} else {
		for _, col := range v.Columns {
			v.Add.Values = append(v.Add.Values, views.DatasetCell{Column: col})
		}
	}
	return Render(c, status, views.DatasetPage(v))
}

// formInt reads a whole number from the query or the form; 0 when absent
// or not a number.
func formInt(c *fiber.Ctx, name string) int {
	s := c.Query(name)
	if s == "" && c.Method() == fiber.MethodPost {
		s = c.FormValue(name)
	}
	n, _ := strconv.Atoi(s)
	return n
}

func rowView(cols []string, r db.DatasetRow, number int) views.DatasetRowView {
	rv := views.DatasetRowView{Key: r.Key, Number: number, Tags: strings.Join(r.Tags, ", ")}
	for _, col := range cols {
		val, ok := r.Vars[col]
		rv.Values = append(rv.Values, views.DatasetCell{Column: col, Value: val, Lacks: !ok})
	}
	if r.Expected != nil {
		rv.Expected = *r.Expected
	}
	return rv
}
