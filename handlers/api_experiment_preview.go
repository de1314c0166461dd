package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"knobs/db"
	"knobs/field"
	"knobs/grade"
	"knobs/llm"
	"knobs/llm/sim"
	"knobs/preset"
)

// ExperimentPreview is what an experiment would cost before it starts:
// its calls, its tokens and cost as estimated, and what is wrong with it.
type ExperimentPreview struct {
	Cells        int              `json:"cells" doc:"Rows × variants × repeats: the calls the variants make."`
	JudgeCalls   int              `json:"judge_calls" doc:"Calls the LLM judges make, one per cell each."`
	InputTokens  int              `json:"input_tokens" doc:"The prompts' tokens, counted with the simulator's tokenizer: exact on the simulator, an estimate elsewhere."`
	OutputTokens int              `json:"output_tokens" doc:"At most: each cell's max_tokens, or the model's output limit."`
	CostUSD      *float64         `json:"cost_usd" doc:"At most, at the models' known prices; null when a variant's model has no known price."`
	Variants     []VariantPreview `json:"variants" nullable:"false"`
	Fields       field.Errors     `json:"fields,omitempty" doc:"What POST /experiments would refuse, by field, as it would name them."`
}

// VariantPreview is one variant's share of the estimate.
type VariantPreview struct {
	Name         string   `json:"name"`
	InputTokens  int      `json:"input_tokens"`
	OutputTokens int      `json:"output_tokens"`
	CostUSD      *float64 `json:"cost_usd"`
	// OutputBounded says the output counted is a bound: the variant's
	// max_tokens, else its model's output limit; false (and 0 counted)
	// when neither is known.
	OutputBounded bool `json:"output_bounded"`
}

// ExperimentPreviewOutput answers a preview.
type ExperimentPreviewOutput struct {
	Body ExperimentPreview
}

// PreviewAPIExperiment checks an experiment as POST /api/v1/experiments
// would and estimates it, storing and sending nothing: the page shows it
// before Start.
func (h *Handler) PreviewAPIExperiment(ctx context.Context, in *CreateExperimentInput) (*ExperimentPreviewOutput, error) {
	u := apiUser(ctx)
	b := in.Body
	out := ExperimentPreview{Variants: []VariantPreview{}, Fields: field.Errors{}}
	ds, err := h.store.Dataset(ctx, u.ID, b.Dataset)
	if errors.Is(err, db.ErrNotFound) {
		out.Fields.Add("dataset", "There is no such dataset.")
		return &ExperimentPreviewOutput{Body: out}, nil
	} else if err != nil {
		return nil, err
	}
	version := b.DatasetVersion
	if version == 0 {
		version = ds.Version
	}
	dv, err := h.store.DatasetVersion(ctx, u.ID, ds.ID, version)
	if errors.Is(err, db.ErrNotFound) {
		out.Fields.Add("dataset_version", fmt.Sprintf("The dataset has no version %d.", version))
		return &ExperimentPreviewOutput{Body: out}, nil
	} else if err != nil {
		return nil, err
	}
	if dv.Rows == 0 {
		out.Fields.Add("dataset", "The dataset version has no rows.")
		return &ExperimentPreviewOutput{Body: out}, nil
	}
	rows, err := h.store.DatasetRows(ctx, u.ID, ds.ID, version, 0, dv.Rows)
	if err != nil {
		return nil, err
	}
	repeats := max(1, b.Repeats)
	out.Cells = len(rows) * len(b.Variants) * repeats
	if out.Cells > ExperimentMaxCells {
		out.Fields.Add("repeats", fmt.Sprintf("That is %d cells; an experiment has at most %d.", out.Cells, ExperimentMaxCells))
	}
	total, priced := 0.0, true
	for i, v := range b.Variants {
		ev, fe, err := h.experimentVariant(ctx, i, v, rows)
		if err != nil {
			return nil, err
		}
		for k, msg := range fe {
			out.Fields.Add(fmt.Sprintf("variants[%d].%s", i, k), msg)
		}
		vp := VariantPreview{Name: ev.Name}
		if ev.Spec != "" {
			if vp, err = h.estimateVariant(ctx, ev, rows, repeats); err != nil {
				return nil, err
			}
		}
		out.InputTokens += vp.InputTokens
		out.OutputTokens += vp.OutputTokens
		if vp.CostUSD == nil {
			priced = false
		} else {
			total += *vp.CostUSD
		}
		out.Variants = append(out.Variants, vp)
	}
	for i, raw := range b.Graders {
		_, fe, err := h.experimentGrader(ctx, raw)
		if err != nil {
			return nil, err
		}
		for k, msg := range fe {
			out.Fields.Add(fmt.Sprintf("graders[%d].%s", i, k), msg)
		}
		if grade.TypeOf(raw) == "judge" {
			out.JudgeCalls += out.Cells
		}
	}
	if priced && len(out.Variants) > 0 {
		out.CostUSD = &total
	}
	return &ExperimentPreviewOutput{Body: out}, nil
}

// estimateVariant counts a variant's tokens over the rows, repeats
// times: the prompts as the simulator counts them (exactly what it then
// reports; an estimate for other models), the output at most (max_tokens
// × n per cell, else the model's output limit when it is known), and the
// cost at the model's price in force (pricedModel), as its runs are costed.
func (h *Handler) estimateVariant(ctx context.Context, ev db.ExperimentVariant, rows []db.DatasetRow, repeats int) (VariantPreview, error) {
	vp := VariantPreview{Name: ev.Name}
	var spec llm.RunSpec
	if err := json.Unmarshal([]byte(ev.Spec), &spec); err != nil {
		return vp, err
	}
	defaults := map[string]string{}
	if ev.Variables != "" {
		_ = json.Unmarshal([]byte(ev.Variables), &defaults)
	}
	var model llm.Model
	if p, err := h.findProvider(ctx, spec.Provider); err == nil {
		if model, err = h.pricedModel(ctx, p, spec.Model()); err != nil {
			return vp, err
		}
	} else if !errors.Is(err, errNoProvider) {
		return vp, err
	}
	limit, choices := outputLimit(spec.Body)
	if limit <= 0 {
		limit = model.MaxOutput // the model cannot answer more
	}
	vp.OutputBounded = limit > 0
	for _, r := range rows {
		vars := maps.Clone(defaults)
		maps.Copy(vars, r.Vars)
		filled, _, err := preset.Fill(spec, vars, MaxBody)
		if err != nil {
			continue // a row too large is refused when it runs
		}
		n, ok := sim.PromptTokens(filled.Endpoint, filled.Body)
		if !ok {
			n = sim.CountTokens(string(filled.Body))
		}
		vp.InputTokens += n * repeats
		vp.OutputTokens += limit * choices * repeats
	}
	if model.Priced() {
		c := (float64(vp.InputTokens)*model.PromptPrice + float64(vp.OutputTokens)*model.CompletionPrice) / 1e6
		vp.CostUSD = &c
	}
	return vp, nil
}
