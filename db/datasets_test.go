package db_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"knobs/db"
)

func strp(s string) *string { return &s }

func rowTexts(rows []db.DatasetRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Vars["topic"]
		if r.Expected != nil {
			out[i] += "=" + *r.Expected
		}
	}
	return out
}

func TestDatasetVersionsKeepTheirRows(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	team := newPresetTeam(t, s)
	d, err := s.CreateDataset(ctx, db.Dataset{OwnerID: team.alice, Name: "Rivers", Visibility: db.PresetTeam, Columns: []string{"topic"}}, []db.DatasetRow{
		{Vars: map[string]string{"topic": "Nile"}, Expected: strp("Egypt"), Tags: []string{"africa"}},
		{Vars: map[string]string{"topic": "Rhine"}},
		{Vars: map[string]string{"topic": "Amazon"}, Expected: strp("Brazil")},
	})
	must(t, err)
	if d.Version != 1 || d.Rows != 3 || !reflect.DeepEqual(d.Columns, []string{"topic"}) || d.OwnerName != "alice" {
		t.Fatalf("created: %+v", d)
	}
	v1, err := s.DatasetRows(ctx, team.bob, d.ID, 1, 0, 100)
	must(t, err)
	if got := rowTexts(v1); !reflect.DeepEqual(got, []string{"Nile=Egypt", "Rhine", "Amazon=Brazil"}) || v1[0].Tags[0] != "africa" {
		t.Fatalf("version 1 rows: %v %+v", got, v1)
	}
	// Change the Rhine, remove the Nile, add the Danube.
	d2, err := s.EditDataset(ctx, team.alice, false, d.ID, db.DatasetEdit{Base: 1,
		Change: []db.DatasetRow{{Key: v1[1].Key, Vars: map[string]string{"topic": "Rhine"}, Expected: strp("Germany")}},
		Remove: []int64{v1[0].Key}, Add: []db.DatasetRow{{Vars: map[string]string{"topic": "Danube"}}}, Note: "fixes"})
	must(t, err)
	if d2.Version != 2 || d2.Rows != 3 {
		t.Fatalf("after the edit: %+v", d2)
	}
	v2, err := s.DatasetRows(ctx, team.alice, d.ID, 2, 0, 100)
	must(t, err)
	if got := rowTexts(v2); !reflect.DeepEqual(got, []string{"Rhine=Germany", "Amazon=Brazil", "Danube"}) {
		t.Errorf("version 2 rows: %v", got)
	}
	if v2[0].Key != v1[1].Key || v2[0].ID == v1[1].ID {
		t.Errorf("a changed row keeps its key and gets new content: %+v vs %+v", v2[0], v1[1])
	}
	// Version 1 still names exactly its rows.
	again, err := s.DatasetRows(ctx, team.alice, d.ID, 1, 0, 100)
	must(t, err)
	if !reflect.DeepEqual(again, v1) {
		t.Errorf("version 1 changed: %+v", again)
	}
	page, err := s.DatasetRows(ctx, team.alice, d.ID, 2, 1, 1)
	must(t, err)
	if got := rowTexts(page); !reflect.DeepEqual(got, []string{"Amazon=Brazil"}) {
		t.Errorf("offset 1 limit 1: %v", got)
	}
	vs, err := s.DatasetVersions(ctx, team.bob, d.ID)
	must(t, err)
	if len(vs) != 2 || vs[0].Version != 2 || vs[0].Note != "fixes" || vs[0].SavedBy != "alice" || vs[1].Rows != 3 {
		t.Errorf("versions: %+v", vs)
	}

	// Refusals change nothing.
	if _, err := s.EditDataset(ctx, team.alice, false, d.ID, db.DatasetEdit{Base: 1}); !errors.Is(err, db.ErrDatasetStale) {
		t.Errorf("a stale base: %v", err)
	}
	if _, err := s.EditDataset(ctx, team.bob, false, d.ID, db.DatasetEdit{Base: 2}); !errors.Is(err, db.ErrForbidden) {
		t.Errorf("bob edits alice's team dataset: %v", err)
	}
	if _, err := s.EditDataset(ctx, team.alice, false, d.ID, db.DatasetEdit{Base: 2, Add: []db.DatasetRow{{Vars: map[string]string{"topic": "Volga"}}},
		Remove: []int64{v1[0].Key}}); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("removing a row already removed: %v", err)
	}
	if _, err := s.DatasetRows(ctx, team.alice, d.ID, 3, 0, 10); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("an unknown version: %v", err)
	}
	cur, err := s.Dataset(ctx, team.alice, d.ID)
	must(t, err)
	if cur.Version != 2 || cur.Rows != 3 {
		t.Errorf("after refused edits: %+v", cur)
	}
	// A private dataset is its owner's alone; removal takes everything.
	priv, err := s.CreateDataset(ctx, db.Dataset{OwnerID: team.alice, Name: "Mine", Columns: []string{"topic"}}, nil)
	must(t, err)
	if _, err := s.Dataset(ctx, team.root, priv.ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("the admin sees alice's private dataset: %v", err)
	}
	list, err := s.Datasets(ctx, team.bob)
	must(t, err)
	if len(list) != 1 || list[0].ID != d.ID {
		t.Errorf("bob lists %+v", list)
	}
	must(t, s.RemoveDataset(ctx, team.root, true, d.ID))
	if _, err := s.DatasetRows(ctx, team.alice, d.ID, 1, 0, 10); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("rows of a removed dataset: %v", err)
	}
}
