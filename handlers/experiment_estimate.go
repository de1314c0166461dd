package handlers

import (
	"context"
	"encoding/json"
	"fmt"

	"knobs/views"
)

// estimateExperiment says what a checked experiment will send: its
// calls (cells and judges' runs), the input tokens of every cell counted
// as the playground's estimate counts them (the simulator's tokenizer:
// exact for the simulator, an estimate for hosted models), the output
// tokens the variants allow at most, and the cost where the models'
// prices are known. The judges' own tokens are not counted.
func (h *Handler) estimateExperiment(ctx context.Context, p experimentPlan) (views.ExperimentEstimate, error) {
	cells := len(p.rows) * len(p.variants) * p.repeats
	judges := 0
	for _, g := range p.graders {
		if g.Judge != nil {
			judges++
		}
	}
	var input, output int
	var cost float64
	outputKnown, priced, unpriced := true, 0, 0
	for _, v := range p.variants {
		vp, err := h.estimateVariant(ctx, v, p.rows, p.repeats)
		if err != nil {
			return views.ExperimentEstimate{}, err
		}
		input += vp.InputTokens
		output += vp.OutputTokens
		outputKnown = outputKnown && vp.OutputBounded
		if vp.CostUSD != nil {
			priced++
			cost += *vp.CostUSD
		} else {
			unpriced++
		}
	}
	est := views.ExperimentEstimate{Cells: grouped(int64(cells)), JudgeCalls: grouped(int64(cells * judges)),
		Calls: grouped(int64(cells * (1 + judges))), InputTokens: "≈ " + grouped(int64(input))}
	if outputKnown {
		est.OutputTokens = "at most " + grouped(int64(output))
	} else {
		est.Notes = append(est.Notes, "A variant sets no max_tokens: its output, and so its cost, has no bound known before it runs.")
	}
	switch {
	case priced == 0:
		est.Cost = "no price known"
	case outputKnown:
		est.Cost = "at most " + dollars(cost)
	default:
		est.Cost = "input ≈ " + dollars(cost)
	}
	if priced > 0 && unpriced > 0 {
		est.Notes = append(est.Notes, fmt.Sprintf("%d of the variants have no price known: the cost leaves them out.", unpriced))
	}
	if judges > 0 {
		est.Notes = append(est.Notes, "The judges' own tokens and cost are not counted.")
	}
	return est, nil
}

// outputLimit reads the most tokens a request may answer per choice (0:
// no limit set) and its number of choices.
func outputLimit(body json.RawMessage) (limit, choices int) {
	var b struct {
		MaxTokens           *int `json:"max_tokens"`
		MaxCompletionTokens *int `json:"max_completion_tokens"`
		N                   *int `json:"n"`
	}
	_ = json.Unmarshal(body, &b)
	switch {
	case b.MaxCompletionTokens != nil:
		limit = *b.MaxCompletionTokens
	case b.MaxTokens != nil:
		limit = *b.MaxTokens
	}
	choices = 1
	if b.N != nil && *b.N > 1 {
		choices = *b.N
	}
	return limit, choices
}
