package handlers

import (
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"
)

// CancelExperiment stops a running experiment from its page, as the API
// does (its owner or an admin): cells that ended are kept.
func (h *Handler) CancelExperiment(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "experiment")
	if err != nil {
		return err
	}
	_, err = h.CancelAPIExperiment(apiContext(c, u), &CancelExperimentInput{ID: id})
	var p *Problem
	if errors.As(err, &p) && p.Status < 500 {
		return fiber.NewError(p.Status, p.Message)
	} else if err != nil {
		return err
	}
	return redirectWith(c, "/experiments/"+strconv.FormatInt(id, 10), "The experiment was cancelled; the cells that ended are kept.")
}
