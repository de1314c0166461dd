package handlers

import (
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/dataset"
	"knobs/db"
	"knobs/field"
)

// RemoveDatasetRows removes the rows selected in the grid, as the
// dataset's next version; older versions keep them.
func (h *Handler) RemoveDatasetRows(c *fiber.Ctx) error {
	d, err := h.editableDataset(c)
	if err != nil {
		return err
	}
	var keys []int64
	for _, k := range c.Request().PostArgs().PeekMulti("keys") {
		key, err := strconv.ParseInt(string(k), 10, 64)
		if err != nil || key <= 0 {
			return fiber.NewError(fiber.StatusBadRequest, "Row keys are whole numbers.")
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return h.renderDataset(c, fiber.StatusUnprocessableEntity, field.Errors{"rows": "Select the rows to remove first."}, nil)
	}
	if len(keys) > dataset.DefaultLimits.MaxRows {
		return fiber.NewError(fiber.StatusBadRequest, "Too many rows selected.")
	}
	return h.saveDatasetEdit(c, d, db.DatasetEdit{Remove: keys, Note: fmt.Sprintf("Removed %s", rowsText(len(keys)))}, "rows", nil)
}
