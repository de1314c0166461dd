package handlers

import (
	"context"
	"errors"
	"time"

	"knobs/db"
	"knobs/llm"
)

// ShowRunInput is GET /api/v1/runs/{id}.
type ShowRunInput struct {
	ID int64 `path:"id" minimum:"1" doc:"The run's id."`
}

// RunDetail is a run as the API shows it: what was asked, what came back
// and Knobs' measurements of it. Never a key: the request is stored as
// sent with its key redacted.
type RunDetail struct {
	ID        int64             `json:"id"`
	Status    string            `json:"status" enum:"running,done,error,cancelled,interrupted"`
	Provider  string            `json:"provider"`
	Endpoint  string            `json:"endpoint" enum:"chat,completion"`
	Model     string            `json:"model"`
	Request   *llm.RawRequest   `json:"request" doc:"The request as Knobs sent it upstream, its key redacted; null until it is sent."`
	Choices   []RunChoice       `json:"choices" nullable:"false"`
	Usage     *llm.Usage        `json:"usage" doc:"The provider's token counts, or Knobs' own (estimated: true) for a run that stopped before the provider sent them; null when there are none."`
	Metrics   RunMetrics        `json:"metrics"`
	CreatedAt time.Time         `json:"created_at"`
	Preset    *int64            `json:"preset" doc:"The id of the preset the run was made from; null when none."`
	Variables map[string]string `json:"variables" doc:"The values filled into the body's {{placeholders}}; null when none."`
	Error     *llm.Error        `json:"error" doc:"What went wrong upstream; null when nothing did."`
}

// RunChoice is one of the n answers of a run.
type RunChoice struct {
	Index        int                `json:"index"`
	Text         string             `json:"text"`
	Reasoning    string             `json:"reasoning"`
	ToolCalls    []llm.ToolCall     `json:"tool_calls" nullable:"false"`
	FinishReason string             `json:"finish_reason"`
	Logprobs     []llm.TokenLogprob `json:"logprobs" doc:"Per-token log probabilities when asked for; null otherwise."`
}

// RunMetrics are Knobs' own measurements of a run.
type RunMetrics struct {
	TTFTMs       float64 `json:"ttft_ms" doc:"Milliseconds from the start to the first token."`
	TokensPerSec float64 `json:"tokens_per_s" doc:"Output tokens per second, from the first token to the last."`
	TotalMs      float64 `json:"total_ms" doc:"Milliseconds from the start to the end."`
	CostUSD      float64 `json:"cost_usd" doc:"USD, the provider's figure or usage times known prices; 0 when unknown."`
}

// ShowRunOutput is the answer to GET /api/v1/runs/{id}.
type ShowRunOutput struct {
	Body RunDetail
}

// ShowAPIRun answers one of the caller's runs as it is stored; another
// user's run is 404, like an unknown one.
func (h *Handler) ShowAPIRun(ctx context.Context, in *ShowRunInput) (*ShowRunOutput, error) {
	d, err := h.apiRun(ctx, apiUser(ctx).ID, in.ID)
	if err != nil {
		return nil, err
	}
	return &ShowRunOutput{Body: d}, nil
}

// apiRun reads user's run id as the API shows it.
func (h *Handler) apiRun(ctx context.Context, user, id int64) (RunDetail, error) {
	run, err := h.store.Run(ctx, user, id)
	if errors.Is(err, db.ErrNotFound) {
		return RunDetail{}, apiNotFound("run")
	}
	if err != nil {
		return RunDetail{}, err
	}
	return h.runDetail(user, run)
}

// runDetail is a stored run as the API shows it; a run that cannot be
// read whole is an error.
func (h *Handler) runDetail(user int64, run db.Run) (RunDetail, error) {
	sr, err := h.readRun(user, run)
	if err != nil {
		return RunDetail{}, err
	}
	d := RunDetail{ID: run.ID, Status: sr.Displayed, Provider: run.Provider, Endpoint: run.Endpoint, Model: run.Model,
		CreatedAt: run.CreatedAt, Choices: []RunChoice{}, Request: sr.Raw, Variables: sr.Vars}
	res := sr.Result
	for _, ch := range res.Choices {
		c := RunChoice{Index: ch.Index, Text: ch.Content, Reasoning: ch.Reasoning, ToolCalls: ch.ToolCalls,
			FinishReason: ch.FinishReason, Logprobs: ch.Logprobs}
		if c.ToolCalls == nil {
			c.ToolCalls = []llm.ToolCall{}
		}
		d.Choices = append(d.Choices, c)
	}
	d.Usage, d.Error = res.Usage, res.Error
	d.Metrics = RunMetrics{TTFTMs: res.Metrics.TTFTMs, TokensPerSec: res.Metrics.TokensPerSec,
		TotalMs: res.Metrics.TotalMs, CostUSD: res.Metrics.CostUSD}
	if run.PresetID != 0 {
		id := run.PresetID
		d.Preset = &id
	}
	return d, nil
}
