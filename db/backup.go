package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// ErrBackupExists is returned by Backup when its destination exists: a
// backup never replaces a file.
var ErrBackupExists = errors.New("db: the backup file already exists")

// Backup writes a consistent copy of the Knobs database at src to the new
// file dst, while a Knobs server may have src open and be writing to it.
// It does not take the lock a server holds (see lockFile) and does not
// migrate: it opens src as it is, with SQLite's own locking, and copies
// one snapshot of it with VACUUM INTO (the pages the server's write-ahead
// log holds included). The copy goes to a temporary file beside dst, is
// checked with PRAGMA integrity_check, and only then takes dst's name, so
// that dst is either absent or a whole, sound copy.
func Backup(ctx context.Context, src, dst string) (err error) {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("db: unable to back up %s: %w", src, err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("%w: %s", ErrBackupExists, dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("db: unable to back up to %s: %w", dst, err)
	}
	// An empty file is a valid VACUUM INTO target; creating it here makes
	// its name ours, with the owner-only mode a database with stored
	// keys wants.
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return fmt.Errorf("db: unable to back up to %s: %w", dst, err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer func() {
		if err != nil {
			os.Remove(tmpPath)
		}
	}()

	// mode=rw: a mistyped path is an error, not a new empty database.
	// The busy timeout waits out the server's checkpoints.
	conn, err := sql.Open("sqlite", "file:"+(&url.URL{Path: src}).EscapedPath()+"?mode=rw&_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("db: unable to open %s for a backup: %w", src, err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	if _, err := conn.ExecContext(ctx, "VACUUM INTO ?", tmpPath); err != nil {
		return fmt.Errorf("db: unable to copy %s: %w", src, err)
	}
	if err := checkIntegrity(ctx, tmpPath); err != nil {
		return err
	}
	return claim(tmpPath, dst)
}

// checkIntegrity opens the copy at path and runs PRAGMA integrity_check.
func checkIntegrity(ctx context.Context, path string) error {
	conn, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro")
	if err != nil {
		return fmt.Errorf("db: unable to open the backup copy: %w", err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("db: unable to check the backup copy: %w", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() && len(problems) < 10 {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("db: unable to check the backup copy: %w", err)
		}
		problems = append(problems, line)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: unable to check the backup copy: %w", err)
	}
	if len(problems) != 1 || problems[0] != "ok" {
		return fmt.Errorf("db: the backup copy failed its integrity check: %s", strings.Join(problems, "; "))
	}
	return nil
}

// claim gives the finished copy tmp the name dst, unless a file took that
// name meanwhile: a hard link fails on an existing name where a rename
// would replace it. Where links are not supported, it renames.
func claim(tmp, dst string) error {
	err := os.Link(tmp, dst)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s", ErrBackupExists, dst)
	}
	if err != nil {
		if _, serr := os.Lstat(dst); serr == nil {
			return fmt.Errorf("%w: %s", ErrBackupExists, dst)
		}
		if err := os.Rename(tmp, dst); err != nil {
			return fmt.Errorf("db: unable to name the backup %s: %w", dst, err)
		}
		return nil
	}
	os.Remove(tmp)
	return nil
}
