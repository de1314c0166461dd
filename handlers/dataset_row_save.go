package handlers

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
)

// SaveDatasetRow saves a row edited in the grid as the dataset's next
// version.
func (h *Handler) SaveDatasetRow(c *fiber.Ctx) error {
	d, err := h.editableDataset(c)
	if err != nil {
		return err
	}
	key, err := strconv.ParseInt(c.Params("key"), 10, 64)
	if err != nil || key <= 0 {
		return fiber.NewError(fiber.StatusNotFound, "There is no such row.")
	}
	errKey := "row-" + strconv.FormatInt(key, 10)
	row, _, msg, err := formRow(c, d.Columns)
	if err != nil {
		return err
	}
	if msg != "" {
		return h.renderDataset(c, fiber.StatusUnprocessableEntity, field.Errors{errKey: "Nothing was saved: " + msg}, nil)
	}
	row.Key = key
	return h.saveDatasetEdit(c, d, db.DatasetEdit{Change: []db.DatasetRow{row}, Note: "Changed a row"}, errKey, nil)
}
