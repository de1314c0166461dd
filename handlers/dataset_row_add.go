package handlers

import (
	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
)

// AddDatasetRow adds a row typed into the grid at the end, as the
// dataset's next version.
func (h *Handler) AddDatasetRow(c *fiber.Ctx) error {
	d, err := h.editableDataset(c)
	if err != nil {
		return err
	}
	row, sent, msg, err := formRow(c, d.Columns)
	if err != nil {
		return err
	}
	if msg != "" {
		return h.renderDataset(c, fiber.StatusUnprocessableEntity, field.Errors{"add": "Nothing was added: " + msg}, &sent)
	}
	return h.saveDatasetEdit(c, d, db.DatasetEdit{Add: []db.DatasetRow{row}, Note: "Added a row"}, "add", &sent)
}
