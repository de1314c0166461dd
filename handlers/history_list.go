package handlers

import (
	"fmt"
	"net/url"
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
	filter := db.RunFilter{UserID: u.ID, Provider: f.Provider, Model: f.Model, Status: f.Status, Starred: f.Starred, Query: f.Query}
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
	for _, r := range runs {
		v.Rows = append(v.Rows, historyRow(r))
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
		q.Set("before", strconv.FormatInt(next, 10))
		v.NextURL = "/history?" + q.Encode()
	}
	return Render(c, fiber.StatusOK, views.HistoryPage(v))
}

func historyRow(r db.RunSummary) views.HistoryRow {
	row := views.HistoryRow{
		ID: r.ID, When: when(r.CreatedAt), WhenISO: r.CreatedAt.Format(time.RFC3339),
		Provider: r.Provider, Model: r.Model, Status: r.Status,
		Prompt: pieces(r.Prompt), Output: pieces(r.Output),
		Starred: r.Starred, Note: firstLine(r.Note), GroupID: r.GroupID,
		Tokens: "—", TTFT: "—", TPS: "—",
	}
	if r.Tokens > 0 {
		row.Tokens = strconv.Itoa(r.Tokens)
	}
	if r.TTFTMs > 0 {
		row.TTFT = fmt.Sprintf("%.0f ms", r.TTFTMs)
	}
	if r.TokensPerSec > 0 {
		row.TPS = fmt.Sprintf("%.0f", r.TokensPerSec)
	}
	return row
}

func pieces(segs []db.Segment) []views.TextPiece {
	out := make([]views.TextPiece, len(segs))
	for i, s := range segs {
		out[i] = views.TextPiece{Text: s.Text, Match: s.Match}
	}
	return out
}

// when shows a time the way a list reads best: the time today, the date
// otherwise.
func when(t time.Time) string {
	now := time.Now()
	if t.Year() == now.Year() && t.YearDay() == now.YearDay() {
		return t.Format("15:04:05")
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
