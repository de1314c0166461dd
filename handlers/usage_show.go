package handlers

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/views"
)

// usageInput reads the usage page's query: the API's parameters.
func usageInput(c *fiber.Ctx) (UsageInput, error) {
	in := UsageInput{From: c.Query("from"), To: c.Query("to"), GroupBy: c.Query("group_by")}
	if s := c.Query("user"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id < 0 {
			return in, fiber.NewError(fiber.StatusBadRequest, "The user is a user's id.")
		}
		in.User = id
	}
	return in, nil
}

// ShowUsagePage shows calls, tokens and cost between two days (this
// month by default), grouped, with a chart of cost per day by model and
// the models used without a price: everyone's for an admin, the user's
// own for a member (another user's is refused, 403).
func (h *Handler) ShowUsagePage(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	in, err := usageInput(c)
	if err != nil {
		return err
	}
	q, fe, err := usageQuery(u, in, h.now())
	if err != nil {
		return err
	}
	v := views.UsageView{Page: h.page(c, "Usage", "usage"), GroupBy: q.GroupBy, Groupings: db.UsageGroupings, IsAdmin: u.IsAdmin(),
		From: cmp.Or(in.From, q.From.Format(dateLayout)), To: cmp.Or(in.To, q.To.Format(dateLayout)), Errors: fe}
	if u.IsAdmin() {
		v.UserID = strconv.FormatInt(q.UserID, 10)
		users, err := h.store.Users(ctx(c))
		if err != nil {
			return err
		}
		for _, o := range users {
			v.Users = append(v.Users, views.KeyValue{Key: strconv.FormatInt(o.ID, 10), Value: o.Username})
		}
	}
	if !fe.Empty() {
		v.CSV = "/usage.csv"
		return Render(c, fiber.StatusUnprocessableEntity, views.UsagePage(v))
	}
	rep, err := h.store.Usage(ctx(c), q)
	if err != nil {
		return err
	}
	days, err := h.store.UsageByDayAndModel(ctx(c), q.From, q.To, q.UserID)
	if err != nil {
		return err
	}
	for _, r := range rep.Rows {
		v.Rows = append(v.Rows, usageRowView(r.Key, r.UsageFigures))
	}
	v.Total = usageRowView("total", rep.Total)
	v.Chart = usageChart(q.From, q.To, days)
	v.Unpriced = unpricedModels(days, u.IsAdmin())
	query := url.Values{"from": {v.From}, "to": {v.To}, "group_by": {q.GroupBy}}
	if u.IsAdmin() && q.UserID != 0 {
		query.Set("user", v.UserID)
	}
	v.CSV = "/usage.csv?" + query.Encode()
	return Render(c, fiber.StatusOK, views.UsagePage(v))
}

// usd writes a cost for people: cents, or four places under a cent.
func usd(v float64) string {
	if v != 0 && v < 0.01 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

func usageRowView(key string, f db.UsageFigures) views.UsageRowView {
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	return views.UsageRowView{Key: key, Calls: i(f.Calls), Errors: i(f.Errors), Input: i(f.InputTokens), Output: i(f.OutputTokens),
		Cached: i(f.CachedTokens), Reasoning: i(f.ReasoningTokens), Cost: usd(f.CostUSD),
		UnpricedCalls: i(f.UnpricedCalls), HasUnpriced: f.UnpricedCalls > 0}
}

// chartColours tell the chart's models apart, light and dark; past the
// last, models are drawn together as "other".
var chartColours = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1"}

const chartOther = "#9c9c9c"

// usageChart draws cost per day by model as stacked bars, one slot per
// day from from to to, the costliest models in colour and the rest as
// "other". Its viewBox is about a phone's width, so that its text stays
// readable at 390 px; it scales up on wider pages.
func usageChart(from, to time.Time, days []db.DayModelCost) views.UsageChart {
	const width, height, left, bottom, top = 360, 200, 56, 24, 12
	ch := views.UsageChart{Width: width, Height: height}
	byModel := map[string]float64{}
	perDay := map[string]float64{}
	for _, d := range days {
		byModel[d.Provider+"/"+d.Model] += d.CostUSD
		perDay[d.Day.Format(dateLayout)] += d.CostUSD
	}
	models := make([]string, 0, len(byModel))
	for m, c := range byModel {
		if c > 0 {
			models = append(models, m)
		}
	}
	if len(models) == 0 {
		ch.Empty = true
		return ch
	}
	slices.SortFunc(models, func(a, b string) int { return cmp.Or(cmp.Compare(byModel[b], byModel[a]), cmp.Compare(a, b)) })
	colour := map[string]string{}
	for i, m := range models {
		if i < len(chartColours) {
			colour[m] = chartColours[i]
			ch.Legend = append(ch.Legend, views.ChartKey{Name: m, Fill: chartColours[i]})
		} else {
			colour[m] = chartOther
		}
	}
	if len(models) > len(chartColours) {
		ch.Legend = append(ch.Legend, views.ChartKey{Name: "other models", Fill: chartOther})
	}
	peak := 0.0
	for _, c := range perDay {
		peak = max(peak, c)
	}
	first := from.UTC().Truncate(24 * time.Hour)
	slots := int(to.UTC().Truncate(24*time.Hour).Sub(first)/(24*time.Hour)) + 1
	slot := float64(width-left) / float64(slots)
	plot := float64(height - bottom - top)
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
	// A bar takes most of its day's slot, but no more than 40 units when
	// there are only a few days.
	w := min(max(slot*0.8, 0.5), 40)
	// Each day's bar is a rect per coloured model and one for the other
	// models together, on top: a year of many models stays a page of a
	// few thousand rects at most.
	for start := 0; start < len(days); {
		end := start
		for end < len(days) && days[end].Day.Equal(days[start].Day) {
			end++
		}
		day := days[start].Day.Format(dateLayout)
		x := f(left + float64(int(days[start].Day.Sub(first)/(24*time.Hour)))*slot + (slot-w)/2)
		stacked, other := 0.0, 0.0
		bar := func(cost float64, fill, name string) {
			h := cost / peak * plot
			stacked += h
			ch.Bars = append(ch.Bars, views.ChartBar{X: x, Y: f(float64(height-bottom) - stacked), W: f(w), H: f(h),
				Fill: fill, Title: day + " · " + name + " · " + usd(cost)})
		}
		for _, d := range days[start:end] {
			switch name := d.Provider + "/" + d.Model; {
			case d.CostUSD <= 0:
			case colour[name] == chartOther:
				other += d.CostUSD
			default:
				bar(d.CostUSD, colour[name], name)
			}
		}
		if other > 0 {
			bar(other, chartOther, "other models")
		}
		start = end
	}
	ch.Labels = []views.ChartLabel{
		{X: f(left - 4), Y: f(top + 4), Text: usd(peak), Anchor: "end"},
		{X: f(left - 4), Y: f(height - bottom), Text: "$0", Anchor: "end"},
		{X: f(left), Y: f(height - 6), Text: first.Format("Jan 2"), Anchor: "start"},
	}
	if slots > 1 {
		ch.Labels = append(ch.Labels, views.ChartLabel{X: f(width), Y: f(height - 6), Text: to.UTC().Format("Jan 2"), Anchor: "end"})
	}
	ch.Summary = fmt.Sprintf("Cost per day by model, %s to %s: the costliest day %s; by model, %s.", first.Format(dateLayout),
		to.UTC().Format(dateLayout), usd(peak), modelCosts(models, byModel))
	return ch
}

func modelCosts(models []string, byModel map[string]float64) string {
	s := ""
	for i, m := range models {
		if i == 5 {
			s += fmt.Sprintf(" and %d more", len(models)-5)
			break
		}
		if i > 0 {
			s += ", "
		}
		s += m + " " + usd(byModel[m])
	}
	return s
}

// unpricedModels lists the models called without a price, most calls
// first, with an admin's link to price each.
func unpricedModels(days []db.DayModelCost, admin bool) []views.UnpricedModel {
	type sum struct{ calls, tokens int64 }
	byModel := map[[2]string]*sum{}
	var keys [][2]string
	for _, d := range days {
		if d.UnpricedCalls == 0 {
			continue
		}
		k := [2]string{d.Provider, d.Model}
		if byModel[k] == nil {
			byModel[k] = &sum{}
			keys = append(keys, k)
		}
		byModel[k].calls += d.UnpricedCalls
		byModel[k].tokens += d.UnpricedTokens
	}
	slices.SortFunc(keys, func(a, b [2]string) int { return cmp.Compare(byModel[b].calls, byModel[a].calls) })
	out := make([]views.UnpricedModel, 0, len(keys))
	for _, k := range keys {
		m := views.UnpricedModel{Provider: k[0], Model: k[1], Calls: strconv.FormatInt(byModel[k].calls, 10), Tokens: strconv.FormatInt(byModel[k].tokens, 10)}
		if admin {
			m.SetURL = "/usage/prices?" + url.Values{"provider": {k[0]}, "model": {k[1]}}.Encode() + "#set-price"
		}
		out = append(out, m)
	}
	return out
}
