package handlers

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/views"
)

// ShowPricesPage lists every model with the price its runs are costed
// at and where it comes from; an admin gets a form to set one, filled
// from ?provider=&model= (the usage page's "Set a price" links).
func (h *Handler) ShowPricesPage(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	f := views.PriceForm{Provider: c.Query("provider"), Model: c.Query("model")}
	return h.renderPrices(c, fiber.StatusOK, f, u.ID, u.IsAdmin())
}

func (h *Handler) renderPrices(c *fiber.Ctx, status int, f views.PriceForm, user int64, admin bool) error {
	list, err := h.priceList(ctx(c), user)
	if err != nil {
		return err
	}
	providers, err := h.providerList(ctx(c))
	if err != nil {
		return err
	}
	v := views.PricesView{Page: h.page(c, "Prices", "usage"), IsAdmin: admin, Form: f}
	for _, p := range providers {
		v.Providers = append(v.Providers, p.ID)
	}
	for _, it := range list {
		r := views.PriceRowView{Provider: it.Provider, Model: it.Model, Input: perMillion(it.Input), Output: perMillion(it.Output),
			Cached: perMillion(it.CachedInput), Reasoning: perMillion(it.Reasoning), Source: it.Source,
			EditURL: "/usage/prices?" + url.Values{"provider": {it.Provider}, "model": {it.Model}}.Encode() + "#set-price"}
		switch {
		case it.SetAt != nil && it.Source == priceFromAdmin:
			r.Set = "set " + it.SetAt.Format("2006-01-02 15:04") + " UTC"
			if it.SetBy != "" {
				r.Set += " by " + it.SetBy
			}
		case it.SetAt != nil:
			r.Set = "listed since " + it.SetAt.Format("2006-01-02 15:04") + " UTC"
		case it.Source == priceFromProvider:
			r.Set = "Knobs' built-in list"
		}
		if it.Provider == f.Provider && it.Model == f.Model && f.Input == "" && f.Errors.Empty() && it.Input != nil {
			v.Form.Input, v.Form.Output = strconv.FormatFloat(*it.Input, 'f', -1, 64), strconv.FormatFloat(*it.Output, 'f', -1, 64)
			v.Form.Cached, v.Form.Reasoning = strconv.FormatFloat(*it.CachedInput, 'f', -1, 64), strconv.FormatFloat(*it.Reasoning, 'f', -1, 64)
		}
		v.Rows = append(v.Rows, r)
	}
	return Render(c, status, views.PricesPage(v))
}

// perMillion writes a price, or a dash when there is none.
func perMillion(p *float64) string {
	if p == nil {
		return "—"
	}
	return "$" + strconv.FormatFloat(*p, 'f', -1, 64)
}
