package db

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// Reasons a restore refuses; each leaves everything as it was.
var (
	ErrNotDatabase  = errors.New("db: not a SQLite database")
	ErrNotKnobs     = errors.New("db: not a Knobs database")
	ErrDamaged      = errors.New("db: the backup fails SQLite's integrity check")
	ErrTooNew       = errors.New("db: the backup is from a newer Knobs")
	ErrLiveCopy     = errors.New("db: the backup has a write-ahead log beside it")
	ErrWouldReplace = errors.New("db: a database is in the way")
)

// RestoreOptions say how Restore may go.
type RestoreOptions struct {
	// Replace lets a database at the destination be replaced; it is kept
	// beside it, as KeptName says.
	Replace bool
	// Now names the kept database.
	Now time.Time
}

// Restored describes the backup put in place (or that would be).
type Restored struct {
	SchemaVersion int   // the backup's; older ones are migrated at the next start
	Runs          int64 // how many runs it holds
	Size          int64 // its size in bytes
	// Kept is where the database it replaced is kept, or would be when
	// Restore refused with ErrWouldReplace; "" when there was none.
	Kept string
}

// keptLayout is the UTC time in a kept database's name.
const keptLayout = "20060102T150405Z"

// KeptName is where Restore keeps the database at path that it replaces.
func KeptName(path string, now time.Time) string {
	return path + ".before-restore-" + now.UTC().Format(keptLayout)
}

// sqliteHeader starts every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// Restore puts a copy of the backup src in the place of the database
// dst, for a Knobs that is stopped. It refuses, changing nothing, when
// a Knobs server holds dst (ErrLocked), and when the backup is not a
// sound Knobs database at a schema this Knobs knows (ErrNotDatabase,
// ErrDamaged, ErrNotKnobs, ErrTooNew, ErrLiveCopy). What is checked is
// the copy that goes in place, so that a file changed meanwhile cannot
// slip through. A database at dst is replaced only with o.Replace
// (ErrWouldReplace, with the report, otherwise): its write-ahead log is
// first folded into it, and it is kept as KeptName (a hard link, so that
// dst never goes missing), any log that could not be folded in beside it.
// The copy then takes dst's name in one rename.
func Restore(ctx context.Context, src, dst string, o RestoreOptions) (r Restored, err error) {
	fi, err := os.Stat(src)
	if err != nil {
		return r, fmt.Errorf("db: unable to read the backup: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return r, fmt.Errorf("%w: %s is not a file", ErrNotDatabase, src)
	}
	// A copy of a live database may have part of its content in a log
	// beside it, which the copy would lose.
	if wal, err := os.Stat(src + "-wal"); err == nil && wal.Size() > 0 {
		return r, fmt.Errorf("%w: %s-wal holds part of it", ErrLiveCopy, src)
	}

	// A server's lock on dst comes first: nothing is done while one runs.
	cur, err := os.Stat(dst)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return r, fmt.Errorf("db: unable to read %s: %w", dst, err)
	}
	if !exists {
		// SQLite would read a log left without its database into the
		// restored one.
		if wal, err := os.Stat(dst + "-wal"); err == nil && wal.Size() > 0 {
			return r, fmt.Errorf("db: %s-wal is there without its database; move it away first", dst)
		}
	} else {
		if os.SameFile(fi, cur) {
			return r, fmt.Errorf("db: the backup %s is the database itself", src)
		}
		lock, err := lockFile(dst)
		if err != nil {
			return r, err
		}
		if lock != nil {
			defer lock.Close()
		}
		r.Kept = KeptName(dst, o.Now)
	}

	tmp, err := copyBeside(src, dst)
	if err != nil {
		return r, err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if r.SchemaVersion, r.Runs, err = inspect(ctx, tmp); err != nil {
		return r, err
	}
	if st, err := os.Stat(tmp); err == nil {
		r.Size = st.Size()
	}
	if !exists {
		// A link fails where a Knobs started meanwhile made the file; a
		// rename would replace it under that Knobs.
		if err := os.Link(tmp, dst); err != nil {
			return r, fmt.Errorf("db: unable to put the backup in place: %w", err)
		}
		os.Remove(tmp)
		syncDir(filepath.Dir(dst))
		return r, nil
	}
	if !o.Replace {
		return r, fmt.Errorf("%w: %s", ErrWouldReplace, dst)
	}
	if err := setAside(ctx, dst, r.Kept); err != nil {
		return r, err
	}
	if err := os.Rename(tmp, dst); err != nil {
		// dst is still the old database; its log goes back beside it.
		os.Rename(r.Kept+"-wal", dst+"-wal")
		os.Remove(r.Kept)
		return r, fmt.Errorf("db: unable to put the backup in place: %w", err)
	}
	syncDir(filepath.Dir(dst))
	return r, nil
}

// copyBeside copies src to a new temporary file in dst's directory, where
// a rename can give it dst's name, and returns that file's path.
func copyBeside(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("db: unable to read the backup: %w", err)
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".restore-*")
	if err != nil {
		return "", fmt.Errorf("db: unable to write beside %s: %w", dst, err)
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out.Name())
		return "", fmt.Errorf("db: unable to copy the backup beside %s: %w", dst, err)
	}
	return out.Name(), nil
}

// inspect checks that the file at path is a sound Knobs database at a
// schema this Knobs knows, and counts its runs. It opens the file
// immutable: nothing is written, not even a lock or a log beside it.
func inspect(ctx context.Context, path string) (version int, runs int64, err error) {
	head := make([]byte, len(sqliteHeader))
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("db: unable to read the backup copy: %w", err)
	}
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || !bytes.Equal(head, sqliteHeader) {
		return 0, 0, ErrNotDatabase
	}
	conn, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&immutable=1")
	if err != nil {
		return 0, 0, fmt.Errorf("db: unable to open the backup copy: %w", err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	if err := integrity(ctx, conn); err != nil {
		return 0, 0, err
	}
	var tables int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('schema_version', 'users', 'runs', 'settings')`).Scan(&tables); err != nil {
		return 0, 0, fmt.Errorf("%w: %v", ErrNotDatabase, err)
	}
	if tables != 4 {
		return 0, 0, ErrNotKnobs
	}
	if err := conn.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&version); err != nil {
		return 0, 0, fmt.Errorf("%w: no schema version (%v)", ErrNotKnobs, err)
	}
	if version > SchemaVersion() {
		return version, 0, fmt.Errorf("%w: schema version %d, this Knobs knows up to %d", ErrTooNew, version, SchemaVersion())
	}
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&runs); err != nil {
		return version, 0, fmt.Errorf("db: unable to count the backup's runs: %w", err)
	}
	return version, runs, nil
}

// integrity runs PRAGMA integrity_check on conn.
func integrity(ctx context.Context, conn *sql.DB) error {
	rows, err := conn.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		// A file with SQLite's header and garbage after it fails here.
		return fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() && len(problems) < 5 {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		problems = append(problems, line)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	if len(problems) != 1 || problems[0] != "ok" {
		return fmt.Errorf("%w: %q", ErrDamaged, problems)
	}
	return nil
}

// setAside keeps the database at path as kept. Its write-ahead log is
// checkpointed into it first, so that kept is whole by itself; a log
// that is still there (a file SQLite cannot open) goes with it as
// kept-wal, never left for the restored database to pick up. The shared
// memory index is only a cache of the log and is removed.
func setAside(ctx context.Context, path, kept string) error {
	if _, err := os.Lstat(kept); err == nil {
		return fmt.Errorf("db: %s exists; try again in a second", kept)
	}
	if conn, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=rw&_pragma=busy_timeout(5000)"); err == nil {
		conn.SetMaxOpenConns(1)
		// An error (a file that is no database) leaves the log to move.
		conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		conn.Close()
	}
	if err := os.Link(path, kept); err != nil {
		return fmt.Errorf("db: unable to keep the current database as %s: %w", kept, err)
	}
	for _, side := range []string{"-wal", "-journal"} {
		fi, err := os.Stat(path + side)
		if err != nil {
			continue
		}
		if fi.Size() == 0 {
			os.Remove(path + side)
			continue
		}
		if err := os.Rename(path+side, kept+side); err != nil {
			os.Remove(kept)
			return fmt.Errorf("db: unable to keep the current database's %s: %w", side, err)
		}
	}
	os.Remove(path + "-shm")
	return nil
}

// syncDir makes a rename in dir durable where the system allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
