package handlers

import (
	"github.com/gofiber/fiber/v2"

	"knobs/field"
	"knobs/views"
)

// ShowNewDatasetPage shows the form that makes a dataset from a file or
// pasted rows, or, with ?runs=1,2,3 (History's selection), from runs.
func (h *Handler) ShowNewDatasetPage(c *fiber.Ctx) error {
	v := views.NewDatasetView{Page: h.page(c, "New dataset", "datasets")}
	if runs := c.Query("runs"); runs != "" {
		ids, err := runIDs(runs)
		if err != nil {
			return err
		}
		v.Runs, v.NRuns = joinIDs(ids), len(ids)
	}
	return Render(c, fiber.StatusOK, views.NewDatasetPage(v))
}

// renderNewDataset shows the form again with what was sent and what is
// wrong with it.
func (h *Handler) renderNewDataset(c *fiber.Ctx, v views.NewDatasetView, errs field.Errors) error {
	v.Page, v.Errors = h.page(c, "New dataset", "datasets"), errs
	return Render(c, fiber.StatusUnprocessableEntity, views.NewDatasetPage(v))
}
