package handlers

import (
	"context"
	"strings"
	"time"

	"knobs/db"
	"knobs/field"
)

// ListRunsInput is GET /api/v1/runs: the filters of /history.
type ListRunsInput struct {
	PageQuery
	Query           string `query:"q" maxLength:"200" doc:"Full-text search over prompts and answers."`
	Provider        string `query:"provider" doc:"Only runs of this provider id."`
	Model           string `query:"model" doc:"Only runs of this model."`
	Status          string `query:"status" enum:"running,done,error,cancelled,interrupted," doc:"Only runs that ended so."`
	Preset          int64  `query:"preset" minimum:"0" doc:"Only runs made from this preset id."`
	From            string `query:"from" doc:"Only runs made on or after this day, YYYY-MM-DD (server time)."`
	To              string `query:"to" doc:"Only runs made on or before this day, YYYY-MM-DD (server time)."`
	Starred         bool   `query:"starred" doc:"Only starred runs."`
	Experiment      int64  `query:"experiment" minimum:"0" doc:"Only the runs of this experiment (its cells and its judges' gradings)."`
	HideExperiments bool   `query:"hide_experiments" doc:"Leave out the runs experiments made."`
}

// RunItem is a run as the list shows it.
type RunItem struct {
	ID        int64     `json:"id"`
	Status    string    `json:"status" enum:"running,done,error,cancelled,interrupted"`
	Provider  string    `json:"provider"`
	Model     string    `json:"model"`
	CreatedAt time.Time `json:"created_at"`
	Preview   string    `json:"preview" doc:"The first line of the prompt, or the text around a search match."`
	Tokens    int       `json:"tokens" doc:"Output tokens."`
	CostUSD   float64   `json:"cost" doc:"USD; 0 when unknown."`
}

// ListRunsOutput is the answer to GET /api/v1/runs.
type ListRunsOutput struct {
	Body Page[RunItem]
}

// ListAPIRuns searches the caller's runs as /history does, newest first.
func (h *Handler) ListAPIRuns(ctx context.Context, in *ListRunsInput) (*ListRunsOutput, error) {
	before, err := in.before()
	if err != nil {
		return nil, err
	}
	f := db.RunFilter{UserID: apiUser(ctx).ID, Provider: in.Provider, Model: in.Model, Status: in.Status,
		PresetID: in.Preset, Starred: in.Starred, Experiment: in.Experiment, HideExperiments: in.HideExperiments, Query: strings.TrimSpace(in.Query), Before: before, Limit: in.Limit + 1}
	fe := field.Errors{}
	if in.From != "" {
		t, err := time.ParseInLocation(dateLayout, in.From, time.Local)
		if err != nil {
			fe.Add("from", "Write the day as YYYY-MM-DD.")
		}
		f.From = t
	}
	if in.To != "" {
		t, err := time.ParseInLocation(dateLayout, in.To, time.Local)
		if err != nil {
			fe.Add("to", "Write the day as YYYY-MM-DD.")
		}
		f.To = t.AddDate(0, 0, 1) // the whole "to" day
	}
	if !fe.Empty() {
		return nil, apiInvalid(fe)
	}
	rows, _, err := h.store.Runs(ctx, f)
	if err != nil {
		return nil, err
	}
	page := pageOf(in.PageQuery, rows, func(r db.RunSummary) int64 { return r.ID }, func(r db.RunSummary) RunItem {
		var preview strings.Builder
		for _, s := range r.Prompt {
			preview.WriteString(s.Text)
		}
		return RunItem{ID: r.ID, Status: r.Status, Provider: r.Provider, Model: r.Model, CreatedAt: r.CreatedAt,
			Preview: preview.String(), Tokens: r.Tokens, CostUSD: r.CostUSD}
	})
	return &ListRunsOutput{Body: page}, nil
}
