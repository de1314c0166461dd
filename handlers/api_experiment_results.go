package handlers

import (
	"context"
	"time"

	"knobs/db"
	"knobs/experiment"
)

// ExperimentResultsInput is GET /api/v1/experiments/{id}/results.
type ExperimentResultsInput struct {
	ID int64 `path:"id" minimum:"1" doc:"The experiment's id."`
	PageQuery
}

// CellResult is one cell of an experiment: a variant on a row, once.
type CellResult struct {
	ID           int64                  `json:"id"`
	Row          int                    `json:"row" doc:"The row's place in the dataset version, from 0."`
	Variant      int                    `json:"variant"`
	Repeat       int                    `json:"repeat"`
	Status       string                 `json:"status" enum:"pending,running,done,error,cancelled"`
	RunID        *int64                 `json:"run_id" doc:"The run in history; null before it starts."`
	Vars         map[string]string      `json:"vars"`
	Expected     *string                `json:"expected"`
	Output       string                 `json:"output"`
	FinishReason string                 `json:"finish_reason"`
	Grades       []experiment.GradeItem `json:"grades" nullable:"false"`
	LatencyMs    float64                `json:"latency_ms"`
	TTFTMs       float64                `json:"ttft_ms"`
	Tokens       int                    `json:"tokens"`
	CostUSD      float64                `json:"cost_usd"`
	CostKnown    bool                   `json:"cost_known" doc:"False when the model's price is not known: cost_usd 0 then means unknown."`
	Attempts     int                    `json:"attempts" doc:"Runs the cell made: more than 1 after a rate limit or a transient failure."`
	Error        string                 `json:"error"`
	Ratings      []CellRatingItem       `json:"ratings" nullable:"false"`
}

// CellRatingItem is a person's rating of a cell.
type CellRatingItem struct {
	User   string    `json:"user"`
	Thumbs *bool     `json:"thumbs"`
	Stars  *int      `json:"stars"`
	Note   string    `json:"note"`
	At     time.Time `json:"at"`
}

// ExperimentResultsOutput is the answer to the results.
type ExperimentResultsOutput struct {
	Body Page[CellResult]
}

// ExperimentAPIResults answers an experiment's cells in order of row,
// variant and repeat, with their grades and ratings, paged.
func (h *Handler) ExperimentAPIResults(ctx context.Context, in *ExperimentResultsInput) (*ExperimentResultsOutput, error) {
	off, err := offsetOf(in.PageQuery)
	if err != nil {
		return nil, err
	}
	if _, err := h.apiExperiment(ctx, in.ID); err != nil {
		return nil, err
	}
	cells, err := h.store.ExperimentCells(ctx, apiUser(ctx).ID, in.ID, off, in.Limit+1)
	if err != nil {
		return nil, err
	}
	page := Page[CellResult]{Items: make([]CellResult, 0, min(len(cells), in.Limit))}
	for i, c := range cells {
		if i == in.Limit {
			page.NextCursor = offsetCursor(off + in.Limit)
			break
		}
		page.Items = append(page.Items, cellResult(c))
	}
	return &ExperimentResultsOutput{Body: page}, nil
}

func cellResult(c db.Cell) CellResult {
	r := CellResult{ID: c.ID, Row: c.Row, Variant: c.Variant, Repeat: c.Repeat, Status: c.Status, Vars: c.Vars, Expected: c.Expected,
		Output: c.Output, FinishReason: c.FinishReason, Grades: experiment.GradeItems(c.Grades), LatencyMs: c.LatencyMs, TTFTMs: c.TTFTMs,
		Tokens: c.Tokens, CostUSD: c.CostUSD, CostKnown: c.CostKnown, Attempts: c.Attempts, Error: c.Error, Ratings: []CellRatingItem{}}
	if c.RunID != 0 {
		id := c.RunID
		r.RunID = &id
	}
	for _, rt := range c.Ratings {
		item := CellRatingItem{User: rt.Username, Thumbs: rt.Thumbs, Note: rt.Note, At: rt.At}
		if rt.Stars > 0 {
			s := rt.Stars
			item.Stars = &s
		}
		r.Ratings = append(r.Ratings, item)
	}
	return r
}
