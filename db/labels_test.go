package db_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"knobs/db"
)

// withVersions saves p again n-1 times, so that it has versions 1..n.
func withVersions(t *testing.T, s *db.Store, p db.Preset, n int) db.Preset {
	t.Helper()
	for i := 2; i <= n; i++ {
		p.Description = "version " + string(rune('0'+i))
		var err error
		p, err = s.UpdatePreset(context.Background(), p.OwnerID, false, p)
		must(t, err)
	}
	return p
}

func TestLabelMovesAreRecorded(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	team := newPresetTeam(t, s)
	p := withVersions(t, s, createPreset(t, s, team.alice, "Summariser", db.PresetTeam), 3)

	l, err := s.MovePresetLabel(ctx, team.alice, false, db.LabelChange{PresetID: p.ID, Label: "production", Version: 2})
	must(t, err)
	if l.Name != "production" || l.Version != 2 || l.Protected || l.MovedBy != "alice" {
		t.Errorf("new label: %+v", l)
	}
	// bob sees the team preset and moves a label that is not protected.
	l, err = s.MovePresetLabel(ctx, team.bob, false, db.LabelChange{PresetID: p.ID, Label: "production", Version: 3})
	must(t, err)
	if l.Version != 3 || l.MovedBy != "bob" {
		t.Errorf("moved label: %+v", l)
	}
	// Pointing it where it points records nothing.
	_, err = s.MovePresetLabel(ctx, team.bob, false, db.LabelChange{PresetID: p.ID, Label: "production", Version: 3})
	must(t, err)
	moves, err := s.LabelMoves(ctx, team.alice, p.ID, 50)
	must(t, err)
	if len(moves) != 2 || moves[0].From != 2 || moves[0].To != 3 || moves[0].By != "bob" ||
		moves[1].From != 0 || moves[1].To != 2 || moves[1].By != "alice" || moves[0].ID <= moves[1].ID {
		t.Errorf("moves, newest first: %+v", moves)
	}

	// A version the preset lacks is refused, and changes nothing.
	if _, err := s.MovePresetLabel(ctx, team.alice, false, db.LabelChange{PresetID: p.ID, Label: "production", Version: 9}); !errors.Is(err, db.ErrNoVersion) {
		t.Errorf("label to version 9: %v, want ErrNoVersion", err)
	}
	ls, err := s.PresetLabels(ctx, team.bob, p.ID)
	must(t, err)
	if len(ls) != 1 || ls[0].Version != 3 {
		t.Errorf("labels after a refused move: %+v", ls)
	}

	// The version that production names is what the preset is fetched as
	// by default; a named label or version wins over it.
	v, label, err := s.PresetAt(ctx, team.bob, p, "", 0)
	must(t, err)
	if v.Version != 3 || label != "production" {
		t.Errorf("default fetch: version %d label %q", v.Version, label)
	}
	v, label, err = s.PresetAt(ctx, team.bob, p, "", 1)
	must(t, err)
	if v.Version != 1 || label != "" {
		t.Errorf("fetch version 1: version %d label %q", v.Version, label)
	}
	if _, _, err := s.PresetAt(ctx, team.bob, p, "staging", 0); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("fetch by an unknown label: %v, want ErrNotFound", err)
	}
	must(t, s.RemovePresetLabel(ctx, team.alice, false, p.ID, "production"))
	v, label, err = s.PresetAt(ctx, team.bob, p, "", 0)
	must(t, err)
	if v.Version != 3 || label != "" {
		t.Errorf("default fetch without production: version %d label %q, want the latest (3)", v.Version, label)
	}
	moves, err = s.LabelMoves(ctx, team.alice, p.ID, 50)
	must(t, err)
	if len(moves) != 3 || moves[0].From != 3 || moves[0].To != 0 {
		t.Errorf("removal not recorded: %+v", moves)
	}
}

func TestProtectedLabels(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	team := newPresetTeam(t, s)
	p := withVersions(t, s, createPreset(t, s, team.alice, "Summariser", db.PresetTeam), 2)
	yes, no := true, false

	// Only the owner or an admin protects.
	if _, err := s.MovePresetLabel(ctx, team.bob, false, db.LabelChange{PresetID: p.ID, Label: "production", Version: 1, Protect: &yes}); !errors.Is(err, db.ErrForbidden) {
		t.Errorf("a member protects: %v, want ErrForbidden", err)
	}
	_, err := s.MovePresetLabel(ctx, team.alice, false, db.LabelChange{PresetID: p.ID, Label: "production", Version: 1, Protect: &yes})
	must(t, err)
	// A member neither moves, removes nor unprotects it.
	if _, err := s.MovePresetLabel(ctx, team.bob, false, db.LabelChange{PresetID: p.ID, Label: "production", Version: 2}); !errors.Is(err, db.ErrLabelProtected) {
		t.Errorf("a member moves a protected label: %v", err)
	}
	if _, err := s.MovePresetLabel(ctx, team.bob, false, db.LabelChange{PresetID: p.ID, Label: "production", Version: 1, Protect: &no}); !errors.Is(err, db.ErrLabelProtected) {
		t.Errorf("a member unprotects: %v", err)
	}
	if err := s.RemovePresetLabel(ctx, team.bob, false, p.ID, "production"); !errors.Is(err, db.ErrLabelProtected) {
		t.Errorf("a member removes a protected label: %v", err)
	}
	// The admin moves it; it stays protected.
	l, err := s.MovePresetLabel(ctx, team.root, true, db.LabelChange{PresetID: p.ID, Label: "production", Version: 2})
	must(t, err)
	if l.Version != 2 || !l.Protected || l.MovedBy != "root" {
		t.Errorf("admin's move: %+v", l)
	}
	// A private preset's labels are its owner's alone: others do not see it.
	priv := createPreset(t, s, team.alice, "Mine", db.PresetPrivate)
	if _, err := s.MovePresetLabel(ctx, team.root, true, db.LabelChange{PresetID: priv.ID, Label: "production", Version: 1}); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("an admin labels a private preset of someone else: %v, want ErrNotFound", err)
	}
	if _, err := s.PresetLabels(ctx, team.bob, priv.ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("bob lists the labels of alice's private preset: %v", err)
	}
	all, err := s.VisibleLabels(ctx, team.bob)
	must(t, err)
	if len(all) != 1 || len(all[p.ID]) != 1 {
		t.Errorf("labels bob sees: %+v", all)
	}
	// Labels and moves go with their preset.
	must(t, s.RemovePreset(ctx, team.alice, false, p.ID))
	all, err = s.VisibleLabels(ctx, team.alice)
	must(t, err)
	if len(all) != 0 {
		t.Errorf("labels of a removed preset remain: %+v", all)
	}
}

func TestFindPresetByName(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	team := newPresetTeam(t, s)
	bobs := createPreset(t, s, team.bob, "Summariser", db.PresetTeam)
	alices := createPreset(t, s, team.alice, "Summariser", db.PresetPrivate)

	// One's own before the team's.
	got, err := s.FindPreset(ctx, team.alice, "Summariser")
	must(t, err)
	if got.ID != alices.ID {
		t.Errorf("alice's Summariser: %d, want her own %d", got.ID, alices.ID)
	}
	got, err = s.FindPreset(ctx, team.root, "Summariser")
	must(t, err)
	if got.ID != bobs.ID {
		t.Errorf("root's Summariser: %d, want bob's team preset %d", got.ID, bobs.ID)
	}
	got, err = s.FindPreset(ctx, team.root, strconv.FormatInt(bobs.ID, 10))
	must(t, err)
	if got.ID != bobs.ID {
		t.Errorf("by id: %d", got.ID)
	}
	if _, err := s.FindPreset(ctx, team.bob, strconv.FormatInt(alices.ID, 10)); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("bob by the id of alice's private preset: %v", err)
	}
	if _, err := s.FindPreset(ctx, team.bob, "Nothing"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("unknown name: %v", err)
	}
	createPreset(t, s, team.root, "Summariser", db.PresetTeam)
	var amb *db.AmbiguousError
	if _, err := s.FindPreset(ctx, team.alice, "Summariser"); err != nil {
		t.Errorf("alice still has her own: %v", err)
	}
	if _, err := s.FindPreset(ctx, team.bob, "Summariser"); err != nil {
		t.Errorf("bob has his own: %v", err)
	}
	createPreset(t, s, team.alice, "Summariser", db.PresetTeam)
	if _, err := s.FindPreset(ctx, team.alice, "Summariser"); !errors.As(err, &amb) || len(amb.IDs) != 2 {
		t.Errorf("alice has two: %v", err)
	}
}

func TestLabelMoveFromASeenVersion(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	team := newPresetTeam(t, s)
	p := withVersions(t, s, createPreset(t, s, team.alice, "Summariser", db.PresetTeam), 3)
	_, err := s.MovePresetLabel(ctx, team.alice, false, db.LabelChange{PresetID: p.ID, Label: "production", Version: 1})
	must(t, err)
	// Seen at 1, moved by bob to 2 meanwhile: alice's move from 1 is refused.
	_, err = s.MovePresetLabel(ctx, team.bob, false, db.LabelChange{PresetID: p.ID, Label: "production", Version: 2, From: 1})
	must(t, err)
	if _, err := s.MovePresetLabel(ctx, team.alice, false, db.LabelChange{PresetID: p.ID, Label: "production", Version: 3, From: 1}); !errors.Is(err, db.ErrLabelMoved) {
		t.Errorf("a move from a stale version: %v, want ErrLabelMoved", err)
	}
	ls, err := s.PresetLabels(ctx, team.alice, p.ID)
	must(t, err)
	if len(ls) != 1 || ls[0].Version != 2 {
		t.Errorf("after the refused move: %+v", ls)
	}
}
