package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"knobs/config"
	"knobs/db"
)

const restoreUsage = `knobs restore [--db PATH] [--force] FILE

Puts the backup FILE (from knobs backup, the scheduled backups in
KNOBS_BACKUP_DIR, or a Litestream restore) in the place of the Knobs
database (KNOBS_DB), on the machine that has it, while Knobs is stopped.

FILE is checked first: SQLite's integrity check, that it is a Knobs
database, and that its schema is not newer than this knobs (an older one
is brought up to date when Knobs next starts). A database already in
its place is replaced only with --force; it is then kept beside it as
KNOBS_DB.before-restore-<UTC time>, its write-ahead log folded in.
Nothing is changed when a check fails or a Knobs server uses the database.`

func restoreCommand(e *env, args []string) error {
	const name = "knobs restore"
	fs := flagSet(name, restoreUsage)
	dbPath := fs.String("db", "", "the database file to replace (default $KNOBS_DB, else ./knobs.db)")
	force := fs.Bool("force", false, "replace the database there (it is kept as KNOBS_DB.before-restore-<time>)")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef(name, "give the backup file to restore")
	}
	file := rest[0]
	dst := *dbPath
	if dst == "" {
		cfg, err := config.Load(e.getenv)
		if err != nil {
			return err
		}
		dst = cfg.DBPath
	}
	r, err := db.Restore(e.ctx, file, dst, db.RestoreOptions{Replace: *force, Now: time.Now()})
	if err != nil {
		return restoreRefusal(file, dst, r, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "restored %s to %s (schema %d, %d runs, %.1f MB, integrity checked)\n", file, dst, r.SchemaVersion, r.Runs, float64(r.Size)/1e6)
	if r.Kept != "" {
		fmt.Fprintf(&b, "the database it replaced is kept as %s\n", r.Kept)
	}
	if r.SchemaVersion < db.SchemaVersion() {
		fmt.Fprintf(&b, "Knobs brings it from schema %d to %d when it starts\n", r.SchemaVersion, db.SchemaVersion())
	}
	b.WriteString("start Knobs to use it\n")
	_, err = fmt.Fprint(e.stdout, b.String())
	return err
}

// restoreRefusal says why a restore did not happen, and that nothing
// changed.
func restoreRefusal(file, dst string, r db.Restored, err error) error {
	const unchanged = "; nothing was changed"
	switch {
	case errors.Is(err, db.ErrLocked):
		return fmt.Errorf("a Knobs server is using %s: stop it first (and Litestream, if it replicates the file)%s", dst, unchanged)
	case errors.Is(err, db.ErrWouldReplace):
		return fmt.Errorf("%s is a sound Knobs backup (schema %d, %d runs), but %s exists: run again with --force to replace it (it will be kept as %s)%s",
			file, r.SchemaVersion, r.Runs, dst, r.Kept, unchanged)
	case errors.Is(err, db.ErrNotDatabase):
		return fmt.Errorf("%s is not a SQLite database, so no Knobs backup%s", file, unchanged)
	case errors.Is(err, db.ErrDamaged):
		return fmt.Errorf("%s is damaged: it fails SQLite's integrity check (%s); restore an older backup%s", file, cause(err), unchanged)
	case errors.Is(err, db.ErrNotKnobs):
		return fmt.Errorf("%s is a SQLite database but not a Knobs one (it lacks Knobs' tables)%s", file, unchanged)
	case errors.Is(err, db.ErrTooNew):
		return fmt.Errorf("%s was written by a newer Knobs (schema version %d; this knobs knows up to %d): restore it with that Knobs or a newer one%s",
			file, r.SchemaVersion, db.SchemaVersion(), unchanged)
	case errors.Is(err, db.ErrLiveCopy):
		return fmt.Errorf("%s-wal is beside %s: it is a copy of a live database, part of it still in that log; restore a copy made by knobs backup%s", file, file, unchanged)
	case errors.Is(err, os.ErrNotExist) && !fileExists(file):
		return fmt.Errorf("no backup at %s%s", file, unchanged)
	}
	return fmt.Errorf("%w%s", err, unchanged)
}

// cause is what SQLite found, after the sentinel's text.
func cause(err error) string {
	return strings.TrimPrefix(err.Error(), db.ErrDamaged.Error()+": ")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
