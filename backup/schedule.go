// Package backup takes Knobs' scheduled online backups: a consistent copy
// of the database (db.Backup) into a directory every so often, named by
// its UTC time, the newest few kept.
package backup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"knobs/db"
)

// timeLayout is the UTC time in a backup's name: knobs-20261201T030000Z.db.
const timeLayout = "20060102T150405Z"

// Only files with these names are the scheduler's: pruning and the
// clean-up of copies a killed process left never touch anything else in
// the directory.
var (
	backupName = regexp.MustCompile(`^knobs-(\d{8}T\d{6}Z)\.db$`)
	// db.Backup writes "."+name+".tmp-"+random beside the backup.
	leftoverName = regexp.MustCompile(`^\.knobs-\d{8}T\d{6}Z\.db\.tmp-\d+$`)
)

// maxEntries bounds how many directory entries one listing reads.
const maxEntries = 100_000

// Options configure the Scheduler.
type Options struct {
	DB    string        // the database file, which the server has open
	Dir   string        // where backups go; created if missing
	Every time.Duration // time between backups
	Keep  int           // how many backups to keep; older ones are removed
	// Grace is how long a stop lets a backup in progress finish before
	// it is cancelled (its partial copy removed).
	Grace time.Duration
	Log   *slog.Logger
	// OnBackup, if set, is called after each backup with its outcome,
	// duration and size (0 when it failed): the metrics' hook.
	OnBackup func(ok bool, d time.Duration, size int64)

	now   func() time.Time                     // the clock that names backups
	after func(time.Duration) <-chan time.Time // the timer between backups
}

// Scheduler takes a backup whenever one is due, until its context ends.
type Scheduler struct {
	o Options
}

// New checks the options and that Dir can be written (creating it), so
// that a wrong KNOBS_BACKUP_DIR stops Knobs at start rather than failing
// every backup later.
func New(o Options) (*Scheduler, error) {
	if o.DB == "" || o.Dir == "" {
		return nil, errors.New("backup: the database and the backup directory must be set")
	}
	if o.Every <= 0 || o.Keep < 1 {
		return nil, fmt.Errorf("backup: want a positive interval and at least one backup kept, not every %s, keep %d", o.Every, o.Keep)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.after == nil {
		o.after = time.After
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("backup: unable to create the backup directory: %w", err)
	}
	probe, err := os.CreateTemp(o.Dir, ".knobs-write-check-*")
	if err != nil {
		return nil, fmt.Errorf("backup: unable to write in the backup directory %s: %w", o.Dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return &Scheduler{o: o}, nil
}

// Run takes backups until ctx ends. The first is due one interval after
// the newest backup already in the directory (at once when there is none
// or it is older), so that restarts neither skip backups nor take one
// each; then one every interval. A failed backup is retried at the next
// interval. When ctx ends during a backup, the backup has Grace to finish
// before it is cancelled; Run returns once it has ended either way.
func (s *Scheduler) Run(ctx context.Context) {
	s.removeLeftovers()
	wait := time.Duration(0)
	if newest, ok := s.newest(); ok {
		wait = newest.Add(s.o.Every).Sub(s.o.now())
	}
	for {
		if wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-s.o.after(wait):
			}
		}
		if ctx.Err() != nil {
			return
		}
		s.Once(ctx)
		wait = s.o.Every
	}
}

// Once takes one backup now, logs it, reports it to OnBackup and, when
// it succeeded, removes the backups beyond Keep. It returns the new
// file's path, or the error.
func (s *Scheduler) Once(ctx context.Context) (string, error) {
	name := "knobs-" + s.o.now().UTC().Format(timeLayout) + ".db"
	path := filepath.Join(s.o.Dir, name)
	bctx, cancel := graceful(ctx, s.o.Grace)
	defer cancel()
	start := time.Now()
	err := db.Backup(bctx, s.o.DB, path)
	d := time.Since(start)
	var size int64
	if err == nil {
		fi, serr := os.Stat(path)
		if serr != nil {
			err = fmt.Errorf("backup: the new backup is missing: %w", serr)
		} else {
			size = fi.Size()
		}
	}
	if err != nil {
		s.o.Log.Error("scheduled backup failed; the next is tried in KNOBS_BACKUP_EVERY", "file", path, "err", err, "duration", d.Round(time.Millisecond), "next_in", s.o.Every)
		s.report(false, d, 0)
		return "", err
	}
	s.o.Log.Info("scheduled backup written", "file", path, "bytes", size, "duration", d.Round(time.Millisecond))
	s.report(true, d, size)
	s.prune()
	return path, nil
}

func (s *Scheduler) report(ok bool, d time.Duration, size int64) {
	if s.o.OnBackup != nil {
		s.o.OnBackup(ok, d, size)
	}
}

// graceful is a context for one backup: it ends grace after ctx ends (or
// when the returned cancel is called), so that a stop lets a backup that
// is nearly done finish and still bounds the wait.
func graceful(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-bctx.Done():
		}
	})
	return bctx, func() {
		stop()
		cancel()
	}
}

// backups lists the scheduler's backups in Dir, oldest first (their names
// sort by time).
func (s *Scheduler) backups() ([]string, error) {
	f, err := os.Open(s.o.Dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(maxEntries)
	if err != nil && len(names) == 0 {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if backupName.MatchString(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// newest is the time of the newest backup in Dir.
func (s *Scheduler) newest() (time.Time, bool) {
	names, err := s.backups()
	if err != nil || len(names) == 0 {
		return time.Time{}, false
	}
	m := backupName.FindStringSubmatch(names[len(names)-1])
	t, err := time.Parse(timeLayout, m[1])
	return t, err == nil
}

// prune removes the oldest backups beyond Keep.
func (s *Scheduler) prune() {
	names, err := s.backups()
	if err != nil {
		s.o.Log.Error("listing the backups to remove the oldest", "dir", s.o.Dir, "err", err)
		return
	}
	if len(names) <= s.o.Keep {
		return
	}
	old := names[:len(names)-s.o.Keep]
	for _, n := range old {
		if err := os.Remove(filepath.Join(s.o.Dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.o.Log.Error("removing an old backup", "file", filepath.Join(s.o.Dir, n), "err", err)
			continue
		}
		s.o.Log.Info("removed a backup beyond KNOBS_BACKUP_KEEP", "file", filepath.Join(s.o.Dir, n), "keep", s.o.Keep)
	}
}

// removeLeftovers removes the partial copies of backups a killed process
// was writing; at start no backup of this process is in progress.
func (s *Scheduler) removeLeftovers() {
	f, err := os.Open(s.o.Dir)
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(maxEntries)
	f.Close()
	for _, n := range names {
		if leftoverName.MatchString(n) {
			if err := os.Remove(filepath.Join(s.o.Dir, n)); err == nil {
				s.o.Log.Warn("removed the partial copy of a backup that a stopped Knobs left", "file", filepath.Join(s.o.Dir, n))
			}
		}
	}
}
