package handlers

import (
	"context"
	"slices"
	"time"

	"knobs/db"
	"knobs/field"
)

// UsageInput is GET /api/v1/usage, and the usage page's query.
type UsageInput struct {
	From    string `query:"from" doc:"The first day counted, YYYY-MM-DD in UTC; default: the first of this month."`
	To      string `query:"to" doc:"The last day counted (whole), YYYY-MM-DD in UTC; default: today."`
	GroupBy string `query:"group_by" enum:"user,provider,model,preset,experiment,arena,day,week,month," doc:"How the rows are grouped; default: day. A week is named by its Monday."`
	User    int64  `query:"user" minimum:"0" doc:"An admin's filter: one user's usage by id (0: everyone). A member sees only their own usage, and is refused another user's (403)."`
}

// UsageFigures are a group's counts of finished calls.
type UsageFigures struct {
	Calls           int64   `json:"calls"`
	Errors          int64   `json:"errors" doc:"Calls that ended in an error (a stopped or interrupted call is not one)."`
	InputTokens     int64   `json:"input_tokens" doc:"Cached input included."`
	OutputTokens    int64   `json:"output_tokens" doc:"Reasoning included, counted once."`
	CachedTokens    int64   `json:"cached_tokens"`
	ReasoningTokens int64   `json:"reasoning_tokens"`
	CostUSD         float64 `json:"cost_usd" doc:"USD, each call at the price in force when it ran; calls without a price add nothing."`
	UnpricedCalls   int64   `json:"unpriced_calls" doc:"Calls of models without a price, not in cost_usd."`
	UnpricedTokens  int64   `json:"unpriced_tokens" doc:"Input and output tokens of those calls."`
}

// UsageRowItem is one group of the usage answer.
type UsageRowItem struct {
	Key string `json:"key" doc:"The group: a user's name, a provider, provider/model, a preset, experiment or arena as '#id name' (or 'none'), a day (2026-12-01), a week's Monday, a month (2026-12)."`
	UsageFigures
}

// UsageOutput is the answer to GET /api/v1/usage: the figures the usage
// page shows.
type UsageOutput struct {
	Body struct {
		From    string         `json:"from"`
		To      string         `json:"to"`
		GroupBy string         `json:"group_by"`
		Rows    []UsageRowItem `json:"rows" nullable:"false"`
		Total   UsageFigures   `json:"total"`
	}
}

// usageWindow bounds a usage query: about three years of days.
const usageWindow = 3 * 366

// usageQuery checks a usage request of u into a store query: the days
// (default this month to today, UTC), the grouping (default by day) and
// whose usage. A member gets their own; asking for another user's is
// refused with 403.
func usageQuery(u db.User, in UsageInput, now time.Time) (db.UsageQuery, field.Errors, error) {
	now = now.UTC()
	q := db.UsageQuery{From: time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC), To: now, GroupBy: in.GroupBy, UserID: in.User}
	fe := field.Errors{}
	if in.From != "" {
		t, err := time.ParseInLocation(dateLayout, in.From, time.UTC)
		if err != nil {
			fe.Add("from", "Write the day as YYYY-MM-DD.")
		}
		q.From = t
	}
	if in.To != "" {
		t, err := time.ParseInLocation(dateLayout, in.To, time.UTC)
		if err != nil {
			fe.Add("to", "Write the day as YYYY-MM-DD.")
		}
		q.To = t
	}
	if fe.Empty() && q.To.Before(q.From) {
		fe.Add("to", "The last day comes on or after the first.")
	}
	if fe.Empty() && q.To.Sub(q.From) > usageWindow*24*time.Hour {
		fe.Add("from", "Ask for at most three years at a time.")
	}
	if q.GroupBy == "" {
		q.GroupBy = db.UsageByDay
	}
	if !slices.Contains(db.UsageGroupings, q.GroupBy) {
		fe.Add("group_by", "Group by user, provider, model, preset, experiment, arena, day, week or month.")
	}
	if !u.IsAdmin() {
		if q.UserID != 0 && q.UserID != u.ID {
			return q, nil, &Problem{Status: 403, Message: "You can see only your own usage; an admin sees everyone's."}
		}
		q.UserID = u.ID
	}
	return q, fe, nil
}

// usageFigures is f as the API writes it.
func usageFigures(f db.UsageFigures) UsageFigures {
	return UsageFigures{Calls: f.Calls, Errors: f.Errors, InputTokens: f.InputTokens, OutputTokens: f.OutputTokens,
		CachedTokens: f.CachedTokens, ReasoningTokens: f.ReasoningTokens, CostUSD: f.CostUSD,
		UnpricedCalls: f.UnpricedCalls, UnpricedTokens: f.UnpricedTokens}
}

// ShowAPIUsage answers calls, errors, tokens and cost between two days,
// grouped, with their total: everyone's for an admin, the caller's own
// for a member. Deleted runs still count: what was spent stays spent.
func (h *Handler) ShowAPIUsage(ctx context.Context, in *UsageInput) (*UsageOutput, error) {
	q, fe, err := usageQuery(apiUser(ctx), *in, h.now())
	if err != nil {
		return nil, err
	}
	if !fe.Empty() {
		return nil, apiInvalid(fe)
	}
	rep, err := h.store.Usage(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &UsageOutput{}
	out.Body.From, out.Body.To, out.Body.GroupBy = q.From.Format(dateLayout), q.To.Format(dateLayout), q.GroupBy
	out.Body.Rows = make([]UsageRowItem, 0, len(rep.Rows))
	for _, r := range rep.Rows {
		out.Body.Rows = append(out.Body.Rows, UsageRowItem{Key: r.Key, UsageFigures: usageFigures(r.UsageFigures)})
	}
	out.Body.Total = usageFigures(rep.Total)
	return out, nil
}
