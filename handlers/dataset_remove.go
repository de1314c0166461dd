package handlers

import (
	"github.com/gofiber/fiber/v2"
)

// RemoveDataset deletes a dataset with its rows and versions.
func (h *Handler) RemoveDataset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "dataset")
	if err != nil {
		return err
	}
	if err := h.store.RemoveDataset(ctx(c), u.ID, u.IsAdmin(), id); err != nil {
		return datasetRefusal(err)
	}
	return redirectWith(c, "/datasets", "Deleted the dataset.")
}
