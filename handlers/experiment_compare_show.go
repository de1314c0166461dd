package handlers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/views"
)

// compareShown bounds the changed cells the page shows with their diffs.
const compareShown = 200

// CompareExperimentsForm sends the experiment page's "Compare with" form
// (?other=N) to the comparison's own address.
func (h *Handler) CompareExperimentsForm(c *fiber.Ctx) error {
	id, err := pathID(c, "experiment")
	if err != nil {
		return err
	}
	other, err := strconv.ParseInt(c.Query("other"), 10, 64)
	if err != nil || other <= 0 {
		return fiber.NewError(fiber.StatusBadRequest, "Choose an experiment to compare with.")
	}
	return c.Redirect(fmt.Sprintf("/experiments/%d/compare/%d", id, other), fiber.StatusSeeOther)
}

// ShowExperimentCompare compares a variant of one experiment with a
// variant of another on the same dataset: pass rates per grader, and the
// cells whose verdict changed with both answers diffed word by word,
// passes that now fail first.
func (h *Handler) ShowExperimentCompare(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "experiment")
	if err != nil {
		return err
	}
	other, err := strconv.ParseInt(c.Params("other"), 10, 64)
	if err != nil || other <= 0 {
		return fiber.NewError(fiber.StatusNotFound, "There is no such experiment.")
	}
	in := CompareExperimentsInput{ID: id, Other: other}
	in.Variant, _ = strconv.Atoi(c.Query("variant"))
	in.OtherVariant, _ = strconv.Atoi(c.Query("other_variant"))
	in.Variant, in.OtherVariant = max(in.Variant, 0), max(in.OtherVariant, 0)
	as := context.WithValue(ctx(c), userKey, u)
	a, err := h.apiExperiment(as, id)
	if err != nil {
		return err
	}
	b, err := h.apiExperiment(as, other)
	if err != nil {
		return err
	}
	v := views.ExperimentCompareView{Page: h.page(c, "Compare experiments", "experiments"), BaseID: a.ID, OtherID: b.ID,
		BaseName: a.Name, OtherName: b.Name, BaseVariant: in.Variant, OtherVariant: in.OtherVariant}
	for side, e := range map[*[]views.KeyValue]int64{&v.BaseVariants: a.ID, &v.OtherVariants: b.ID} {
		vs, err := h.store.ExperimentVariants(ctx(c), e)
		if err != nil {
			return err
		}
		for _, x := range vs {
			*side = append(*side, views.KeyValue{Key: strconv.Itoa(x.Index), Value: x.Name})
		}
	}
	cmp, err := h.compareExperiments(as, in)
	var p *Problem
	if errors.As(err, &p) && p.Status < 500 {
		v.Error = p.Message
		for _, k := range slices.Sorted(maps.Keys(p.Fields)) {
			v.Error += " " + p.Fields[k]
		}
		return Render(c, p.Status, views.ExperimentComparePage(v))
	} else if err != nil {
		return err
	}
	v.Matched = cmp.Matched
	pct := func(f *float64) string {
		if f == nil {
			return "—"
		}
		return fmt.Sprintf("%.0f%%", *f*100)
	}
	for _, g := range cmp.Graders {
		d := views.ExperimentGraderDelta{Name: g.Name, Base: pct(g.Baseline), Other: pct(g.Other), Delta: "—", Regressed: g.Regressed, Fixed: g.Fixed}
		if g.Delta != nil {
			d.Delta, d.Worse = fmt.Sprintf("%+.0f points", *g.Delta*100), *g.Delta < 0
		}
		v.Graders = append(v.Graders, d)
	}
	v.Latency, v.Cost = "—", fmt.Sprintf("%+.4f USD", cmp.Cost)
	if cmp.Latency != nil {
		v.Latency = fmt.Sprintf("%+.0f ms", *cmp.Latency)
	}
	labels := map[string]string{"regressed": "passed, now fails", "fixed": "failed, now passes", "error": "graded on one side only"}
	if cmp.ChangesTotal > len(cmp.Changes) {
		v.More = cmp.ChangesTotal - len(cmp.Changes)
	}
	for i, ch := range cmp.Changes {
		if i == compareShown {
			v.More = cmp.ChangesTotal - compareShown
			break
		}
		x := views.ExperimentChange{Grader: ch.Grader, Change: ch.Change, Label: labels[ch.Change], Row: ch.Row + 1,
			BaseWhy: ch.BaselineWhy, OtherWhy: ch.OtherWhy, Diff: textDiff(ch.BaselineOut, ch.OtherOut), DiffID: "xc-diff-" + strconv.Itoa(i)}
		for _, k := range slices.Sorted(maps.Keys(ch.Vars)) {
			x.Vars = append(x.Vars, views.KeyValue{Key: k, Value: ch.Vars[k]})
		}
		v.Changes = append(v.Changes, x)
	}
	return Render(c, fiber.StatusOK, views.ExperimentComparePage(v))
}
