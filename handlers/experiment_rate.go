package handlers

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// RateExperimentCell saves the user's thumbs and note on a cell, as the
// API does (RateAPICell: the same checks and the same store call), then
// goes back to the page it came from; the page script asks for JSON and
// stays where it is.
func (h *Handler) RateExperimentCell(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "experiment")
	if err != nil {
		return err
	}
	cell, err := strconv.ParseInt(c.Params("cell"), 10, 64)
	if err != nil || cell <= 0 {
		return fiber.NewError(fiber.StatusNotFound, "There is no such cell.")
	}
	in := &RateCellInput{ID: id, Cell: cell}
	in.Body.Note = c.FormValue("note")
	thumbs := c.FormValue("thumbs")
	if thumbs == "keep" {
		thumbs = c.FormValue("current")
	}
	switch thumbs {
	case "up", "down":
		up := thumbs == "up"
		in.Body.Thumbs = &up
	}
	_, err = h.RateAPICell(apiContext(c, u), in)
	var p *Problem
	wantsJSON := strings.Contains(c.Get(fiber.HeaderAccept), fiber.MIMEApplicationJSON)
	switch {
	case errors.As(err, &p) && p.Status == fiber.StatusNotFound:
		return fiber.NewError(fiber.StatusNotFound, p.Message)
	case errors.As(err, &p) && p.Status == fiber.StatusUnprocessableEntity:
		msg := p.Fields.Describe()
		if wantsJSON {
			return c.Status(fiber.StatusUnprocessableEntity).JSON(fiber.Map{"error": msg})
		}
		return redirectWith(c, experimentBack(c, id), "The rating was not saved: "+msg)
	case err != nil:
		return err
	}
	if wantsJSON {
		return c.JSON(fiber.Map{"thumbs": thumbs, "note": strings.TrimSpace(in.Body.Note)})
	}
	return redirectWith(c, experimentBack(c, id)+"#cell-"+strconv.FormatInt(cell, 10), "")
}

// experimentBack is the experiment's page the form was on (with its
// filter and page), or its first page.
func experimentBack(c *fiber.Ctx, id int64) string {
	page := "/experiments/" + strconv.FormatInt(id, 10)
	back := c.FormValue("back")
	if back == page || strings.HasPrefix(back, page+"?") {
		return back
	}
	return page
}
