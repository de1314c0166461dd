package handlers

import (
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/views"
)

// experimentsPerPage is how many experiments the list shows at once.
const experimentsPerPage = 50

// ShowExperimentsPage lists the user's experiments and the team's,
// newest first, a page at a time.
func (h *Handler) ShowExperimentsPage(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	es, err := h.store.Experiments(ctx(c), u.ID, before, experimentsPerPage+1)
	if err != nil {
		return err
	}
	v := views.ExperimentsView{Page: h.page(c, "Experiments", "experiments")}
	for i, e := range es {
		if i == experimentsPerPage {
			v.NextURL = "/experiments?before=" + strconv.FormatInt(es[i-1].ID, 10)
			break
		}
		v.Rows = append(v.Rows, views.ExperimentRow{ID: e.ID, Name: e.Name, Dataset: e.DatasetName, Status: e.Status,
			Done: e.Finished, Total: e.Total, Failed: e.Failed, Owner: e.OwnerName,
			Created: when(e.CreatedAt), CreatedISO: e.CreatedAt.Format(time.RFC3339)})
	}
	return Render(c, fiber.StatusOK, views.ExperimentsPage(v))
}
