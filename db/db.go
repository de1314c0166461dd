// Package db is the Store: all of Knobs' SQL, over one SQLite file.
//
// SQLite is opened twice on the same file, the way that held up under
// concurrent runs when measured (BENCHMARKS.md):
// a writer with a single connection whose transactions are BEGIN
// IMMEDIATE, so two writers never deadlock into SQLITE_BUSY, and a
// query-only reader pool for everything else.
//
// Not found: a method that loads one row returns ErrNotFound when there
// is no such row or it belongs to someone else; handlers turn it into 404.
// A row the caller sees but may not change (a team preset, for a member
// who does not own it) is ErrForbidden instead.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the pure-Go driver, so CGO_ENABLED=0 builds work
)

// ErrNotFound is returned when a row does not exist or is not the caller's.
var ErrNotFound = errors.New("db: not found")

// ErrLocked is returned by Open when another Knobs process has the file.
var ErrLocked = errors.New("db: another Knobs process is using the database file")

// Store owns every SQL statement of Knobs.
type Store struct {
	w      *sql.DB // one connection, immediate transactions
	r      *sql.DB // read-only pool
	lockMu sync.Mutex
	lock   *os.File

	sessions sessionCache
	runIDs   atomic.Int64 // the last run id handed out; see NextRunID

	// observe, when set, is told of every write transaction (see
	// ObserveWrites); full says the last one failed for want of room.
	observe atomic.Pointer[func(took time.Duration, err error)]
	full    atomic.Bool
}

// Open opens (creating if needed) the SQLite file at path, which it locks
// for this process alone (ErrLocked when another has it), and brings its
// schema up to date.
func Open(ctx context.Context, path string) (s *Store, err error) {
	lock, err := lockFile(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil && lock != nil {
			lock.Close()
		}
	}()
	pragmas := "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	file := "file:" + (&url.URL{Path: path}).EscapedPath()
	w, err := sql.Open("sqlite", file+"?"+pragmas+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("db: unable to open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("db: unable to open %s: %w", path, err)
	}
	s = &Store{w: w, lock: lock}
	if err := s.migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	if err := s.loadRunIDs(ctx); err != nil {
		w.Close()
		return nil, err
	}
	// The reader opens after migration so that the file and WAL exist.
	r, err := sql.Open("sqlite", file+"?"+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("db: unable to open reader on %s: %w", path, err)
	}
	r.SetMaxOpenConns(max(4, runtime.NumCPU()*2))
	r.SetMaxIdleConns(max(4, runtime.NumCPU()*2))
	s.r = r
	return s, nil
}

// Close closes both pools, then lets another process have the file.
// Closing twice is harmless.
func (s *Store) Close() error {
	err := errors.Join(s.r.Close(), s.w.Close())
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	if s.lock != nil {
		err = errors.Join(err, s.lock.Close())
		s.lock = nil
	}
	return err
}

// Ping reports whether the database answers a query, for /healthz.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.r.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("db: unable to ping: %w", err)
	}
	return nil
}

// tx runs fn in one immediate write transaction.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) (err error) {
	start := time.Now()
	defer func() { s.wrote(time.Since(start), err) }()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// ObserveWrites has f told how long each write transaction took, waiting
// for the writer included, and its error; for the metrics. Set it before
// the store is used.
func (s *Store) ObserveWrites(f func(took time.Duration, err error)) {
	s.observe.Store(&f)
}

// wrote records a write transaction's outcome.
func (s *Store) wrote(took time.Duration, err error) {
	if f := s.observe.Load(); f != nil {
		(*f)(took, err)
	}
	switch {
	case err == nil:
		s.full.Store(false)
	case IsFull(err):
		s.full.Store(true)
	}
}

// probeBytes is the room a readiness probe asks for: a few checkpoints'
// worth of pages, more than a page's free space can hold.
const probeBytes = 64 << 10

// CheckWritable reports whether the database takes writes now, for
// /readyz: it takes the write lock (BEGIN IMMEDIATE), writes a row that
// needs new pages and deletes it. The transaction is rolled back, so
// nothing is kept or written to disk; but after a write failed for want
// of room it is committed (leaving no row), so that a full disk is
// noticed and so is the room made since.
func (s *Store) CheckWritable(ctx context.Context) error {
	commit := s.full.Load()
	err := func() error {
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('knobs.ready_probe', zeroblob(?))`, probeBytes); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM settings WHERE key = 'knobs.ready_probe'`); err != nil {
			return err
		}
		if commit {
			return tx.Commit()
		}
		return nil
	}()
	if err != nil {
		if IsFull(err) {
			s.full.Store(true)
		}
		return fmt.Errorf("db: unable to write: %w", err)
	}
	if commit {
		s.full.Store(false)
	}
	return nil
}

// LimitGrowth caps the database at its current size plus pages pages:
// past it every write fails with SQLITE_FULL, as on a full disk, while
// reads go on. Tests use it to fill the disk honestly.
func (s *Store) LimitGrowth(ctx context.Context, pages int64) error {
	var n int64
	if err := s.w.QueryRowContext(ctx, "PRAGMA page_count").Scan(&n); err != nil {
		return fmt.Errorf("db: unable to read the page count: %w", err)
	}
	// The writer has one connection, so the pragma holds for every write.
	if _, err := s.w.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", n+pages)); err != nil {
		return fmt.Errorf("db: unable to cap the page count: %w", err)
	}
	return nil
}
