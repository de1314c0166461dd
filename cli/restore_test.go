package cli

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"knobs/db"
	"knobs/db/dbtest"
)

// knobsDB writes a Knobs database at path whose one user is named
// username, closed as a stopped Knobs leaves it.
func knobsDB(t *testing.T, path, username string) {
	t.Helper()
	dbtest.Fresh(t, path)
	s, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(context.Background(), db.SignUp{Username: username, PasswordHash: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// sqlExec runs statements on the file at path as another program would.
func sqlExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range stmts {
		if _, err := conn.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// usernames reads the users of the database at path.
func usernames(t *testing.T, path string) []string {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query("SELECT username FROM users ORDER BY id")
	if err != nil {
		t.Fatalf("users of %s: %v", path, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	return names
}

// snapshot is every file in dir with a hash of its bytes.
func snapshot(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

func restore(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut lockedBuffer
	code := Main(t.Context(), append([]string{"restore"}, args...), func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// Each backup that cannot be restored is refused with a message saying
// why, and neither the database nor anything beside it changes.
func TestRestoreRefusals(t *testing.T) {
	backups := t.TempDir()
	good := filepath.Join(backups, "good.db")
	knobsDB(t, good, "grace")

	corrupt := filepath.Join(backups, "corrupt.db")
	knobsDB(t, corrupt, "grace")
	b, err := os.ReadFile(corrupt)
	if err != nil {
		t.Fatal(err)
	}
	// Every page after the first two overwritten: the header stays, so
	// it is still taken for a SQLite file.
	for i := 8192; i < len(b); i++ {
		b[i] = byte(i * 7)
	}
	if err := os.WriteFile(corrupt, b, 0o600); err != nil {
		t.Fatal(err)
	}

	newer := filepath.Join(backups, "newer.db")
	knobsDB(t, newer, "grace")
	sqlExec(t, newer, fmt.Sprintf("UPDATE schema_version SET version = %d", db.SchemaVersion()+1))

	notKnobs := filepath.Join(backups, "notes.db")
	sqlExec(t, notKnobs, "CREATE TABLE notes (body TEXT)", "INSERT INTO notes VALUES ('hello')")

	text := filepath.Join(backups, "readme.txt")
	os.WriteFile(text, []byte(strings.Repeat("not a database\n", 100)), 0o600)

	live := filepath.Join(backups, "live.db")
	knobsDB(t, live, "grace")
	os.WriteFile(live+"-wal", []byte("frames"), 0o600)

	s := newTestServer(t) // holds its database, as a running Knobs does

	stopped := filepath.Join(t.TempDir(), "knobs.db")
	knobsDB(t, stopped, "ada")

	for _, tc := range []struct {
		name, file, dst string
		force           bool
		want            string
	}{
		{"corrupt", corrupt, stopped, true, corrupt + " is damaged: it fails SQLite's integrity check"},
		{"newer schema", newer, stopped, true, fmt.Sprintf("%s was written by a newer Knobs (schema version %d; this knobs knows up to %d)", newer, db.SchemaVersion()+1, db.SchemaVersion())},
		{"not a Knobs database", notKnobs, stopped, true, notKnobs + " is a SQLite database but not a Knobs one"},
		{"not a database", text, stopped, true, text + " is not a SQLite database"},
		{"a live copy", live, stopped, true, live + "-wal is beside " + live},
		{"missing", filepath.Join(backups, "nope.db"), stopped, true, "no backup at " + filepath.Join(backups, "nope.db")},
		{"server running", good, s.dbPath, true, "a Knobs server is using " + s.dbPath + ": stop it first"},
		{"without --force", good, stopped, false, fmt.Sprintf("%s is a sound Knobs backup (schema %d, 0 runs), but %s exists: run again with --force to replace it (it will be kept as %s.before-restore-", good, db.SchemaVersion(), stopped, stopped)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dstDir, srcDir := filepath.Dir(tc.dst), filepath.Dir(tc.file)
			var beforeDst, beforeSrc map[string][32]byte
			if tc.dst != s.dbPath { // the live server writes its own files
				beforeDst = snapshot(t, dstDir)
			}
			beforeSrc = snapshot(t, srcDir)
			args := []string{"--db", tc.dst, tc.file}
			if tc.force {
				args = append(args, "--force")
			}
			r := restore(t, args...)
			if r.code != 1 || !strings.HasPrefix(r.stderr, "knobs restore: "+tc.want) || !strings.Contains(r.stderr, "nothing was changed") {
				t.Errorf("exit %d, stderr %q\nwant it to start with %q", r.code, r.stderr, "knobs restore: "+tc.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
			if beforeDst != nil {
				if after := snapshot(t, dstDir); !mapsEqual(after, beforeDst) {
					t.Errorf("the database's directory changed: %v -> %v", keys(beforeDst), keys(after))
				}
			}
			if after := snapshot(t, srcDir); !mapsEqual(after, beforeSrc) {
				t.Errorf("the backups' directory changed: %v -> %v", keys(beforeSrc), keys(after))
			}
		})
	}
	// The server went on with its database.
	if got := usernames(t, s.dbPath); !slices.Equal(got, []string{"ada"}) {
		t.Errorf("the running server's users: %v", got)
	}
}

func mapsEqual(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func keys(m map[string][32]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// A restore with --force puts the backup in place and keeps the database
// it replaced, whole: what its write-ahead log held is in the kept file,
// and no log is left for the restored database to pick up.
func TestRestoreKeepsTheReplacedDatabase(t *testing.T) {
	backup := filepath.Join(t.TempDir(), "backup.db")
	knobsDB(t, backup, "grace")
	dir := t.TempDir()
	dst := filepath.Join(dir, "knobs.db")
	knobsDB(t, dst, "ada")

	// A program that is not Knobs (no lock) has written a user that is
	// only in the log: automatic checkpoints off, connection still open.
	conn, err := sql.Open("sqlite", "file:"+dst+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	conn.SetMaxOpenConns(1)
	if _, err := conn.Exec(`INSERT INTO users (username, password_hash, role, created_at) VALUES ('bob', 'x', 'member', 0)`); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dst + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("bob should be in the log only: %v", err)
	}

	r := restore(t, "--db", dst, "--force", backup)
	conn.Close()
	if r.code != 0 {
		t.Fatalf("restore: exit %d, %s", r.code, r.stderr)
	}
	kept := ""
	for _, e := range snapshotNames(t, dir) {
		if strings.HasPrefix(e, "knobs.db.before-restore-") {
			kept = filepath.Join(dir, e)
		}
	}
	if kept == "" {
		t.Fatalf("no kept database in %v", snapshotNames(t, dir))
	}
	stamp := strings.TrimPrefix(filepath.Base(kept), "knobs.db.before-restore-")
	if _, err := time.Parse("20060102T150405Z", stamp); err != nil {
		t.Errorf("the kept database's name %s does not end in a UTC time: %v", kept, err)
	}
	want := fmt.Sprintf("restored %s to %s (schema %d, 0 runs, ", backup, dst, db.SchemaVersion())
	if !strings.HasPrefix(r.stdout, want) || !strings.Contains(r.stdout, "the database it replaced is kept as "+kept+"\n") {
		t.Errorf("stdout %q\nwant %q… and the kept file's name", r.stdout, want)
	}
	// The log was folded into the kept file; none is left beside either.
	if names := snapshotNames(t, dir); !slices.Equal(names, []string{"knobs.db", filepath.Base(kept)}) {
		t.Errorf("beside the restored database: %v", names)
	}
	if got := usernames(t, dst); !slices.Equal(got, []string{"grace"}) {
		t.Errorf("the restored database's users: %v, want the backup's", got)
	}
	// The kept file alone holds what the log held.
	b, _ := os.ReadFile(kept)
	alone := filepath.Join(t.TempDir(), "alone.db")
	os.WriteFile(alone, b, 0o600)
	if got := usernames(t, alone); !slices.Equal(got, []string{"ada", "bob"}) {
		t.Errorf("the kept database, by itself, has users %v, want ada and bob", got)
	}
	// Knobs opens the restored database.
	s, err := db.Open(context.Background(), dst)
	if err != nil {
		t.Fatalf("Knobs does not open the restored database: %v", err)
	}
	s.Close()

	// A restore to where no database is needs no --force.
	fresh := filepath.Join(t.TempDir(), "new.db")
	if r := restore(t, "--db", fresh, backup); r.code != 0 || strings.Contains(r.stdout, "kept as") {
		t.Errorf("restore to a new file: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if names := snapshotNames(t, filepath.Dir(fresh)); !slices.Equal(names, []string{"new.db"}) {
		t.Errorf("beside the new file: %v", names)
	}
	if got := usernames(t, fresh); !slices.Equal(got, []string{"grace"}) {
		t.Errorf("the new file's users: %v", got)
	}
}

func snapshotNames(t *testing.T, dir string) []string {
	return keys(snapshot(t, dir))
}
