package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"knobs/db"
	"knobs/experiment"
	"knobs/field"
	"knobs/grade"
)

// CompareExperimentsInput is GET /api/v1/experiments/{id}/compare/{other}.
type CompareExperimentsInput struct {
	ID           int64 `path:"id" minimum:"1" doc:"The baseline experiment."`
	Other        int64 `path:"other" minimum:"1" doc:"The experiment compared with it."`
	Variant      int   `query:"variant" minimum:"0" doc:"The baseline's variant (0 by default)."`
	OtherVariant int   `query:"other_variant" minimum:"0" doc:"The other experiment's variant (0 by default)."`
}

// ExperimentComparison is how one experiment's variant did against
// another's on the same dataset: per grader the pass rates and their
// difference, and every cell whose verdict changed, regressions first.
type ExperimentComparison struct {
	Baseline ComparedSide  `json:"baseline"`
	Other    ComparedSide  `json:"other"`
	Matched  int           `json:"matched" doc:"Cells found in both (same dataset row and repeat)."`
	Graders  []GraderDelta `json:"graders" nullable:"false" doc:"The graders both experiments have (the same JSON)."`
	Changes  []CellChange  `json:"changes" nullable:"false" doc:"Cells whose verdict changed: pass to fail first, then fail to pass, then grading errors; at most 1,000."`
	// ChangesTotal counts every changed cell, past the first 1,000 too.
	ChangesTotal int      `json:"changes_total" doc:"How many cells changed, those past the first 1,000 included."`
	Latency      *float64 `json:"p50_latency_delta_ms" doc:"Other's median latency minus the baseline's."`
	Cost         float64  `json:"cost_delta_usd"`
}

// ComparedSide names an experiment's variant in a comparison.
type ComparedSide struct {
	Experiment  int64  `json:"experiment"`
	Name        string `json:"name"`
	Variant     int    `json:"variant"`
	VariantName string `json:"variant_name"`
}

// GraderDelta is one grader's pass rate on both sides.
type GraderDelta struct {
	Name      string   `json:"name"`
	Baseline  *float64 `json:"baseline_pass_rate"`
	Other     *float64 `json:"other_pass_rate"`
	Delta     *float64 `json:"delta" doc:"Other's pass rate minus the baseline's, over the cells both graded."`
	Regressed int      `json:"regressed" doc:"Cells that passed in the baseline and fail in the other."`
	Fixed     int      `json:"fixed" doc:"Cells that failed in the baseline and pass in the other."`
}

// CellChange is a cell whose verdict by a grader changed.
type CellChange struct {
	Grader       string            `json:"grader"`
	Change       string            `json:"change" enum:"regressed,fixed,error"`
	Row          int               `json:"row" doc:"The row's place in the other experiment's dataset version."`
	Repeat       int               `json:"repeat"`
	Vars         map[string]string `json:"vars"`
	BaselineCell int64             `json:"baseline_cell"`
	OtherCell    int64             `json:"other_cell"`
	BaselineOut  string            `json:"baseline_output"`
	OtherOut     string            `json:"other_output"`
	BaselineWhy  string            `json:"baseline_reason"`
	OtherWhy     string            `json:"other_reason"`
}

// CompareExperimentsOutput answers a comparison.
type CompareExperimentsOutput struct {
	Body ExperimentComparison
}

// compareMaxChanges bounds the changed cells a comparison answers, each
// with both outputs.
const compareMaxChanges = 1000

// compareMaxCells bounds the cells a comparison reads of each side.
const compareMaxCells = ExperimentMaxCells

// CompareAPIExperiments compares a variant of one experiment with a
// variant of another on the same dataset, cell by cell (matched by the
// dataset row's key and the repeat, so two versions of a dataset compare
// on the rows they share).
func (h *Handler) CompareAPIExperiments(ctx context.Context, in *CompareExperimentsInput) (*CompareExperimentsOutput, error) {
	out, err := h.compareExperiments(ctx, *in)
	if err != nil {
		return nil, err
	}
	return &CompareExperimentsOutput{Body: out}, nil
}

// compareExperiments is a comparison for the user in ctx (apiUser): the
// API's and the page's.
func (h *Handler) compareExperiments(ctx context.Context, in CompareExperimentsInput) (ExperimentComparison, error) {
	u := apiUser(ctx)
	fail := func(err error) (ExperimentComparison, error) { return ExperimentComparison{}, err }
	a, err := h.apiExperiment(ctx, in.ID)
	if err != nil {
		return fail(err)
	}
	b, err := h.apiExperiment(ctx, in.Other)
	if err != nil {
		return fail(err)
	}
	if a.DatasetID == 0 || a.DatasetID != b.DatasetID {
		return fail(apiInvalid(field.Errors{"other": "The two experiments ran on different datasets: only cells of the same rows compare."}))
	}
	av, err := h.store.ExperimentVariants(ctx, a.ID)
	if err != nil {
		return fail(err)
	}
	bv, err := h.store.ExperimentVariants(ctx, b.ID)
	if err != nil {
		return fail(err)
	}
	fe := field.Errors{}
	if in.Variant >= len(av) {
		fe.Add("variant", fmt.Sprintf("The baseline has %d variants, from 0.", len(av)))
	}
	if in.OtherVariant >= len(bv) {
		fe.Add("other_variant", fmt.Sprintf("The other experiment has %d variants, from 0.", len(bv)))
	}
	if !fe.Empty() {
		return fail(apiInvalid(fe))
	}
	ac, err := h.store.ExperimentCells(ctx, u.ID, a.ID, 0, compareMaxCells)
	if err != nil {
		return fail(err)
	}
	bc, err := h.store.ExperimentCells(ctx, u.ID, b.ID, 0, compareMaxCells)
	if err != nil {
		return fail(err)
	}
	out := ExperimentComparison{
		Baseline: ComparedSide{Experiment: a.ID, Name: a.Name, Variant: in.Variant, VariantName: av[in.Variant].Name},
		Other:    ComparedSide{Experiment: b.ID, Name: b.Name, Variant: in.OtherVariant, VariantName: bv[in.OtherVariant].Name},
		Graders:  []GraderDelta{}, Changes: []CellChange{},
	}
	// The graders both have: the same JSON, matched in order.
	var ag, bg []experiment.Grader
	_ = json.Unmarshal([]byte(a.Graders), &ag)
	_ = json.Unmarshal([]byte(b.Graders), &bg)
	type pair struct{ a, b int }
	var pairs []pair
	used := map[int]bool{}
	for i, g := range ag {
		for j, o := range bg {
			if !used[j] && bytes.Equal(compactJSON(g.Spec), compactJSON(o.Spec)) {
				pairs = append(pairs, pair{i, j})
				used[j] = true
				break
			}
		}
	}
	type key struct {
		row    int64
		repeat int
	}
	base := map[key]db.Cell{}
	var aLat, bLat []float64
	for _, c := range ac {
		if c.Variant == in.Variant {
			base[key{c.RowKey, c.Repeat}] = c
			out.Cost -= c.CostUSD
			if c.Status == db.CellDone {
				aLat = append(aLat, c.LatencyMs)
			}
		}
	}
	counts := make([]struct{ aPass, bPass, both int }, len(pairs))
	deltas := make([]GraderDelta, len(pairs))
	for i, p := range pairs {
		deltas[i].Name = grade.NameOf(ag[p.a].Spec)
	}
	for _, c := range bc {
		if c.Variant != in.OtherVariant {
			continue
		}
		out.Cost += c.CostUSD
		if c.Status == db.CellDone {
			bLat = append(bLat, c.LatencyMs)
		}
		old, ok := base[key{c.RowKey, c.Repeat}]
		if !ok {
			continue
		}
		out.Matched++
		for i, p := range pairs {
			og, oOK := gradeOf(old, p.a)
			ng, nOK := gradeOf(c, p.b)
			if !oOK || !nOK {
				continue
			}
			change := ""
			switch {
			case og.Error == "" && ng.Error == "":
				counts[i].both++
				if og.Pass {
					counts[i].aPass++
				}
				if ng.Pass {
					counts[i].bPass++
				}
				switch {
				case og.Pass && !ng.Pass:
					change = "regressed"
					deltas[i].Regressed++
				case !og.Pass && ng.Pass:
					change = "fixed"
					deltas[i].Fixed++
				}
			case (og.Error == "") != (ng.Error == ""):
				change = "error"
			}
			if change != "" {
				out.Changes = append(out.Changes, CellChange{Grader: deltas[i].Name, Change: change, Row: c.Row, Repeat: c.Repeat, Vars: c.Vars,
					BaselineCell: old.ID, OtherCell: c.ID, BaselineOut: old.Output, OtherOut: c.Output,
					BaselineWhy: reasonOf(og), OtherWhy: reasonOf(ng)})
			}
		}
	}
	for i := range deltas {
		if n := counts[i].both; n > 0 {
			ar, br := float64(counts[i].aPass)/float64(n), float64(counts[i].bPass)/float64(n)
			d := br - ar
			deltas[i].Baseline, deltas[i].Other, deltas[i].Delta = &ar, &br, &d
		}
	}
	out.Graders = append(out.Graders, deltas...)
	order := map[string]int{"regressed": 0, "fixed": 1, "error": 2}
	slices.SortStableFunc(out.Changes, func(x, y CellChange) int { return order[x.Change] - order[y.Change] })
	out.ChangesTotal = len(out.Changes)
	if len(out.Changes) > compareMaxChanges {
		out.Changes = out.Changes[:compareMaxChanges]
	}
	if ap, ok := grade.P50(aLat); ok {
		if bp, ok := grade.P50(bLat); ok {
			d := bp - ap
			out.Latency = &d
		}
	}
	return out, nil
}

// gradeOf is a cell's grade by grader i, when it has one.
func gradeOf(c db.Cell, i int) (db.CellGrade, bool) {
	for _, g := range c.Grades {
		if g.Grader == i {
			return g, true
		}
	}
	return db.CellGrade{}, false
}

func reasonOf(g db.CellGrade) string {
	if g.Error != "" {
		return "grading error: " + g.Error
	}
	return g.Reason
}

// compactJSON is raw without insignificant space, for comparing specs.
func compactJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
