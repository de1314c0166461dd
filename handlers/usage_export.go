package handlers

import (
	"encoding/csv"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/dataset"
	"knobs/db"
)

// ExportUsage downloads the usage page's table as CSV: the same query,
// the same rows and a total line, every figure whole (cost in dollars
// to six places), each value spreadsheet-safe.
func (h *Handler) ExportUsage(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	in, err := usageInput(c)
	if err != nil {
		return err
	}
	q, fe, err := usageQuery(u, in, h.now())
	if err != nil {
		return err
	}
	if !fe.Empty() {
		return invalid("Fix the period or grouping of the usage to export.", fe)
	}
	rep, err := h.store.Usage(ctx(c), q)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="knobs-usage-`+q.From.Format(dateLayout)+`-`+q.To.Format(dateLayout)+`-by-`+q.GroupBy+`.csv"`)
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	w := csv.NewWriter(c.Response().BodyWriter())
	w.UseCRLF = true
	_ = w.Write([]string{"key", "calls", "errors", "input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens", "cost_usd", "unpriced_calls", "unpriced_tokens"})
	for _, r := range rep.Rows {
		_ = w.Write(usageRecord(r.Key, r.UsageFigures))
	}
	_ = w.Write(usageRecord("total", rep.Total))
	w.Flush()
	return w.Error()
}

func usageRecord(key string, f db.UsageFigures) []string {
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	return []string{dataset.SpreadsheetSafe(key), i(f.Calls), i(f.Errors), i(f.InputTokens), i(f.OutputTokens), i(f.CachedTokens),
		i(f.ReasoningTokens), strconv.FormatFloat(f.CostUSD, 'f', 6, 64), i(f.UnpricedCalls), i(f.UnpricedTokens)}
}
