package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"knobs/llm"
	"knobs/llm/sim"
	"knobs/preset"
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
		var spec llm.RunSpec
		if err := json.Unmarshal([]byte(v.Spec), &spec); err != nil {
			return views.ExperimentEstimate{}, err
		}
		defaults := map[string]string{}
		if v.Variables != "" {
			_ = json.Unmarshal([]byte(v.Variables), &defaults)
		}
		model := llm.Model{}
		if prov, err := h.findProvider(ctx, spec.Provider); err == nil {
			model = modelInfo(prov, spec.Model())
		} else if !errors.Is(err, errNoProvider) {
			return views.ExperimentEstimate{}, err
		}
		limit, choices := outputLimit(spec.Body)
		vin := 0
		for _, r := range p.rows {
			values := maps.Clone(defaults)
			maps.Copy(values, r.Vars)
			filled, _, err := preset.Fill(spec, values, MaxBody)
			if err != nil {
				continue // planExperiment checked the first row; a later one too large is refused when it runs
			}
			vin += promptTokens(filled)
		}
		vin *= p.repeats
		input += vin
		vout := limit * choices * len(p.rows) * p.repeats
		if limit <= 0 {
			outputKnown = false
		}
		output += vout
		if model.PromptPrice > 0 || model.CompletionPrice > 0 {
			priced++
			cost += float64(vin)*model.PromptPrice/1e6 + float64(vout)*model.CompletionPrice/1e6
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

// promptTokens counts a filled request's input as the playground does:
// a chat's messages with a few tokens of framing each, or a completion's
// prompt.
func promptTokens(spec llm.RunSpec) int {
	var b struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Prompt json.RawMessage `json:"prompt"`
	}
	_ = json.Unmarshal(spec.Body, &b)
	if spec.Endpoint == llm.EndpointChat {
		n := 3
		for _, m := range b.Messages {
			n += 4 + sim.CountTokens(contentOf(m.Content))
		}
		return n
	}
	var one string
	if json.Unmarshal(b.Prompt, &one) == nil {
		return sim.CountTokens(one)
	}
	var many []string
	_ = json.Unmarshal(b.Prompt, &many)
	n := 0
	for _, s := range many {
		n += sim.CountTokens(s)
	}
	return n
}

// contentOf is a message's text: a string, or its text parts.
func contentOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type, Text string
	}
	_ = json.Unmarshal(raw, &parts)
	out := ""
	for _, p := range parts {
		if p.Type == "text" {
			out += p.Text + "\n"
		}
	}
	return out
}
