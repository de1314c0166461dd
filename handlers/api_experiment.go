package handlers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/experiment"
	"knobs/field"
	"knobs/grade"
	"knobs/llm"
)

// Bounds of an experiment.
const (
	ExperimentMaxVariants    = 10
	ExperimentMaxGraders     = 20
	ExperimentMaxRepeats     = 20
	ExperimentMaxConcurrency = 64
	ExperimentMaxCells       = 100_000
	experimentDefaultConc    = 4
)

// ExperimentDetail is an experiment as the API shows it: what it runs,
// how far it got, and per variant how its cells did.
type ExperimentDetail struct {
	ID          int64               `json:"id"`
	Name        string              `json:"name"`
	Status      string              `json:"status" enum:"running,done,cancelled,error"`
	Error       string              `json:"error" doc:"Why the experiment stopped, when it failed as a whole."`
	Owner       string              `json:"owner"`
	Visibility  string              `json:"visibility" enum:"private,team"`
	Dataset     ExperimentDataset   `json:"dataset"`
	Repeats     int                 `json:"repeats"`
	Concurrency int                 `json:"concurrency" doc:"Cells running at once, per provider."`
	Variants    []ExperimentVariant `json:"variants" nullable:"false"`
	Graders     []ExperimentGrader  `json:"graders" nullable:"false"`
	Progress    experiment.Progress `json:"progress"`
	Aggregates  []VariantAggregate  `json:"aggregates" nullable:"false" doc:"Per variant, over its cells so far."`
	CreatedAt   time.Time           `json:"created_at"`
	FinishedAt  *time.Time          `json:"finished_at"`
	Events      string              `json:"events" doc:"The experiment's events as server-sent events: a cell event as each cell ends, then end."`
}

// ExperimentDataset names the dataset version an experiment ran on.
type ExperimentDataset struct {
	ID      int64  `json:"id" doc:"0 once the dataset is removed; the results keep each row's values."`
	Name    string `json:"name"`
	Version int    `json:"version"`
}

// ExperimentVariant is one setup of an experiment.
type ExperimentVariant struct {
	Index         int    `json:"index"`
	Name          string `json:"name"`
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	Preset        *int64 `json:"preset" doc:"The preset it was made from; null when none."`
	PresetVersion int    `json:"preset_version,omitempty"`
	Label         string `json:"label,omitempty"`
}

// ExperimentGrader is one grader of an experiment.
type ExperimentGrader struct {
	Index int             `json:"index"`
	Name  string          `json:"name"`
	Type  string          `json:"type"`
	Spec  json.RawMessage `json:"spec" doc:"The grader as it was given."`
}

// VariantAggregate is how a variant's cells did.
type VariantAggregate struct {
	Variant      int               `json:"variant"`
	Cells        int               `json:"cells"`
	Done         int               `json:"done" doc:"Cells ended with an answer."`
	Errors       int               `json:"errors" doc:"Cells that failed."`
	Graders      []GraderAggregate `json:"graders" nullable:"false"`
	P50LatencyMs *float64          `json:"p50_latency_ms"`
	P95LatencyMs *float64          `json:"p95_latency_ms"`
	Tokens       int               `json:"tokens"`
	CostUSD      float64           `json:"cost_usd"`
	RatedUp      int               `json:"rated_up" doc:"Thumbs up given by people."`
	RatedDown    int               `json:"rated_down"`
}

// GraderAggregate is how a variant did by one grader.
type GraderAggregate struct {
	Grader    int      `json:"grader"`
	Graded    int      `json:"graded" doc:"Cells the grader could grade."`
	Passed    int      `json:"passed"`
	PassRate  *float64 `json:"pass_rate" doc:"passed / graded; null before any cell is graded."`
	MeanScore *float64 `json:"mean_score"`
	Errors    int      `json:"errors" doc:"Cells the grader could not grade (a grading error is neither a pass nor a fail)."`
	Rated     int      `json:"rated" doc:"People's thumbs on cells this grader graded."`
	Agreement *float64 `json:"agreement" doc:"The share of those thumbs that said what the grader said (up = pass); null when none."`
}

// experimentDetail builds an experiment's detail from the store.
func (h *Handler) experimentDetail(ctx context.Context, viewer int64, e db.Experiment) (ExperimentDetail, error) {
	d := ExperimentDetail{ID: e.ID, Name: e.Name, Status: e.Status, Error: e.Error, Owner: e.OwnerName, Visibility: e.Visibility,
		Dataset: ExperimentDataset{ID: e.DatasetID, Name: e.DatasetName, Version: e.DatasetVersion}, Repeats: e.Repeats,
		Concurrency: e.Concurrency, CreatedAt: e.CreatedAt, Variants: []ExperimentVariant{}, Graders: []ExperimentGrader{},
		Events: "/api/v1/experiments/" + strconv.FormatInt(e.ID, 10) + "/events"}
	if !e.FinishedAt.IsZero() {
		t := e.FinishedAt
		d.FinishedAt = &t
	}
	vs, err := h.store.ExperimentVariants(ctx, e.ID)
	if err != nil {
		return d, err
	}
	for _, v := range vs {
		var spec llm.RunSpec
		_ = json.Unmarshal([]byte(v.Spec), &spec)
		item := ExperimentVariant{Index: v.Index, Name: v.Name, Provider: spec.Provider, Model: spec.Model(),
			PresetVersion: v.PresetVersion, Label: v.PresetLabel}
		if v.PresetID != 0 {
			id := v.PresetID
			item.Preset = &id
		}
		d.Variants = append(d.Variants, item)
	}
	var gs []experiment.Grader
	_ = json.Unmarshal([]byte(e.Graders), &gs)
	for i, g := range gs {
		d.Graders = append(d.Graders, ExperimentGrader{Index: i, Name: grade.NameOf(g.Spec), Type: grade.TypeOf(g.Spec), Spec: g.Spec})
	}
	d.Progress = experiment.Progress{Done: e.Finished, Total: e.Total, Failed: e.Failed}
	if f, ok := h.experiments.Subscribe(e.ID); ok {
		d.Progress = f.Progress()
	}
	aggs, err := h.store.ExperimentAggregates(ctx, e.ID, len(vs), len(gs))
	if err != nil {
		return d, err
	}
	for _, a := range aggs {
		va := VariantAggregate{Variant: a.Variant, Cells: a.Cells, Done: a.Done, Errors: a.Errors, Tokens: a.Tokens, CostUSD: a.CostUSD,
			RatedUp: a.RatedUp, RatedDown: a.RatedDown, Graders: []GraderAggregate{}}
		if v, ok := grade.P50(a.Latencies); ok {
			va.P50LatencyMs = &v
		}
		if v, ok := grade.P95(a.Latencies); ok {
			va.P95LatencyMs = &v
		}
		for gi, g := range a.Graders {
			ga := GraderAggregate{Grader: gi, Graded: g.Graded, Passed: g.Passed, Errors: g.Errors, Rated: g.Compared}
			if g.Compared > 0 {
				agree := float64(g.Agreed) / float64(g.Compared)
				ga.Agreement = &agree
			}
			if g.Graded > 0 {
				rate, mean := float64(g.Passed)/float64(g.Graded), g.ScoreSum/float64(g.Graded)
				ga.PassRate, ga.MeanScore = &rate, &mean
			}
			va.Graders = append(va.Graders, ga)
		}
		d.Aggregates = append(d.Aggregates, va)
	}
	return d, nil
}

// apiExperiment loads an experiment the caller sees: 404 otherwise.
func (h *Handler) apiExperiment(ctx context.Context, id int64) (db.Experiment, error) {
	e, err := h.store.Experiment(ctx, apiUser(ctx).ID, id)
	if errors.Is(err, db.ErrNotFound) {
		return db.Experiment{}, apiNotFound("experiment")
	}
	return e, err
}

// offsetCursor pages a list kept in its own order (an experiment's
// cells by row): the cursor holds the offset of the next page.
const offsetTag = "off:"

func offsetOf(q PageQuery) (int, error) {
	if q.Cursor == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(q.Cursor)
	n, perr := strconv.Atoi(strings.TrimPrefix(string(raw), offsetTag))
	if err != nil || !strings.HasPrefix(string(raw), offsetTag) || perr != nil || n <= 0 {
		return 0, apiInvalid(field.Errors{"cursor": "This is not a cursor Knobs gave out: pass next_cursor from the previous page, or nothing."})
	}
	return n, nil
}

func offsetCursor(n int) *string {
	s := base64.RawURLEncoding.EncodeToString([]byte(offsetTag + strconv.Itoa(n)))
	return &s
}

// experimentProblem answers a change to an experiment the caller sees
// but may not change.
func canChangeExperiment(u db.User, e db.Experiment) error {
	if e.OwnerID != u.ID && !u.IsAdmin() {
		return &Problem{Status: fiber.StatusForbidden, Message: "Only the experiment's owner or an admin can change it."}
	}
	return nil
}
