package handlers

import (
	"errors"
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
	name, desc, fe := datasetFields(v.Name, v.Description, vis)
	var t dataset.Table
	var err error
	fh, ferr := c.FormFile("file")
	switch {
	case ferr == nil && fh.Size > 0:
		f, oerr := fh.Open()
		if oerr != nil {
			return oerr
		}
		defer f.Close()
		t, err = readDatasetFile(fh.Filename, f)
	case strings.TrimSpace(v.Text) != "":
		t, err = dataset.ReadPasted(v.Text, dataset.DefaultLimits)
	default:
		fe.Add("file", "Choose a file or paste rows.")
	}
	var de *dataset.Error
	if errors.As(err, &de) {
		fe.Add("file", "Nothing was imported: "+de.Error())
	} else if err != nil {
		return err
	}
	if len(v.Text) > maxEchoed {
		v.Text = ""
	}
	if !fe.Empty() {
		return h.renderNewDataset(c, v, fe)
	}
	d, err := h.store.CreateDataset(ctx(c), db.Dataset{OwnerID: u.ID, Name: name, Description: desc, Visibility: vis, Columns: t.Columns}, tableRows(t))
	if err != nil {
		return err
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
