package handlers

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/dataset"
	"knobs/db"
	"knobs/views"
)

// maxEchoed bounds the pasted text shown again with a message: more
// would make a page as large as the paste.
const maxEchoed = 256 << 10

// CreateDataset makes a dataset from an uploaded file or pasted rows,
// all of it or, at the first problem, nothing, shown at its line and
// column.
func (h *Handler) CreateDataset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	v := views.NewDatasetView{Name: c.FormValue("name"), Description: c.FormValue("description"),
		Team: c.FormValue("visibility") == db.PresetTeam, Text: c.FormValue("text")}
	vis := db.PresetPrivate
	if v.Team {
		vis = db.PresetTeam
	}
	var read func() (dataset.Table, error)
	fh, ferr := c.FormFile("file")
	switch {
	case ferr == nil && fh.Size > 0:
		f, err := fh.Open()
		if err != nil {
			return err
		}
		defer f.Close()
		read = func() (dataset.Table, error) { return readDatasetFile(fh.Filename, f) }
	case strings.TrimSpace(v.Text) != "":
		read = func() (dataset.Table, error) { return dataset.ReadPasted(v.Text, dataset.DefaultLimits) }
	}
	if len(v.Text) > maxEchoed {
		v.Text = ""
	}
	if read == nil {
		_, _, fe := datasetFields(v.Name, v.Description, vis)
		fe.Add("file", "Choose a file or paste rows.")
		return h.renderNewDataset(c, v, fe)
	}
	d, fe, err := h.newDataset(ctx(c), u.ID, v.Name, v.Description, vis, read)
	if err != nil {
		return err
	}
	if msg := fe["file"]; msg != "" {
		fe["file"] = "Nothing was imported: " + msg
	}
	if !fe.Empty() {
		return h.renderNewDataset(c, v, fe)
	}
	return redirectWith(c, datasetPath(d.ID), fmt.Sprintf("Created the dataset %s with %s.", d.Name, rowsText(d.Rows)))
}

// rowsText says n rows: "1 row", "3 rows".
func rowsText(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}
