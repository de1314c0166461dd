package db_test

import (
	"context"
	"errors"
	"testing"

	"knobs/db"
)

func TestExperimentCellsEndGradedAndRated(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	team := newPresetTeam(t, s)
	var cells []db.Cell
	for row := range 2 {
		for v := range 2 {
			cells = append(cells, db.Cell{Variant: v, Row: row, RowKey: int64(10 + row), Vars: map[string]string{"topic": "t"}, Expected: strp("x")})
		}
	}
	e, err := s.CreateExperiment(ctx, db.Experiment{OwnerID: team.alice, Name: "v6 vs v7", Visibility: db.PresetTeam, DatasetVersion: 1,
		DatasetName: "Rivers", Repeats: 1, Concurrency: 4, Graders: `[]`},
		[]db.ExperimentVariant{{Index: 0, Name: "v6", Spec: "{}"}, {Index: 1, Name: "v7", Spec: "{}"}}, cells)
	must(t, err)
	if e.Status != db.ExperimentRunning || e.Total != 4 || e.Finished != 0 || e.OwnerName != "alice" {
		t.Fatalf("created: %+v", e)
	}
	todo, err := s.UnfinishedCells(ctx, e.ID)
	must(t, err)
	if len(todo) != 4 || todo[0].Row != 0 || todo[1].Row != 0 || todo[2].Row != 1 || *todo[0].Expected != "x" {
		t.Fatalf("unfinished: %+v", todo)
	}
	must(t, s.StartCell(ctx, todo[0].ID, 77))
	c := todo[0]
	c.Status, c.RunID, c.Output, c.LatencyMs, c.Tokens = db.CellDone, 77, "answer", 120, 9
	c.Grades = []db.CellGrade{{Grader: 0, Pass: true, Score: 1, Reason: "equal"}, {Grader: 1, Error: "no price known"}}
	must(t, s.FinishCell(ctx, c))
	fail := todo[1]
	fail.Status, fail.Error = db.CellError, "rate limited"
	must(t, s.FinishCell(ctx, fail))
	up := true
	must(t, s.RateCell(ctx, team.bob, e.ID, c.ID, db.CellRating{Thumbs: &up, Note: "good"}))
	must(t, s.RateCell(ctx, team.bob, e.ID, c.ID, db.CellRating{Stars: 4}))
	if err := s.RateCell(ctx, team.bob, e.ID, 999999, db.CellRating{Stars: 4}); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("rating an unknown cell: %v", err)
	}

	got, err := s.ExperimentCells(ctx, team.bob, e.ID, 0, 10)
	must(t, err)
	if len(got) != 4 || got[0].Status != db.CellDone || got[0].Output != "answer" || got[0].Attempts != 1 || got[0].RunID != 77 ||
		len(got[0].Grades) != 2 || !got[0].Grades[0].Pass || got[0].Grades[1].Error == "" {
		t.Fatalf("cells: %+v", got)
	}
	if len(got[0].Ratings) != 1 || got[0].Ratings[0].Stars != 4 || got[0].Ratings[0].Thumbs != nil || got[0].Ratings[0].Username != "bob" {
		t.Errorf("bob's rating, replaced: %+v", got[0].Ratings)
	}
	todo, err = s.UnfinishedCells(ctx, e.ID)
	must(t, err)
	if len(todo) != 2 {
		t.Errorf("unfinished after two ended: %d", len(todo))
	}
	running, err := s.RunningExperiments(ctx)
	must(t, err)
	if len(running) != 1 || running[0].Finished != 2 || running[0].Failed != 1 {
		t.Errorf("running: %+v", running)
	}
	must(t, s.EndExperiment(ctx, e.ID, db.ExperimentCancelled, ""))
	e, err = s.Experiment(ctx, team.alice, e.ID)
	must(t, err)
	if e.Status != db.ExperimentCancelled || e.Finished != 4 || e.FinishedAt.IsZero() {
		t.Errorf("cancelled: %+v", e)
	}
	priv, err := s.CreateExperiment(ctx, db.Experiment{OwnerID: team.alice, Name: "mine", DatasetVersion: 1, Repeats: 1, Concurrency: 1, Graders: `[]`}, nil, nil)
	must(t, err)
	if _, err := s.Experiment(ctx, team.bob, priv.ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("bob sees alice's private experiment: %v", err)
	}
	list, err := s.Experiments(ctx, team.alice, 0, 10)
	must(t, err)
	if len(list) != 2 || list[0].ID != priv.ID {
		t.Errorf("alice's list: %+v", list)
	}
}
