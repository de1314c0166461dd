package handlers

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/views"
)

// dateLayout is how the filter's date fields are written (<input type=date>).
const dateLayout = "2006-01-02"

// ShowHistoryPage lists the user's runs, newest first, with filters and
// full-text search, a page at a time by keyset.
func (h *Handler) ShowHistoryPage(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	f := views.HistoryFilter{
		Query:    strings.TrimSpace(c.Query("q")),
		Provider: c.Query("provider"),
		Model:    c.Query("model"),
		Status:   c.Query("status"),
		From:     c.Query("from"),
		To:       c.Query("to"),
		Starred:  c.Query("starred") == "1",
	}
	f.Query = clip(f.Query, 200)
	f.HideExperiments = hideExperiments(c)
	filter := db.RunFilter{UserID: u.ID, Provider: f.Provider, Model: f.Model, Status: f.Status, Starred: f.Starred, Query: f.Query,
		HideExperiments: f.HideExperiments}
	if id, err := strconv.ParseInt(c.Query("experiment"), 10, 64); err == nil && id > 0 {
		filter.Experiment, f.Experiment = id, strconv.FormatInt(id, 10)
	}
	if t, err := time.ParseInLocation(dateLayout, f.From, time.Local); err == nil {
		filter.From = t
	} else {
		f.From = ""
	}
	if t, err := time.ParseInLocation(dateLayout, f.To, time.Local); err == nil {
		filter.To = t.AddDate(0, 0, 1) // the whole "to" day
	} else {
		f.To = ""
	}
	if id, err := strconv.ParseInt(c.Query("preset"), 10, 64); err == nil && id > 0 {
		filter.PresetID, f.Preset = id, strconv.FormatInt(id, 10)
	}
	if before, err := strconv.ParseInt(c.Query("before"), 10, 64); err == nil && before > 0 {
		filter.Before = before
	}
	runs, next, err := h.store.Runs(ctx(c), filter)
	if err != nil {
		return err
	}
	providers, models, err := h.store.RunFacets(ctx(c), u.ID)
	if err != nil {
		return err
	}
	presets, err := h.store.PresetNames(ctx(c), u.ID)
	if err != nil {
		return err
	}
	v := views.HistoryView{
		Page:      h.page(c, "History", "history"),
		Filter:    f,
		Providers: providers,
		Models:    models,
		Searching: f.Query != "" || f.Provider != "" || f.Model != "" || f.Status != "" || f.From != "" || f.To != "" || f.Starred || f.Preset != "",
	}
	for _, p := range presets {
		v.Presets = append(v.Presets, views.KeyValue{Key: strconv.FormatInt(p.ID, 10), Value: p.Name})
	}
	shown := telling(runs)
	for _, r := range runs {
		v.Rows = append(v.Rows, historyRow(r, shown))
	}
	if next != 0 {
		q := url.Values{}
		for k, val := range map[string]string{"q": f.Query, "provider": f.Provider, "model": f.Model, "status": f.Status, "from": f.From, "to": f.To, "preset": f.Preset} {
			if val != "" {
				q.Set(k, val)
			}
		}
		if f.Starred {
			q.Set("starred", "1")
		}
		if f.Experiment != "" {
			q.Set("experiment", f.Experiment)
		}
		q.Set("before", strconv.FormatInt(next, 10))
		v.NextURL = "/history?" + q.Encode()
	}
	return Render(c, fiber.StatusOK, views.HistoryPage(v))
}

// experimentsCookie remembers whether the user hides experiments' runs
// from History: the filter's choice stays the default until changed.
const experimentsCookie = "knobs_history_experiments"

// hideExperiments is the user's choice about experiments' runs: the
// filter's when the form sends one (remembered), else the remembered
// one; shown by default.
func hideExperiments(c *fiber.Ctx) bool {
	args := c.Context().QueryArgs().PeekMulti("experiments")
	if len(args) == 0 {
		return c.Cookies(experimentsCookie) == "hide"
	}
	hide := false
	for _, a := range args {
		hide = hide || string(a) == "hide"
	}
	val := "show"
	if hide {
		val = "hide"
	}
	c.Cookie(&fiber.Cookie{Name: experimentsCookie, Value: val, Path: "/history", MaxAge: 365 * 24 * 3600, HTTPOnly: true, SameSite: "Lax"})
	return hide
}

func historyRow(r db.RunSummary, shown []string) views.HistoryRow {
	row := views.HistoryRow{
		ID: r.ID, When: when(r.CreatedAt), WhenISO: r.CreatedAt.Format(time.RFC3339),
		Provider: r.Provider, Model: r.Model, Status: r.Status,
		Prompt: pieces(r.Prompt), Output: pieces(r.Output),
		Starred: r.Starred, Note: firstLine(r.Note), GroupID: r.GroupID,
		Tokens: "—", TTFT: "—", TPS: "—", Cost: "—",
	}
	if r.Tokens > 0 {
		row.Tokens = grouped(int64(r.Tokens))
	}
	if r.TTFTMs > 0 {
		row.TTFT = grouped(int64(math.Round(r.TTFTMs))) + " ms"
	}
	// A rate over a handful of tokens says nothing (the playground shows —
	// under 10 tokens too).
	if r.TokensPerSec > 0 && r.Tokens >= 10 {
		row.TPS = grouped(int64(math.Round(r.TokensPerSec)))
	}
	if r.CostUSD > 0 {
		row.Cost = dollars(r.CostUSD)
	}
	for _, name := range shown {
		if val, ok := r.Params[name]; ok {
			row.Params = append(row.Params, views.ParamChip{Label: paramLabel(name), Name: name, Value: val})
		}
	}
	return row
}

// alwaysShown are the parameters people tweak most: the list shows them
// on every run that sets them.
var alwaysShown = []string{"temperature", "max_completion_tokens", "max_tokens", "max_output_tokens"}

// telling returns the parameters a page of runs shows: the usual ones,
// then any other whose value is not the same on every run (set on some
// and not others counts), so that two runs can be told apart.
func telling(runs []db.RunSummary) []string {
	var names []string
	for _, name := range alwaysShown {
		for _, r := range runs {
			if _, ok := r.Params[name]; ok {
				names = append(names, name)
				break
			}
		}
	}
	var others []string
	for _, r := range runs {
		for name := range r.Params {
			if slices.Contains(alwaysShown, name) || slices.Contains(others, name) {
				continue
			}
			if slices.ContainsFunc(runs, func(o db.RunSummary) bool { return o.Params[name] != r.Params[name] }) {
				others = append(others, name)
			}
		}
	}
	slices.Sort(others)
	return append(names, others...)
}

// paramLabel is a parameter's short name on a chip.
func paramLabel(name string) string {
	switch name {
	case "temperature":
		return "t"
	case "max_completion_tokens", "max_tokens", "max_output_tokens":
		return "max"
	}
	return name
}

// grouped writes n with thousands separators: 12,345.
func grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// dollars writes a cost with the digits that matter: runs often cost a
// fraction of a cent.
func dollars(usd float64) string {
	switch {
	case usd < 0.0001:
		return "< $0.0001"
	case usd < 1:
		return fmt.Sprintf("$%.4f", usd)
	}
	cents := int64(math.Round(usd * 100))
	return fmt.Sprintf("$%s.%02d", grouped(cents/100), cents%100)
}

func pieces(segs []db.Segment) []views.TextPiece {
	out := make([]views.TextPiece, len(segs))
	for i, s := range segs {
		out[i] = views.TextPiece{Text: s.Text, Match: s.Match}
	}
	return out
}

// when shows a time the way a list reads best: always with its day, as a
// bare time is ambiguous once the list is read later.
func when(t time.Time) string {
	now := time.Now()
	day := func(d time.Time) time.Time {
		y, m, dd := d.Date()
		return time.Date(y, m, dd, 0, 0, 0, 0, d.Location())
	}
	switch day(now).Sub(day(t)) {
	case 0:
		return "Today " + t.Format("15:04")
	case 24 * time.Hour:
		return "Yesterday " + t.Format("15:04")
	}
	if t.Year() == now.Year() {
		return t.Format("2 Jan 15:04")
	}
	return t.Format("2 Jan 2006")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// clip cuts s to at most n bytes without splitting a character.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
