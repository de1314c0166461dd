package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/field"
	"knobs/views"
)

// graderHelp explains each grader type as grade/doc.go does, with an
// example the form starts a new grader from.
var graderHelp = []views.GraderHelp{
	{Type: "exact", Help: "The answer equals a value, or without \"value\" the row's expected answer; ignore_case, trim_space and collapse_space loosen the match.", Example: `{"type": "exact", "value": "{{expected}}", "ignore_case": true, "trim_space": true}`},
	{Type: "contains", Help: "The answer contains the terms: mode \"all\" (the default) or \"any\"; the score is the share of terms found. Up to 100 terms.", Example: `{"type": "contains", "terms": ["Paris"], "mode": "all", "ignore_case": true}`},
	{Type: "not_contains", Help: "The answer contains none of the terms (mode \"all\"), or misses at least one (\"any\").", Example: `{"type": "not_contains", "terms": ["As an AI"]}`},
	{Type: "regex", Help: "The answer matches a regular expression (RE2: no lookaround or backreferences), or with must_not_match does not.", Example: `{"type": "regex", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"}`},
	{Type: "json", Help: "The answer is valid JSON; strip_fence accepts it inside a ```json fence.", Example: `{"type": "json", "strip_fence": true}`},
	{Type: "json_schema", Help: "The answer is JSON matching a JSON Schema, or the variant's own response_format schema with \"schema\": \"response_format\".", Example: `{"type": "json_schema", "schema": {"type": "object", "required": ["city"]}}`},
	{Type: "json_path_equals", Help: "A value inside the JSON answer equals a JSON value; the path is $ followed by .key, [\"key\"] or [index].", Example: `{"type": "json_path_equals", "path": "$.items[0].name", "value": "apple"}`},
	{Type: "length", Help: "The answer's length in characters (\"chars\") or words: min, max or both.", Example: `{"type": "length", "min": 10, "max": 200, "unit": "words"}`},
	{Type: "latency", Help: "The run took at most max_ms milliseconds.", Example: `{"type": "latency", "max_ms": 2000}`},
	{Type: "cost", Help: "The run cost at most max_usd dollars; an unknown cost is a grading error, not a pass.", Example: `{"type": "cost", "max_usd": 0.01}`},
	{Type: "judge", Help: "Another preset reads the answer and scores it: it gets {{input}}, {{output}}, {{expected}} and the row's columns, answers {\"score\", \"reason\"} on its scale, and passes at pass_at once scaled to 0–1.", Example: `{"type": "judge", "preset": "my judge", "label": "production", "scale": 5, "pass_at": 0.5}`},
}

// ShowNewExperimentPage shows the form that starts an experiment, with
// two variants and one grader to fill in.
func (h *Handler) ShowNewExperimentPage(c *fiber.Ctx) error {
	f := views.ExperimentForm{Repeats: "1", Concurrency: strconv.Itoa(experimentDefaultConc), Visibility: "private",
		Variants: make([]views.VariantForm, 2), Graders: []string{graderHelp[0].Example}}
	if d := c.Query("dataset"); d != "" {
		f.Dataset = d
	}
	return h.renderNewExperiment(c, fiber.StatusOK, f, nil, nil)
}

func (h *Handler) renderNewExperiment(c *fiber.Ctx, status int, f views.ExperimentForm, errs field.Errors, est *views.ExperimentEstimate) error {
	u, _ := CurrentUser(c)
	v := views.NewExperimentView{Page: h.page(c, "New experiment", "experiments"), Form: f, Graders: graderHelp, Errors: errs, Estimate: est}
	var err error
	if v.Datasets, v.Presets, err = h.sourceChoices(ctx(c), u.ID); err != nil {
		return err
	}
	return Render(c, status, views.NewExperimentPage(v))
}

// sourceChoices lists what the new experiment and arena forms offer
// user to draw from: their datasets and the presets they may run.
func (h *Handler) sourceChoices(ctx context.Context, user int64) ([]views.DatasetChoice, []views.KeyValue, error) {
	datasets, err := h.store.Datasets(ctx, user)
	if err != nil {
		return nil, nil, err
	}
	var ds []views.DatasetChoice
	for _, d := range datasets {
		ds = append(ds, views.DatasetChoice{ID: d.ID, Name: d.Name, Version: d.Version, Rows: d.Rows})
	}
	presets, err := h.store.PresetNames(ctx, user)
	if err != nil {
		return nil, nil, err
	}
	var ps []views.KeyValue
	for _, p := range presets {
		ps = append(ps, views.KeyValue{Key: strconv.FormatInt(p.ID, 10), Value: p.Name})
	}
	return ds, ps, nil
}

// formValues is every value posted under name, in order.
func formValues(c *fiber.Ctx, name string) []string {
	var out []string
	for _, b := range c.Request().PostArgs().PeekMulti(name) {
		out = append(out, string(b))
	}
	return out
}

// experimentFormOf reads the new experiment form as posted.
func experimentFormOf(c *fiber.Ctx) views.ExperimentForm {
	multi := func(name string) []string { return formValues(c, name) }
	f := views.ExperimentForm{Name: c.FormValue("name"), Dataset: c.FormValue("dataset"), DatasetVersion: c.FormValue("dataset_version"),
		Repeats: c.FormValue("repeats"), Concurrency: c.FormValue("concurrency"), Visibility: c.FormValue("visibility"),
		Graders: multi("grader")}
	names, presets, labels, versions := multi("variant_name"), multi("variant_preset"), multi("variant_label"), multi("variant_version")
	models, providers, endpoints, bodies := multi("variant_model"), multi("variant_provider"), multi("variant_endpoint"), multi("variant_body")
	at := func(xs []string, i int) string {
		if i < len(xs) {
			return xs[i]
		}
		return ""
	}
	n := min(max(len(names), len(presets), len(bodies)), ExperimentMaxVariants)
	for i := range n {
		f.Variants = append(f.Variants, views.VariantForm{Name: at(names, i), Preset: at(presets, i), Label: at(labels, i),
			Version: at(versions, i), Model: at(models, i), Provider: at(providers, i), Endpoint: at(endpoints, i), Body: at(bodies, i)})
	}
	if len(f.Graders) > ExperimentMaxGraders {
		f.Graders = f.Graders[:ExperimentMaxGraders]
	}
	return f
}

// slotIndex finds the form slot of an API field name: variants[k] names
// the k-th variant sent, which is the slots[k]-th of the form.
var slotIndex = regexp.MustCompile(`^(variants|graders)\[(\d+)\]`)

// experimentRequest turns the form into the API's request, and says
// which form slot each variant and grader sent came from (empty slots
// are left out). Field errors are those the form alone shows.
func experimentRequest(f views.ExperimentForm) (*CreateExperimentInput, map[string][]int, field.Errors) {
	in := &CreateExperimentInput{}
	b := &in.Body
	fe := field.Errors{}
	b.Name = f.Name
	b.Visibility = f.Visibility
	number := func(key, s string) int {
		s = strings.TrimSpace(s)
		if s == "" {
			return 0
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			fe.Add(key, "Give a whole number.")
		}
		return n
	}
	if f.Dataset == "" {
		fe.Add("dataset", "Choose a dataset.")
	} else if id, err := strconv.ParseInt(f.Dataset, 10, 64); err == nil && id > 0 {
		b.Dataset = id
	} else {
		fe.Add("dataset", "There is no such dataset.")
	}
	b.DatasetVersion = number("dataset_version", f.DatasetVersion)
	b.Repeats = number("repeats", f.Repeats)
	b.Concurrency = number("concurrency", f.Concurrency)
	slots := map[string][]int{}
	for i, v := range f.Variants {
		key := fmt.Sprintf("variants[%d].", i)
		if v.Preset == "" && strings.TrimSpace(v.Body) == "" {
			continue
		}
		in := VariantInput{Name: strings.TrimSpace(v.Name)}
		if v.Preset != "" {
			in.Ref, in.Label = v.Preset, strings.TrimSpace(v.Label)
			in.Version = number(key+"version", v.Version)
			if m := strings.TrimSpace(v.Model); m != "" {
				model, _ := json.Marshal(m)
				in.Overrides = map[string]json.RawMessage{"model": model}
			}
		}
		if body := strings.TrimSpace(v.Body); body != "" {
			if !json.Valid([]byte(body)) {
				fe.Add(key+"body", "The body is not JSON.")
			}
			in.Provider, in.Endpoint, in.Body = strings.TrimSpace(v.Provider), v.Endpoint, json.RawMessage(body)
		}
		b.Variants = append(b.Variants, in)
		slots["variants"] = append(slots["variants"], i)
	}
	if len(b.Variants) == 0 {
		fe.Add("variants", "Give at least one variant: a preset, or a body of its own.")
	}
	for i, g := range f.Graders {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		if !json.Valid([]byte(g)) {
			fe.Add(fmt.Sprintf("graders[%d].json", i), "The grader is not JSON: write an object such as {\"type\": \"json\"}.")
			continue
		}
		b.Graders = append(b.Graders, json.RawMessage(g))
		slots["graders"] = append(slots["graders"], i)
	}
	return in, slots, fe
}

// formErrors names the API's field errors by the form's slots.
func formErrors(fe field.Errors, slots map[string][]int) field.Errors {
	out := field.Errors{}
	for k, msg := range fe {
		if m := slotIndex.FindStringSubmatch(k); m != nil {
			if n, err := strconv.Atoi(m[2]); err == nil && n < len(slots[m[1]]) {
				k = fmt.Sprintf("%s[%d]%s", m[1], slots[m[1]][n], k[len(m[0]):])
			}
		}
		out[k] = msg
	}
	return out
}
