package db_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"knobs/db"
)

func presetSpec(user string) string {
	return fmt.Sprintf(`{"provider":"sim","endpoint":"chat","body":{"model":"sim-small","messages":[{"role":"user","content":%q}],"temperature":0.2}}`, user)
}

func createPreset(t *testing.T, s *db.Store, owner int64, name, visibility string, tags ...string) db.Preset {
	t.Helper()
	p, err := s.CreatePreset(context.Background(), db.Preset{OwnerID: owner, Name: name, Visibility: visibility, Tags: tags,
		Spec: presetSpec("Hello {{who}}"), Variables: map[string]string{"who": "world"}})
	must(t, err)
	return p
}

// presetTeam is an admin and two members, as the visibility tests need.
type presetTeam struct {
	root, alice, bob int64
}

func newPresetTeam(t *testing.T, s *db.Store) presetTeam {
	return presetTeam{root: historyUser(t, s, "root"), alice: historyUser(t, s, "alice"), bob: historyUser(t, s, "bob")}
}

func TestCreatePreset(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	team := newPresetTeam(t, s)
	before := time.Now().Add(-time.Second)
	p, err := s.CreatePreset(ctx, db.Preset{OwnerID: team.alice, Name: "Summariser", Description: "Short answers",
		Tags: []string{"email", "writing"}, Spec: presetSpec("Sum up {{text}}"), Variables: map[string]string{"text": "x"}})
	must(t, err)
	if p.ID == 0 || p.OwnerID != team.alice || p.OwnerName != "alice" || p.Name != "Summariser" || p.Description != "Short answers" ||
		!slices.Equal(p.Tags, []string{"email", "writing"}) || p.Visibility != db.PresetPrivate || p.Spec != presetSpec("Sum up {{text}}") ||
		!reflect.DeepEqual(p.Variables, map[string]string{"text": "x"}) || p.Version != 1 ||
		p.CreatedAt.Before(before) || !p.UpdatedAt.Equal(p.CreatedAt) || !p.LastUsedAt.IsZero() {
		t.Errorf("created preset: %+v", p)
	}
	got, err := s.Preset(ctx, team.alice, p.ID)
	must(t, err)
	if !reflect.DeepEqual(got, p) {
		t.Errorf("Preset = %+v\nwant %+v", got, p)
	}
	versions, err := s.PresetVersions(ctx, team.alice, p.ID)
	must(t, err)
	if len(versions) != 1 || versions[0].Version != 1 || versions[0].Name != "Summariser" || versions[0].Spec != p.Spec ||
		versions[0].SavedBy != "alice" || !slices.Equal(versions[0].Tags, p.Tags) || !reflect.DeepEqual(versions[0].Variables, p.Variables) {
		t.Errorf("versions of a new preset: %+v", versions)
	}
	// No variables is an empty object, not null.
	p2, err := s.CreatePreset(ctx, db.Preset{OwnerID: team.alice, Name: "Bare", Visibility: db.PresetTeam, Spec: presetSpec("hi")})
	must(t, err)
	if p2.Variables == nil || len(p2.Variables) != 0 || p2.Tags != nil || p2.Visibility != db.PresetTeam {
		t.Errorf("a bare preset: %+v", p2)
	}
}

// TestPresetVisibility runs every Store method on a private and a team
// preset of alice, as each kind of user.
func TestPresetVisibility(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	team := newPresetTeam(t, s)
	private := createPreset(t, s, team.alice, "Alice private", db.PresetPrivate)
	shared := createPreset(t, s, team.alice, "Alice team", db.PresetTeam)
	const unknown = 9999

	for _, tt := range []struct {
		name   string
		user   int64
		admin  bool
		preset int64
		read   error // Preset, PresetVersions, PresetVersion, TouchPreset, SetDefaultPreset
		change error // UpdatePreset, RestorePresetVersion, RemovePreset
	}{
		{"owner, private", team.alice, false, private.ID, nil, nil},
		{"owner, team", team.alice, false, shared.ID, nil, nil},
		{"member, private", team.bob, false, private.ID, db.ErrNotFound, db.ErrNotFound},
		{"member, team", team.bob, false, shared.ID, nil, db.ErrForbidden},
		{"admin, private", team.root, true, private.ID, db.ErrNotFound, db.ErrNotFound},
		{"admin, team", team.root, true, shared.ID, nil, nil},
		{"not an admin after all", team.root, false, shared.ID, nil, db.ErrForbidden},
		{"unknown preset", team.bob, false, unknown, db.ErrNotFound, db.ErrNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			check := func(what string, err, want error) {
				t.Helper()
				if !errors.Is(err, want) || (want == nil && err != nil) {
					t.Errorf("%s: %v, want %v", what, err, want)
				}
			}
			p, err := s.Preset(ctx, tt.user, tt.preset)
			check("Preset", err, tt.read)
			if err == nil && p.ID != tt.preset {
				t.Errorf("Preset loaded %d", p.ID)
			}
			_, err = s.PresetVersions(ctx, tt.user, tt.preset)
			check("PresetVersions", err, tt.read)
			_, err = s.PresetVersion(ctx, tt.user, tt.preset, 1)
			check("PresetVersion", err, tt.read)
			check("TouchPreset", s.TouchPreset(ctx, tt.user, tt.preset), tt.read)
			check("SetDefaultPreset", s.SetDefaultPreset(ctx, tt.user, tt.preset), tt.read)
			must(t, s.SetDefaultPreset(ctx, tt.user, 0))

			list, err := s.Presets(ctx, tt.user, "")
			must(t, err)
			listed := slices.ContainsFunc(list, func(p db.Preset) bool { return p.ID == tt.preset })
			if listed != (tt.read == nil) {
				t.Errorf("Presets lists it: %v, want %v", listed, tt.read == nil)
			}

			before, _ := s.Preset(ctx, team.alice, tt.preset)
			edit := before
			edit.ID, edit.Name, edit.Version = tt.preset, "Edited by "+tt.name, 0
			if edit.Spec == "" {
				edit.Spec = presetSpec("x")
			}
			after, err := s.UpdatePreset(ctx, tt.user, tt.admin, edit)
			check("UpdatePreset", err, tt.change)
			if err == nil && (after.Version != before.Version+1 || after.Name != edit.Name || after.OwnerID != team.alice) {
				t.Errorf("after UpdatePreset: %+v", after)
			}
			_, err = s.RestorePresetVersion(ctx, tt.user, tt.admin, tt.preset, 1)
			check("RestorePresetVersion", err, tt.change)
			if tt.change != nil {
				check("RemovePreset", s.RemovePreset(ctx, tt.user, tt.admin, tt.preset), tt.change)
				if now, _ := s.Preset(ctx, team.alice, tt.preset); now.Version != before.Version || now.Name != before.Name {
					t.Errorf("a refused change changed the preset: %+v, was %+v", now, before)
				}
			}
		})
	}

	// Removing is allowed to the owner and to an admin for a team preset.
	must(t, s.RemovePreset(ctx, team.root, true, shared.ID))
	must(t, s.RemovePreset(ctx, team.alice, false, private.ID))
	for _, id := range []int64{shared.ID, private.ID} {
		if _, err := s.Preset(ctx, team.alice, id); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("a removed preset: %v", err)
		}
		if err := s.RemovePreset(ctx, team.alice, false, id); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("removing it again: %v", err)
		}
	}

	// An admin who makes someone's team preset private gets it back as saved.
	again := createPreset(t, s, team.alice, "Alice team again", db.PresetTeam)
	again.Visibility = db.PresetPrivate
	p, err := s.UpdatePreset(ctx, team.root, true, again)
	must(t, err)
	if p.Visibility != db.PresetPrivate || p.Version != 2 {
		t.Errorf("made private by an admin: %+v", p)
	}
	if _, err := s.Preset(ctx, team.root, again.ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("the admin still sees it: %v", err)
	}
}

func TestPresetsSearchAndOrder(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	team := newPresetTeam(t, s)
	email := createPreset(t, s, team.alice, "Summarise Émail", db.PresetPrivate, "writing", "email")
	review := createPreset(t, s, team.alice, "Code review", db.PresetPrivate, "code")
	createPreset(t, s, team.bob, "Bob secret", db.PresetPrivate, "writing")
	translator := createPreset(t, s, team.bob, "Translator", db.PresetTeam, "writing", "translation")

	names := func(query string) []string {
		t.Helper()
		list, err := s.Presets(ctx, team.alice, query)
		must(t, err)
		var out []string
		for _, p := range list {
			out = append(out, p.Name)
		}
		return out
	}
	// Never used: most recently saved first.
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"", []string{"Translator", "Code review", "Summarise Émail"}},
		{"  ", []string{"Translator", "Code review", "Summarise Émail"}},
		{"tag:writing", []string{"Translator", "Summarise Émail"}},
		{"writing", []string{"Translator", "Summarise Émail"}},
		{"WRITING", []string{"Translator", "Summarise Émail"}},
		{"REVIEW", []string{"Code review"}},
		{"émail", []string{"Summarise Émail"}},
		{"ÉMAIL", []string{"Summarise Émail"}},
		{"email", []string{"Summarise Émail"}}, // the tag
		{"code tag:code", []string{"Code review"}},
		{"tag:cod", nil},
		{"tag:review", nil}, // a tag query does not search names
		{"secret", nil},     // bob's private preset
		{"summarise translator", nil},
	} {
		if got := names(tt.query); !slices.Equal(got, tt.want) {
			t.Errorf("Presets(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}

	// Used ones first, the last used on top.
	must(t, s.TouchPreset(ctx, team.alice, email.ID))
	time.Sleep(2 * time.Millisecond)
	must(t, s.TouchPreset(ctx, team.alice, translator.ID))
	if got, want := names(""), []string{"Translator", "Summarise Émail", "Code review"}; !slices.Equal(got, want) {
		t.Errorf("after use: %q, want %q", got, want)
	}
	time.Sleep(2 * time.Millisecond)
	must(t, s.TouchPreset(ctx, team.alice, review.ID))
	list, err := s.Presets(ctx, team.alice, "")
	must(t, err)
	if list[0].ID != review.ID || list[0].LastUsedAt.IsZero() || list[0].OwnerName != "alice" || list[1].OwnerName != "bob" {
		t.Errorf("after using review: %+v", list)
	}
}

func TestPresetVersionsAndRestore(t *testing.T) {
	ctx := context.Background()
	s, path := openStore(t)
	team := newPresetTeam(t, s)
	p := createPreset(t, s, team.alice, "v1 name", db.PresetTeam, "one")

	v2 := p
	v2.Name, v2.Description, v2.Tags, v2.Spec, v2.Variables = "v2 name", "second", []string{"two"}, presetSpec("v2 {{x}}"), map[string]string{"x": "2"}
	p2, err := s.UpdatePreset(ctx, team.alice, false, v2)
	must(t, err)
	if p2.Version != 2 || p2.Name != "v2 name" || !p2.UpdatedAt.After(p.UpdatedAt.Add(-time.Millisecond)) || !p2.CreatedAt.Equal(p.CreatedAt) {
		t.Errorf("after saving v2: %+v", p2)
	}
	v3 := p2
	v3.Name, v3.Spec = "v3 name", presetSpec("v3")
	p3, err := s.UpdatePreset(ctx, team.root, true, v3) // an admin saves this one
	must(t, err)
	if p3.Version != 3 || p3.OwnerID != team.alice {
		t.Errorf("after saving v3: %+v", p3)
	}

	// A save from a stale copy changes nothing.
	stale := p2
	stale.Name = "from a stale tab"
	if _, err := s.UpdatePreset(ctx, team.alice, false, stale); !errors.Is(err, db.ErrPresetStale) {
		t.Errorf("saving over a newer version: %v, want ErrPresetStale", err)
	}

	versions, err := s.PresetVersions(ctx, team.bob, p.ID) // a member reads a team preset's history
	must(t, err)
	var got []string
	for _, v := range versions {
		got = append(got, fmt.Sprintf("%d %s %s %v", v.Version, v.Name, v.SavedBy, v.Tags))
	}
	if want := []string{"3 v3 name root [two]", "2 v2 name alice [two]", "1 v1 name alice [one]"}; !slices.Equal(got, want) {
		t.Errorf("versions = %q, want %q", got, want)
	}
	v, err := s.PresetVersion(ctx, team.bob, p.ID, 2)
	must(t, err)
	if v.Spec != presetSpec("v2 {{x}}") || v.Description != "second" || !reflect.DeepEqual(v.Variables, map[string]string{"x": "2"}) || v.SavedAt.IsZero() {
		t.Errorf("version 2: %+v", v)
	}
	for _, n := range []int{0, 4, -1} {
		if _, err := s.PresetVersion(ctx, team.alice, p.ID, n); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("PresetVersion(%d): %v", n, err)
		}
		if _, err := s.RestorePresetVersion(ctx, team.alice, false, p.ID, n); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("RestorePresetVersion(%d): %v", n, err)
		}
	}

	// A restore is a new version with the old content; visibility stays.
	r, err := s.RestorePresetVersion(ctx, team.alice, false, p.ID, 1)
	must(t, err)
	if r.Version != 4 || r.Name != "v1 name" || r.Spec != p.Spec || !slices.Equal(r.Tags, []string{"one"}) || r.Description != "" ||
		!reflect.DeepEqual(r.Variables, p.Variables) || r.Visibility != db.PresetTeam {
		t.Errorf("after restoring version 1: %+v", r)
	}
	versions, err = s.PresetVersions(ctx, team.alice, p.ID)
	must(t, err)
	if len(versions) != 4 || versions[0].Version != 4 || versions[0].Name != "v1 name" || versions[3].Name != "v1 name" {
		t.Errorf("versions after the restore: %+v", versions)
	}

	// Removing the preset removes its versions.
	must(t, s.RemovePreset(ctx, team.alice, false, p.ID))
	var left int
	must(t, rawDB(t, path).QueryRow(`SELECT count(*) FROM preset_versions WHERE preset_id = ?`, p.ID).Scan(&left))
	if left != 0 {
		t.Errorf("%d versions left after removing the preset", left)
	}
}

func TestDefaultPreset(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	team := newPresetTeam(t, s)
	mine := createPreset(t, s, team.bob, "Bob's", db.PresetPrivate)
	shared := createPreset(t, s, team.alice, "Alice team", db.PresetTeam)
	private := createPreset(t, s, team.alice, "Alice private", db.PresetPrivate)

	if _, err := s.DefaultPreset(ctx, team.bob); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("no default yet: %v", err)
	}
	must(t, s.SetDefaultPreset(ctx, team.bob, mine.ID))
	if p, err := s.DefaultPreset(ctx, team.bob); err != nil || p.ID != mine.ID {
		t.Errorf("default = %+v %v, want bob's own", p, err)
	}
	must(t, s.SetDefaultPreset(ctx, team.bob, shared.ID))
	if p, err := s.DefaultPreset(ctx, team.bob); err != nil || p.ID != shared.ID || p.OwnerName != "alice" {
		t.Errorf("default = %+v %v, want alice's team preset", p, err)
	}
	if err := s.SetDefaultPreset(ctx, team.bob, private.ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("someone else's private preset as default: %v", err)
	}
	if p, _ := s.DefaultPreset(ctx, team.bob); p.ID != shared.ID {
		t.Errorf("a refused default replaced the default: %+v", p)
	}
	if _, err := s.DefaultPreset(ctx, team.alice); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("bob's default became alice's: %v", err)
	}

	// Made private since: no longer bob's default.
	shared.Visibility = db.PresetPrivate
	_, err := s.UpdatePreset(ctx, team.alice, false, shared)
	must(t, err)
	if _, err := s.DefaultPreset(ctx, team.bob); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("a default made private: %v", err)
	}

	must(t, s.SetDefaultPreset(ctx, team.bob, mine.ID))
	must(t, s.SetDefaultPreset(ctx, team.bob, 0))
	if _, err := s.DefaultPreset(ctx, team.bob); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("cleared default: %v", err)
	}
	must(t, s.SetDefaultPreset(ctx, team.bob, 0)) // clearing twice is fine

	must(t, s.SetDefaultPreset(ctx, team.bob, mine.ID))
	must(t, s.RemovePreset(ctx, team.bob, false, mine.ID))
	if _, err := s.DefaultPreset(ctx, team.bob); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("a removed default: %v", err)
	}
}

func TestPresetShares(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	team := newPresetTeam(t, s)
	p := createPreset(t, s, team.alice, "Shared setup", db.PresetPrivate, "demo")
	other := createPreset(t, s, team.alice, "Other", db.PresetTeam)

	public, err := s.CreateShare(ctx, team.alice, db.SharePreset, p.ID, db.SharePublic)
	must(t, err)
	teamShare, err := s.CreateShare(ctx, team.alice, db.SharePreset, p.ID, db.ShareTeam)
	must(t, err)
	if public.Kind != db.SharePreset || public.TargetID != p.ID || len(public.Token) != 22 {
		t.Errorf("new preset share: %+v", public)
	}
	got, sh, err := s.SharedPreset(ctx, public.Token)
	must(t, err)
	if got.ID != p.ID || got.Spec != p.Spec || got.OwnerName != "alice" || sh.Audience != db.SharePublic || sh.ID != public.ID {
		t.Errorf("SharedPreset = %+v %+v", got, sh)
	}
	// A preset token opens no run, a run token no preset.
	if _, _, err := s.SharedRun(ctx, public.Token); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("SharedRun with a preset token: %v", err)
	}
	run := storeRun(t, s, team.alice, testRun{prompt: "a run"})
	runShare, err := s.CreateShare(ctx, team.alice, db.ShareRun, run, db.ShareTeam)
	must(t, err)
	if _, _, err := s.SharedPreset(ctx, runShare.Token); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("SharedPreset with a run token: %v", err)
	}

	// Only the owner shares: not a member who sees a team preset, nor an admin.
	for _, u := range []int64{team.bob, team.root} {
		if _, err := s.CreateShare(ctx, u, db.SharePreset, other.ID, db.ShareTeam); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("user %d sharing alice's team preset: %v", u, err)
		}
	}
	if _, err := s.CreateShare(ctx, team.bob, db.SharePreset, p.ID, db.ShareTeam); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("bob sharing alice's private preset: %v", err)
	}

	must(t, s.RevokeShare(ctx, team.alice, public.ID))
	if _, _, err := s.SharedPreset(ctx, public.Token); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("a revoked preset share: %v", err)
	}
	if _, _, err := s.SharedPreset(ctx, teamShare.Token); err != nil {
		t.Errorf("the other share after revoking one: %v", err)
	}
	list, err := s.Shares(ctx, team.alice, db.SharePreset, p.ID)
	must(t, err)
	if len(list) != 2 || list[1].Active() || !list[0].Active() {
		t.Errorf("shares of the preset: %+v", list)
	}

	// Removing the preset removes its shares, and no others.
	must(t, s.RemovePreset(ctx, team.alice, false, p.ID))
	if _, _, err := s.SharedPreset(ctx, teamShare.Token); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("share of a removed preset: %v", err)
	}
	if list, _ := s.Shares(ctx, team.alice, db.SharePreset, p.ID); len(list) != 0 {
		t.Errorf("shares left after removing the preset: %+v", list)
	}
	if _, _, err := s.SharedRun(ctx, runShare.Token); err != nil {
		t.Errorf("a run share after removing a preset: %v", err)
	}

	// A removed user's presets go, with their shares.
	o, err := s.CreateShare(ctx, team.alice, db.SharePreset, other.ID, db.SharePublic)
	must(t, err)
	must(t, s.RemoveUser(ctx, team.alice))
	if _, _, err := s.SharedPreset(ctx, o.Token); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("share of a removed user's preset: %v", err)
	}
	if list, err := s.Presets(ctx, team.bob, ""); err != nil || len(list) != 0 {
		t.Errorf("presets of a removed user: %+v %v", list, err)
	}
}

func TestRunVariables(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	alice := historyUser(t, s, "alice")
	p := createPreset(t, s, alice, "Greeter", db.PresetPrivate)
	vars := `{"who":"Paris \"the city\"\nof light"}`
	id, err := s.CreateRun(ctx, db.Run{UserID: alice, Provider: "sim", Endpoint: "chat", Model: "sim-small", Spec: p.Spec,
		CreatedAt: time.Now(), PresetID: p.ID, Variables: vars})
	must(t, err)
	r, err := s.Run(ctx, alice, id)
	must(t, err)
	if r.Variables != vars || r.PresetID != p.ID || r.Spec != p.Spec {
		t.Errorf("run: %+v", r)
	}
	plain := storeRun(t, s, alice, testRun{prompt: "no preset"})
	var exported []db.Run
	must(t, s.ExportRuns(ctx, alice, nil, func(r db.Run) error { exported = append(exported, r); return nil }))
	if len(exported) != 2 || exported[0].Variables != vars || exported[1].ID != plain || exported[1].Variables != "" {
		t.Errorf("exported runs: %+v", exported)
	}
}

// TestPresetMigration opens a database as Knobs left it at schema
// version 4, with runs and share links of every kind.
func TestPresetMigration(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/v4.db"
	must(t, db.MigrateTo(ctx, path, 4))
	raw := rawDB(t, path)
	tx, err := raw.Begin()
	must(t, err)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := tx.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO users (id, username, password_hash, role, created_at) VALUES (1, 'alice', 'x', 'admin', 0), (2, 'bob', 'x', 'member', 0)`)
	for i := 1; i <= 3; i++ {
		exec(`INSERT INTO runs (id, user_id, provider, endpoint, model, spec, status, created_at, preset_id, group_id) VALUES (?, 1, 'sim', 'chat', 'm', ?, 'done', ?, ?, 7)`,
			i, presetSpec(fmt.Sprint("old ", i)), 1000+i, 42)
	}
	exec(`INSERT INTO shares (id, token, kind, target_id, owner_id, audience, created_at, revoked_at) VALUES
		(1, 'runtokenrunslinkok_act', 'run', 1, 1, 'public', 10, NULL),
		(2, 'runtokenrevokedlinkxxx', 'run', 2, 1, 'team', 11, 12),
		(3, 'grouptokenxxxxxxxxxxxx', 'group', 7, 1, 'team', 13, NULL),
		(4, 'runtokenofrunthreexxxx', 'run', 3, 1, 'team', 14, NULL)`)
	must(t, tx.Commit())
	raw.Close()

	s, err := db.Open(ctx, path)
	must(t, err)
	defer s.Close()
	if got := schemaVersion(t, path); got != db.SchemaVersion() {
		t.Fatalf("schema version %d after migrating, want %d", got, db.SchemaVersion())
	}

	r, sh, err := s.SharedRun(ctx, "runtokenrunslinkok_act")
	if err != nil || r.ID != 1 || sh.ID != 1 || sh.Audience != db.SharePublic || sh.CreatedAt.UnixMilli() != 10 {
		t.Errorf("an old run share: %+v %+v %v", r, sh, err)
	}
	if r.Variables != "" || r.PresetID != 42 {
		t.Errorf("an old run: variables %q, preset %d", r.Variables, r.PresetID)
	}
	if _, _, err := s.SharedRun(ctx, "runtokenrevokedlinkxxx"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("an old revoked share: %v", err)
	}
	list, err := s.Shares(ctx, 1, db.ShareRun, 2)
	must(t, err)
	if len(list) != 1 || list[0].RevokedAt.UnixMilli() != 12 {
		t.Errorf("the old revoked share: %+v", list)
	}
	if list, _ := s.Shares(ctx, 1, db.ShareGroup, 7); len(list) != 1 || list[0].Token != "grouptokenxxxxxxxxxxxx" {
		t.Errorf("the old group share: %+v", list)
	}

	// New share ids follow the old ones; tokens stay unique.
	p := createPreset(t, s, 1, "After migrating", db.PresetPrivate)
	ps, err := s.CreateShare(ctx, 1, db.SharePreset, p.ID, db.ShareTeam)
	must(t, err)
	if ps.ID != 5 {
		t.Errorf("new share id %d, want 5", ps.ID)
	}
	// runs_forget still removes a run's shares, on the rebuilt table.
	must(t, s.RemoveRun(ctx, 1, 3))
	if list, _ := s.Shares(ctx, 1, db.ShareRun, 3); len(list) != 0 {
		t.Errorf("a removed run's share survived: %+v", list)
	}
	if _, err := rawDB(t, path).Exec(`INSERT INTO shares (token, kind, target_id, owner_id, audience, created_at) VALUES ('runtokenrunslinkok_act', 'run', 1, 1, 'team', 0)`); err == nil {
		t.Error("a duplicate token was accepted")
	}
	if _, err := rawDB(t, path).Exec(`INSERT INTO shares (token, kind, target_id, owner_id, audience, created_at) VALUES ('x', 'bogus', 1, 1, 'team', 0)`); err == nil {
		t.Error("an unknown share kind was accepted")
	}
	var indexes int
	must(t, rawDB(t, path).QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'shares_target' AND tbl_name = 'shares'`).Scan(&indexes))
	if indexes != 1 {
		t.Error("shares_target is missing after the rebuild")
	}
}
