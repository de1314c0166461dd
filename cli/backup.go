package cli

import (
	"errors"
	"fmt"
	"os"

	"knobs/config"
	"knobs/db"
)

const backupUsage = `knobs backup [--db PATH] FILE

Writes a consistent copy of the Knobs database (KNOBS_DB) to the new file
FILE, while the server runs and writes to it. The copy is checked with
SQLite's integrity check before it takes FILE's name; an existing FILE is
never replaced. Run it on the machine that has the database file. To
restore, stop Knobs and run knobs restore FILE.`

func backupCommand(e *env, args []string) error {
	const name = "knobs backup"
	fs := flagSet(name, backupUsage)
	dbPath := fs.String("db", "", "the database file (default $KNOBS_DB, else ./knobs.db)")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef(name, "give the file to write the copy to")
	}
	src := *dbPath
	if src == "" {
		cfg, err := config.Load(e.getenv)
		if err != nil {
			return err
		}
		src = cfg.DBPath
	}
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("no database at %s (KNOBS_DB or --db): %w", src, errors.Unwrap(err))
	}
	err = db.Backup(e.ctx, src, rest[0])
	if errors.Is(err, db.ErrBackupExists) {
		return fmt.Errorf("%s exists: a backup never replaces a file; give a new name", rest[0])
	}
	if err != nil {
		return err
	}
	fi, err := os.Stat(rest[0])
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "backed up %s to %s (%.1f MB, integrity checked)\n", src, rest[0], float64(fi.Size())/1e6)
	return err
}
