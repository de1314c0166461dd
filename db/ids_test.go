package db_test

import (
	"context"
	"testing"
	"time"

	"knobs/db"
)

// An admin removes the newest member; the next sign-up must not get the
// same id, or the removed member's cookie would sign in as the newcomer.
// The same holds for runs (a removed member's live run would finish into
// a newcomer's run) and share links.
func TestIdsAreNeverReused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openStore(t)
	historyUser(t, s, "admin")
	leaver := historyUser(t, s, "leaver")
	run := storeRun(t, s, leaver, testRun{prompt: "mine"})
	share, err := s.CreateShare(ctx, leaver, "run", run, "public")
	must(t, err)
	must(t, s.RemoveUser(ctx, leaver))

	newcomer := historyUser(t, s, "newcomer")
	if newcomer <= leaver {
		t.Errorf("the newcomer got user id %d, the removed member had %d", newcomer, leaver)
	}
	run2 := storeRun(t, s, newcomer, testRun{prompt: "theirs"})
	if run2 <= run {
		t.Errorf("the newcomer's run got id %d, the removed member's had %d", run2, run)
	}
	share2, err := s.CreateShare(ctx, newcomer, "run", run2, "public")
	must(t, err)
	if share2.ID <= share.ID {
		t.Errorf("the newcomer's share got id %d, the removed one had %d", share2.ID, share.ID)
	}
}

// A database that an older Knobs left (schema 7) is rebuilt with ids
// that are never reused, keeping every row, index, trigger and reference,
// and its search still finds each user's runs, and only theirs.
func TestMigrationKeepsRowsAndStopsIdReuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := t.TempDir() + "/old.db"
	must(t, db.MigrateTo(ctx, path, 7))
	raw := rawDB(t, path)
	_, err := raw.Exec(`PRAGMA foreign_keys = ON`)
	must(t, err)
	exec := func(q string, args ...any) {
		t.Helper()
		_, err := raw.Exec(q, args...)
		must(t, err)
	}
	exec(`INSERT INTO users (id, username, password_hash, role, created_at) VALUES (1, 'alice', 'x', 'admin', 0), (2, 'bob', 'x', 'member', 0), (3, 'carol', 'x', 'member', 0)`)
	for i, user := range []int64{1, 2, 2, 3} {
		id := int64(i + 1)
		exec(`INSERT INTO runs (id, user_id, provider, endpoint, model, spec, status, created_at, prompt_line) VALUES (?, ?, 'sim', 'chat', 'm', ?, 'done', ?, 'hello')`,
			id, user, chatSpec("sim", "m", "", "hello"), time.Now().UnixMilli())
		exec(`INSERT INTO runs_fts (rowid, prompt_line, prompt, output_line, output) VALUES (?, 'hello', 'hello', '', '')`, id)
	}
	exec(`INSERT INTO shares (id, token, kind, target_id, owner_id, audience, created_at) VALUES (1, 'tok', 'run', 2, 2, 'public', 0)`)
	exec(`INSERT INTO invites (id, token_hash, created_by, created_at, expires_at) VALUES (1, x'00', 1, 0, 0)`)
	must(t, raw.Close())

	s, err := db.Open(ctx, path)
	must(t, err)
	defer s.Close()

	for _, c := range []struct {
		user int64
		want int
	}{{1, 1}, {2, 2}, {3, 1}} {
		runs, _, err := s.Runs(ctx, db.RunFilter{UserID: c.user, Query: "hello"})
		must(t, err)
		if len(runs) != c.want {
			t.Errorf("user %d finds %d runs after the migration, want %d", c.user, len(runs), c.want)
		}
	}
	if _, _, err := s.SharedRun(ctx, "tok"); err != nil {
		t.Errorf("a share link made before the migration: %v", err)
	}

	// Foreign keys are on again: removing carol takes her run along.
	must(t, s.RemoveUser(ctx, 3))
	var n int
	must(t, rawDB(t, path).QueryRow(`SELECT count(*) FROM runs WHERE user_id = 3`).Scan(&n))
	if n != 0 {
		t.Errorf("carol's runs outlived her account: %d", n)
	}
	must(t, s.SetSetting(ctx, db.SettingSignUpMode, "open"))
	dave, err := s.CreateUser(ctx, db.SignUp{Username: "dave", PasswordHash: "x", Open: true})
	must(t, err)
	if dave.ID <= 3 {
		t.Errorf("dave got the removed carol's id %d", dave.ID)
	}
	must(t, rawDB(t, path).QueryRow(`SELECT count(*) FROM sqlite_master WHERE sql LIKE '%AUTOINCREMENT%' AND name IN ('users', 'runs', 'shares', 'invites')`).Scan(&n))
	if n != 4 {
		t.Errorf("%d of users, runs, shares and invites declare AUTOINCREMENT, want 4", n)
	}
}

// A word that only other users wrote finds nothing, and each run's entry
// in the index carries its owner in the rowid, so that the search's rowid
// range (applied inside FTS5) covers only the searcher's entries.
func TestSearchIsScopedInsideTheIndex(t *testing.T) {
	t.Parallel()
	s, path := openStore(t)
	alice := historyUser(t, s, "alice")
	bob := historyUser(t, s, "bob")
	storeRun(t, s, bob, testRun{prompt: "bob's secret zephyr"})
	storeRun(t, s, alice, testRun{prompt: "alice writes here"})
	if ids := listIDs(t, s, db.RunFilter{UserID: alice, Query: "zephyr"}); len(ids) != 0 {
		t.Errorf("alice's search found bob's runs: %v", ids)
	}
	if ids := listIDs(t, s, db.RunFilter{UserID: bob, Query: "zephyr"}); len(ids) != 1 {
		t.Errorf("bob's search found %v, want his one run", ids)
	}
	var lo, hi int64
	must(t, rawDB(t, path).QueryRow(`SELECT min(rowid), max(rowid) FROM runs_fts`).Scan(&lo, &hi))
	if lo>>40 != alice && lo>>40 != bob || hi>>40 != bob && hi>>40 != alice || lo>>40 == hi>>40 {
		t.Errorf("search rowids %d..%d do not carry their owners %d and %d", lo, hi, alice, bob)
	}
}
