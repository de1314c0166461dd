package handlers

import (
	"bytes"
	"strconv"

	"github.com/gofiber/fiber/v2"
)

// ExportDataset downloads a version of a dataset (?version=, the latest
// by default) as CSV or JSON Lines (?format=csv|jsonl).
func (h *Handler) ExportDataset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "dataset")
	if err != nil {
		return err
	}
	format := c.Query("format", "csv")
	if format != "csv" && format != "jsonl" {
		return fiber.NewError(fiber.StatusBadRequest, "Export as csv or jsonl.")
	}
	d, err := h.store.Dataset(ctx(c), u.ID, id)
	if err != nil {
		return datasetRefusal(err)
	}
	version := d.Version
	if n, err := strconv.Atoi(c.Query("version")); err == nil && n > 0 {
		version = n
	}
	v, err := h.store.DatasetVersion(ctx(c), u.ID, id, version)
	if err != nil {
		return datasetRefusal(err)
	}
	rows, err := h.allDatasetRows(ctx(c), u.ID, id, version)
	if err != nil {
		return datasetRefusal(err)
	}
	var b bytes.Buffer
	if err := writeDatasetExport(&b, v.Columns, rows, format); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, exportType(format))
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+exportName(d, version, format)+`"`)
	return c.Send(b.Bytes())
}
