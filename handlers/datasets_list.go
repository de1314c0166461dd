package handlers

import (
	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/views"
)

// ShowDatasetsPage lists the user's datasets and the team's, newest
// first.
func (h *Handler) ShowDatasetsPage(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	all, err := h.store.Datasets(ctx(c), u.ID)
	if err != nil {
		return err
	}
	v := views.DatasetsView{Page: h.page(c, "Datasets", "datasets")}
	for _, d := range all {
		v.Rows = append(v.Rows, views.DatasetListRow{ID: d.ID, Name: d.Name, Rows: d.Rows, Version: d.Version, Owner: d.OwnerName,
			Mine: d.OwnerID == u.ID, Team: d.Visibility == db.PresetTeam, Updated: when(d.UpdatedAt)})
	}
	return Render(c, fiber.StatusOK, views.DatasetsPage(v))
}
