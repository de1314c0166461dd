package handlers

import (
	"context"
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/views"
)

// CreateExperiment is the new experiment form's every button: add a
// variant or a grader, check and estimate, or start. Checking and
// starting go through the API's own checks (planExperiment), so the page
// refuses what the API refuses with the same messages, at their fields;
// nothing is stored or sent until everything is right.
func (h *Handler) CreateExperiment(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	f := experimentFormOf(c)
	switch c.FormValue("action") {
	case "add_variant":
		if len(f.Variants) < ExperimentMaxVariants {
			f.Variants = append(f.Variants, views.VariantForm{})
		}
		return h.renderNewExperiment(c, fiber.StatusOK, f, nil, nil)
	case "add_grader":
		if len(f.Graders) < ExperimentMaxGraders {
			example := `{"type": "json"}`
			for _, g := range graderHelp {
				if g.Type == c.FormValue("add_grader_type") {
					example = g.Example
				}
			}
			f.Graders = append(f.Graders, example)
		}
		return h.renderNewExperiment(c, fiber.StatusOK, f, nil, nil)
	}
	in, slots, fe := experimentRequest(f)
	if !fe.Empty() {
		return h.renderNewExperiment(c, fiber.StatusUnprocessableEntity, f, fe, nil)
	}
	rctx := apiContext(c, u)
	plan, err := h.planExperiment(rctx, u, in)
	var p *Problem
	if errors.As(err, &p) && p.Status == fiber.StatusUnprocessableEntity {
		return h.renderNewExperiment(c, fiber.StatusUnprocessableEntity, f, formErrors(p.Fields, slots), nil)
	} else if err != nil {
		return err
	}
	if c.FormValue("action") != "start" {
		est, err := h.estimateExperiment(rctx, plan)
		if err != nil {
			return err
		}
		return h.renderNewExperiment(c, fiber.StatusOK, f, nil, &est)
	}
	e, err := h.startExperiment(rctx, u, plan)
	if err != nil {
		return err
	}
	return redirectWith(c, "/experiments/"+strconv.FormatInt(e.ID, 10), "The experiment started: cells fill in as they end.")
}

// apiContext is the request's context as the API's operations read it,
// with u as the caller (apiUser), for the pages that share their code.
// Not Fiber's own request context: that one is the connection's, which
// fasthttp reuses and shuts down under a query still reading it.
func apiContext(c *fiber.Ctx, u db.User) context.Context {
	return context.WithValue(c.UserContext(), userKey, u) //nolint:staticcheck // apiUser reads this key, as humafiber sets it
}
