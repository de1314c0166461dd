package handlers

import (
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/views"
)

// SavePrice sets an admin's price for a model from the prices page's
// form, through the API's setPrice: the same checks and messages. A
// refused form is shown again with its fields' messages, nothing stored.
func (h *Handler) SavePrice(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	f := views.PriceForm{Provider: c.FormValue("provider"), Model: c.FormValue("model"), Input: c.FormValue("input"),
		Output: c.FormValue("output"), Cached: c.FormValue("cached_input"), Reasoning: c.FormValue("reasoning")}
	fe := field.Errors{}
	number := func(name, s string, optional bool) *float64 {
		s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "$"))
		if s == "" && optional {
			return nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			fe.Add(name, "Give a price from 0 to 100,000 dollars per million tokens.")
			return nil
		}
		return &v
	}
	in, out := number("input", f.Input, false), number("output", f.Output, false)
	p := PriceFields{CachedInput: number("cached_input", f.Cached, true), Reasoning: number("reasoning", f.Reasoning, true)}
	if in != nil && out != nil {
		p.Input, p.Output = *in, *out
	}
	if !u.IsAdmin() {
		return errAdminOnly
	}
	if fe.Empty() {
		item, more, err := h.setPrice(ctx(c), u, f.Provider, f.Model, p)
		if err != nil {
			return err
		}
		if more.Empty() {
			return redirectWith(c, "/usage/prices", "The price of "+item.Provider+"/"+item.Model+" is set; runs from now on are costed at it.")
		}
		fe = more
	}
	f.Errors = fe
	return h.renderPrices(c, fiber.StatusUnprocessableEntity, f, u.ID, true)
}

// RemovePrice takes an admin's price off a model from the prices page,
// back to the provider's listing.
func (h *Handler) RemovePrice(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	provider, model := c.FormValue("provider"), c.FormValue("model")
	err := h.removePrice(ctx(c), u, provider, model)
	if errors.Is(err, db.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "No admin's price is set for this model.")
	} else if err != nil {
		return err
	}
	return redirectWith(c, "/usage/prices?"+url.Values{"provider": {provider}, "model": {model}}.Encode(),
		"The price an admin set for "+provider+"/"+model+" is removed; the provider's listing prices its runs again.")
}
