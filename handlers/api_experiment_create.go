package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"knobs/db"
	"knobs/experiment"
	"knobs/field"
	"knobs/grade"
	"knobs/llm"
	"knobs/preset"
)

// VariantInput is one variant of a new experiment: a preset at a label
// or version (with overrides), or a setup of its own.
type VariantInput struct {
	Name string `json:"name,omitempty" maxLength:"100" doc:"What the results call it; by default the preset and version, or the model."`
	PresetRun
	Provider string          `json:"provider,omitempty" doc:"With endpoint and body, instead of preset."`
	Endpoint string          `json:"endpoint,omitempty" enum:"chat,completion,"`
	Body     json.RawMessage `json:"body,omitempty" doc:"The request body, with {{placeholders}} for the dataset's columns."`
}

// CreateExperimentInput is POST /api/v1/experiments.
type CreateExperimentInput struct {
	Body struct {
		Name           string            `json:"name" minLength:"1" maxLength:"100"`
		Dataset        int64             `json:"dataset" minimum:"1" doc:"The dataset's id."`
		DatasetVersion int               `json:"dataset_version,omitempty" minimum:"0" doc:"Its version; the latest by default."`
		Variants       []VariantInput    `json:"variants" minItems:"1" maxItems:"10"`
		Repeats        int               `json:"repeats,omitempty" minimum:"0" maximum:"20" doc:"Independent samples of every cell (1 by default): never cached."`
		Graders        []json.RawMessage `json:"graders,omitempty" maxItems:"20" doc:"Each grader's JSON, as the /api page lists the types."`
		Concurrency    int               `json:"concurrency,omitempty" minimum:"0" maximum:"64" doc:"Cells running at once per provider (4 by default)."`
		Visibility     string            `json:"visibility,omitempty" enum:"private,team,"`
	}
}

// ExperimentOutput answers an experiment.
type ExperimentOutput struct {
	Body ExperimentDetail
}

// CreateAPIExperiment checks an experiment whole (every variant against
// the dataset's rows, every grader, every judge's preset) and starts it:
// 201 with the experiment, its cells to come over its events. Nothing is
// stored or sent when anything is wrong (422).
func (h *Handler) CreateAPIExperiment(ctx context.Context, in *CreateExperimentInput) (*ExperimentOutput, error) {
	u := apiUser(ctx)
	plan, err := h.planExperiment(ctx, u, in)
	if err != nil {
		return nil, err
	}
	e, err := h.startExperiment(ctx, u, plan)
	if err != nil {
		return nil, err
	}
	d, err := h.experimentDetail(ctx, u.ID, e)
	if err != nil {
		return nil, err
	}
	return &ExperimentOutput{Body: d}, nil
}

// experimentPlan is a new experiment checked whole, before anything is
// stored or sent: what the experiments page shows before it starts.
type experimentPlan struct {
	name       string
	visibility string
	dataset    db.Dataset
	version    int
	rows       []db.DatasetRow
	variants   []db.ExperimentVariant
	graders    []experiment.Grader
	repeats    int
	conc       int
}

// planExperiment checks a new experiment as user: field errors come back
// as a 422 Problem naming each field (variants[1].variables, graders[0].type).
func (h *Handler) planExperiment(ctx context.Context, u db.User, in *CreateExperimentInput) (experimentPlan, error) {
	b := in.Body
	fe := field.Errors{}
	name := strings.TrimSpace(b.Name)
	if name == "" || utf8.RuneCountInString(name) > 100 {
		fe.Add("name", "Give the experiment a name of up to 100 characters.")
	}
	// The API's schema holds these bounds too; the pages come here
	// without it.
	if b.Repeats < 0 || b.Repeats > ExperimentMaxRepeats {
		fe.Add("repeats", fmt.Sprintf("Repeats are 1 to %d.", ExperimentMaxRepeats))
	}
	if b.Concurrency < 0 || b.Concurrency > ExperimentMaxConcurrency {
		fe.Add("concurrency", fmt.Sprintf("Concurrency is 1 to %d cells at once per provider.", ExperimentMaxConcurrency))
	}
	if len(b.Variants) == 0 || len(b.Variants) > ExperimentMaxVariants {
		fe.Add("variants", fmt.Sprintf("Give 1 to %d variants.", ExperimentMaxVariants))
	}
	if len(b.Graders) > ExperimentMaxGraders {
		fe.Add("graders", fmt.Sprintf("An experiment has at most %d graders.", ExperimentMaxGraders))
	}
	if b.Visibility != "" && b.Visibility != db.PresetPrivate && b.Visibility != db.PresetTeam {
		fe.Add("visibility", "Choose private or team.")
	}
	ds, err := h.store.Dataset(ctx, u.ID, b.Dataset)
	if errors.Is(err, db.ErrNotFound) {
		fe.Add("dataset", "There is no such dataset.")
		return experimentPlan{}, apiInvalid(fe)
	} else if err != nil {
		return experimentPlan{}, err
	}
	version := b.DatasetVersion
	if version == 0 {
		version = ds.Version
	}
	dv, err := h.store.DatasetVersion(ctx, u.ID, ds.ID, version)
	if errors.Is(err, db.ErrNotFound) {
		fe.Add("dataset_version", "The dataset has no version "+strconv.Itoa(version)+".")
		return experimentPlan{}, apiInvalid(fe)
	} else if err != nil {
		return experimentPlan{}, err
	}
	repeats := max(1, b.Repeats)
	conc := b.Concurrency
	if conc == 0 {
		conc = experimentDefaultConc
	}
	if cells := dv.Rows * len(b.Variants) * repeats; cells > ExperimentMaxCells {
		fe.Add("repeats", fmt.Sprintf("%d rows × %d variants × %d repeats is %d cells; an experiment has at most %d.", dv.Rows, len(b.Variants), repeats, cells, ExperimentMaxCells))
	}
	if dv.Rows == 0 {
		fe.Add("dataset", "The dataset version has no rows.")
	}
	if !fe.Empty() {
		return experimentPlan{}, apiInvalid(fe)
	}
	rows, err := h.store.DatasetRows(ctx, u.ID, ds.ID, version, 0, dv.Rows)
	if err != nil {
		return experimentPlan{}, err
	}

	variants := make([]db.ExperimentVariant, len(b.Variants))
	for i, v := range b.Variants {
		ev, vfe, err := h.experimentVariant(ctx, i, v, rows)
		if err != nil {
			return experimentPlan{}, err
		}
		for k, msg := range vfe {
			fe.Add(fmt.Sprintf("variants[%d].%s", i, k), msg)
		}
		variants[i] = ev
	}
	graders := make([]experiment.Grader, len(b.Graders))
	for i, raw := range b.Graders {
		g, gfe, err := h.experimentGrader(ctx, raw)
		if err != nil {
			return experimentPlan{}, err
		}
		for k, msg := range gfe {
			fe.Add(fmt.Sprintf("graders[%d].%s", i, k), msg)
		}
		graders[i] = g
	}
	if !fe.Empty() {
		return experimentPlan{}, apiInvalid(fe)
	}
	return experimentPlan{name: name, visibility: b.Visibility, dataset: ds, version: version, rows: rows, variants: variants,
		graders: graders, repeats: repeats, conc: conc}, nil
}

// startExperiment stores a checked experiment with all its cells pending
// and starts it.
func (h *Handler) startExperiment(ctx context.Context, u db.User, p experimentPlan) (db.Experiment, error) {
	gj, err := json.Marshal(p.graders)
	if err != nil {
		return db.Experiment{}, err
	}
	cells := make([]db.Cell, 0, len(p.rows)*len(p.variants)*p.repeats)
	for ri, r := range p.rows {
		for rep := range p.repeats {
			for vi := range p.variants {
				cells = append(cells, db.Cell{Variant: vi, Row: ri, RowKey: r.Key, Repeat: rep, Vars: r.Vars, Expected: r.Expected, Tags: r.Tags})
			}
		}
	}
	e, err := h.store.CreateExperiment(ctx, db.Experiment{OwnerID: u.ID, Name: p.name, Visibility: p.visibility, DatasetID: p.dataset.ID,
		DatasetVersion: p.version, DatasetName: p.dataset.Name, Repeats: p.repeats, Concurrency: p.conc, Graders: string(gj)}, p.variants, cells)
	if err != nil {
		return db.Experiment{}, err
	}
	if err := h.experiments.Start(e); err != nil {
		return db.Experiment{}, &Problem{Status: 503, Message: "Knobs is shutting down; the experiment will start when it is back."}
	}
	return e, nil
}

// experimentVariant resolves and checks one variant against the rows:
// its spec (a preset's version with overrides, or its own), checked as a
// run with the first row's values, and every row having a value for each
// of its variables.
func (h *Handler) experimentVariant(ctx context.Context, i int, v VariantInput, rows []db.DatasetRow) (db.ExperimentVariant, field.Errors, error) {
	ev := db.ExperimentVariant{Index: i, Name: strings.TrimSpace(v.Name)}
	var st playgroundState
	own := v.Provider != "" || v.Endpoint != "" || len(v.Body) > 0
	switch {
	case v.Ref != "" && own:
		return ev, field.Errors{"preset": "Give a preset or provider, endpoint and body, not both."}, nil
	case v.Ref != "":
		var err error
		st, err = h.presetState(ctx, v.PresetRun, nil)
		var p *Problem
		if errors.As(err, &p) && p.Status < 500 {
			return ev, field.Errors{"preset": p.Message}, nil
		} else if err != nil {
			return ev, nil, err
		}
		ev.PresetID, ev.PresetVersion, ev.PresetLabel = st.PresetID, st.PresetVersion, v.Label
		if ev.Name == "" {
			ev.Name = fmt.Sprintf("%s v%d", st.PresetName, st.PresetVersion)
			if v.Label != "" {
				ev.Name = fmt.Sprintf("%s · %s (v%d)", st.PresetName, v.Label, st.PresetVersion)
			}
		}
	default:
		if v.Provider == "" || v.Endpoint == "" {
			return ev, field.Errors{"preset": "Name a preset, or give provider, endpoint and body."}, nil
		}
		st = playgroundState{RunSpec: llm.RunSpec{Provider: v.Provider, Endpoint: llm.Endpoint(v.Endpoint), Body: v.Body}}
		if ev.Name == "" {
			ev.Name = st.RunSpec.Model()
		}
	}
	// Every row has what the variant asks for, before anything is sent.
	names := preset.Variables(st.RunSpec)
	var lacking []string
	for ri, r := range rows {
		var missing []string
		for _, n := range names {
			if _, ok := r.Vars[n]; !ok {
				if _, ok := st.Variables[n]; !ok {
					missing = append(missing, "{{"+n+"}}")
				}
			}
		}
		if len(missing) > 0 && len(lacking) < 5 {
			lacking = append(lacking, fmt.Sprintf("row %d lacks %s", ri+1, strings.Join(missing, ", ")))
		}
	}
	if len(lacking) > 0 {
		return ev, field.Errors{"variables": "The dataset does not fill the variant's variables: " + strings.Join(lacking, "; ") + "."}, nil
	}
	if len(rows) == 0 {
		return ev, field.Errors{"variables": "The dataset version has no rows."}, nil
	}
	check := st
	check.Variables = maps.Clone(st.Variables)
	if check.Variables == nil {
		check.Variables = map[string]string{}
	}
	maps.Copy(check.Variables, rows[0].Vars)
	_, fe, err := h.checkRun(ctx, check)
	if err != nil || len(fe) > 0 {
		return ev, fe, err
	}
	spec, err := json.Marshal(st.RunSpec)
	if err != nil {
		return ev, nil, err
	}
	ev.Spec = string(spec)
	if len(st.Variables) > 0 {
		vars, _ := json.Marshal(st.Variables)
		ev.Variables = string(vars)
	}
	if ev.Name == "" {
		ev.Name = "Variant " + strconv.Itoa(i+1)
	}
	return ev, nil, nil
}

// experimentGrader checks a grader and, for a judge, resolves its
// preset to the setup it runs: with the verdict's JSON Schema as its
// response_format when the provider takes one and the preset sets none.
func (h *Handler) experimentGrader(ctx context.Context, raw json.RawMessage) (experiment.Grader, field.Errors, error) {
	g := experiment.Grader{Spec: raw}
	asFields := func(err error) field.Errors {
		var fe field.Errors
		if errors.As(err, &fe) {
			return fe
		}
		return field.Errors{"type": err.Error()}
	}
	if grade.TypeOf(raw) != "judge" {
		if _, err := grade.Parse(raw); err != nil {
			return g, asFields(err), nil
		}
		return g, nil, nil
	}
	js, err := grade.ParseJudge(raw)
	if err != nil {
		return g, asFields(err), nil
	}
	st, err := h.presetState(ctx, PresetRun{Ref: js.Preset, Label: js.Label, Version: js.Version}, nil)
	var p *Problem
	if errors.As(err, &p) && p.Status < 500 {
		return g, field.Errors{"preset": "The judge's preset: " + p.Message}, nil
	} else if err != nil {
		return g, nil, err
	}
	setup := experiment.Setup{Spec: st.RunSpec, Variables: st.Variables, PresetID: st.PresetID}
	var body map[string]json.RawMessage
	if json.Unmarshal(st.RunSpec.Body, &body) == nil && body["response_format"] == nil {
		with := setup.Spec
		if with.Body, err = preset.Override(with.Body, map[string]json.RawMessage{"response_format": grade.JudgeSchema()}); err == nil {
			if prov, err := h.findProvider(ctx, with.Provider); err == nil &&
				len(llm.Validate(with, prov.Dialect, modelInfo(prov, with.Model()))) == 0 {
				setup.Spec = with
			}
		}
	}
	names := preset.Variables(setup.Spec)
	if !slices.Contains(names, "output") {
		return g, field.Errors{"preset": "The judge's preset never reads {{output}}, the answer it grades: put it in the prompt."}, nil
	}
	g.Judge = &setup
	return g, nil, nil
}
