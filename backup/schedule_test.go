package backup

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"knobs/db"
	"knobs/db/dbtest"
)

// outcome is one call of OnBackup.
type outcome struct {
	ok   bool
	size int64
}

// harness runs a Scheduler on a fake clock and timer: each backup is
// named an hour after the last, and the test says when the timer fires.
type harness struct {
	s        *Scheduler
	ticks    chan time.Time
	waits    chan time.Duration // what the scheduler asked the timer for
	outcomes chan outcome
	logs     *syncBuffer
}

func newHarness(t *testing.T, src, dir string, keep int, grace time.Duration) *harness {
	t.Helper()
	h := &harness{ticks: make(chan time.Time), waits: make(chan time.Duration, 16), outcomes: make(chan outcome, 16), logs: &syncBuffer{}}
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	s, err := New(Options{DB: src, Dir: dir, Every: 6 * time.Hour, Keep: keep, Grace: grace,
		Log:      slog.New(slog.NewTextHandler(h.logs, nil)),
		OnBackup: func(ok bool, _ time.Duration, size int64) { h.outcomes <- outcome{ok, size} }})
	if err != nil {
		t.Fatal(err)
	}
	s.o.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now := clock
		clock = clock.Add(time.Hour)
		return now
	}
	s.o.after = func(d time.Duration) <-chan time.Time {
		h.waits <- d
		return h.ticks
	}
	h.s = s
	return h
}

// run starts the scheduler; stop ends it and waits until it has.
func (h *harness) run(t *testing.T) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.s.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

func (h *harness) next(t *testing.T) outcome {
	t.Helper()
	select {
	case o := <-h.outcomes:
		return o
	case <-time.After(time.Minute):
		t.Fatalf("no backup was taken; log:\n%s", h.logs.String())
		return outcome{}
	}
}

// liveDatabase is a Knobs database held open by a Store, as a running
// server holds it, with n finished runs.
func liveDatabase(t *testing.T, n int) (path string, runs []int64, user int64) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), "knobs.db")
	dbtest.Fresh(t, path)
	s, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	u, err := s.CreateUser(ctx, db.SignUp{Username: "ada", PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		id, err := s.CreateRun(ctx, db.Run{UserID: u.ID, Provider: "sim", Endpoint: "chat", Model: "sim-fast", Spec: "{}", CreatedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.FinishRun(ctx, id, db.RunDone, "{}", "{}", nil, time.Now()); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, id)
	}
	return path, runs, u.ID
}

func list(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// The scheduler keeps the newest KEEP backups, each a whole copy of the
// live database, and never touches a file in the directory that is not
// one of its backups, however alike the name.
func TestSchedulerKeepsTheNewestAndLeavesOtherFiles(t *testing.T) {
	src, runs, user := liveDatabase(t, 3)
	dir := t.TempDir()
	foreign := map[string]string{
		"notes.txt":                      "my notes",
		"knobs.db":                       "not a backup",
		"knobs-latest.db":                "a copy made by hand",
		"knobs-20200101T000000Z.db.bak":  "an old copy, renamed",
		"knobs-20200101T000000Z.db-wal":  "someone's log",
		"knobs-2020-01-01.db":            "another naming",
		".knobs-20200101T000000Z.db.tmp": "not a scheduler temp file",
	}
	for name, body := range foreign {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A partial copy a killed Knobs left is removed at start.
	leftover := ".knobs-20261130T120000Z.db.tmp-123456"
	if err := os.WriteFile(filepath.Join(dir, leftover), []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}

	h := newHarness(t, src, dir, 3, time.Minute)
	stop := h.run(t)
	for i := range 5 {
		if i > 0 {
			h.ticks <- time.Time{}
		}
		if o := h.next(t); !o.ok || o.size == 0 {
			t.Fatalf("backup %d: %+v\n%s", i+1, o, h.logs.String())
		}
	}
	stop()

	want := []string{"knobs-20261201T020000Z.db", "knobs-20261201T030000Z.db", "knobs-20261201T040000Z.db"}
	for name := range foreign {
		want = append(want, name)
	}
	slices.Sort(want)
	if got := list(t, dir); !slices.Equal(got, want) {
		t.Errorf("the directory holds\n %q\nwant\n %q", got, want)
	}
	for name, body := range foreign {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != body {
			t.Errorf("%s changed: %q", name, b)
		}
	}
	// Each kept backup is the database: its runs are in it.
	for _, name := range []string{"knobs-20261201T020000Z.db", "knobs-20261201T040000Z.db"} {
		copied, err := db.Open(context.Background(), filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s does not open: %v", name, err)
		}
		for _, id := range runs {
			if r, err := copied.Run(context.Background(), user, id); err != nil || r.Status != db.RunDone {
				t.Errorf("run %d in %s: %v", id, name, err)
			}
		}
		copied.Close()
	}
	log := h.logs.String()
	for _, s := range []string{`msg="scheduled backup written" file=` + filepath.Join(dir, "knobs-20261201T040000Z.db") + " bytes=", "duration=", `msg="removed a backup beyond KNOBS_BACKUP_KEEP" file=` + filepath.Join(dir, "knobs-20261201T000000Z.db"), "removed the partial copy", leftover} {
		if !strings.Contains(log, s) {
			t.Errorf("the log does not say %q:\n%s", s, log)
		}
	}
}

// After a restart, the first backup is due an interval after the newest
// one in the directory, not at once.
func TestSchedulerWaitsForTheDueTime(t *testing.T) {
	src, _, _ := liveDatabase(t, 1)
	dir := t.TempDir()
	// The harness's clock reads 00:00 first; the newest backup is from
	// an hour before, so the next is due in five hours.
	for _, name := range []string{"knobs-20261130T120000Z.db", "knobs-20261130T230000Z.db"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, src, dir, 7, time.Minute)
	stop := h.run(t)
	defer stop()
	if w := <-h.waits; w != 5*time.Hour {
		t.Errorf("the first backup waits %s, want 5h", w)
	}
	h.ticks <- time.Time{}
	if o := h.next(t); !o.ok {
		t.Fatalf("the due backup failed:\n%s", h.logs.String())
	}
	if w := <-h.waits; w != 6*time.Hour {
		t.Errorf("the next backup waits %s, want KNOBS_BACKUP_EVERY (6h)", w)
	}
}

// A backup that fails leaves no file, partial or whole, says so in the
// log, and is tried again at the next tick.
func TestSchedulerFailureLeavesNoFileAndRetries(t *testing.T) {
	src := filepath.Join(t.TempDir(), "knobs.db")
	if err := os.WriteFile(src, []byte(strings.Repeat("this is not a database\n", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	h := newHarness(t, src, dir, 7, time.Minute)
	stop := h.run(t)
	defer stop()
	if o := h.next(t); o.ok || o.size != 0 {
		t.Fatalf("a backup of a file that is no database: %+v", o)
	}
	if got := list(t, dir); len(got) != 0 {
		t.Errorf("a failed backup left %q", got)
	}
	if !strings.Contains(h.logs.String(), `msg="scheduled backup failed`) {
		t.Errorf("the log does not say the backup failed:\n%s", h.logs.String())
	}
	// Mended, the next tick's backup is made.
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	dbtest.Fresh(t, src)
	h.ticks <- time.Time{}
	if o := h.next(t); !o.ok {
		t.Fatalf("the retry failed:\n%s", h.logs.String())
	}
	if got := list(t, dir); len(got) != 1 || !backupName.MatchString(got[0]) {
		t.Errorf("after the retry the directory holds %q", got)
	}
}

// lockedSource is a database another connection holds an exclusive lock
// on, so that a backup of it waits; release lets the backup go on.
func lockedSource(t *testing.T) (path string, release func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "knobs.db")
	dbtest.Fresh(t, path)
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(DELETE)")
	if err != nil {
		t.Fatal(err)
	}
	conn.SetMaxOpenConns(1)
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Exec("BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec("INSERT INTO settings (key, value) VALUES ('probe', 'x')"); err != nil {
		t.Fatal(err)
	}
	return path, func() {
		if _, err := conn.Exec("COMMIT"); err != nil {
			t.Error(err)
		}
	}
}

// waitForPartialCopy waits until a backup has begun writing in dir.
func waitForPartialCopy(t *testing.T, dir string) {
	t.Helper()
	for range 6000 {
		for _, n := range list(t, dir) {
			if leftoverName.MatchString(n) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the backup did not begin")
}

// A stop during a backup cancels it once the grace period is over: Run
// returns and no partial copy is left.
func TestStopCancelsABackupInProgress(t *testing.T) {
	src, _ := lockedSource(t)
	dir := t.TempDir()
	h := newHarness(t, src, dir, 7, 0)
	stop := h.run(t)
	waitForPartialCopy(t, dir)
	stop()
	if o := h.next(t); o.ok {
		t.Error("the cancelled backup reported success")
	}
	if got := list(t, dir); len(got) != 0 {
		t.Errorf("a cancelled backup left %q", got)
	}
}

// A stop during a backup lets it finish within the grace period.
func TestStopWaitsForABackupInProgress(t *testing.T) {
	src, release := lockedSource(t)
	dir := t.TempDir()
	h := newHarness(t, src, dir, 7, 10*time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.s.Run(ctx)
	}()
	waitForPartialCopy(t, dir)
	cancel()
	release()
	<-done
	if o := h.next(t); !o.ok {
		t.Fatalf("the backup was not let finish:\n%s", h.logs.String())
	}
	if got := list(t, dir); len(got) != 1 || got[0] != "knobs-20261201T000000Z.db" {
		t.Errorf("the directory holds %q", got)
	}
}

// New refuses a directory it cannot write to, naming it.
func TestNewRefusesAnUnwritableDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{DB: "knobs.db", Dir: filepath.Join(file, "backups"), Every: time.Hour, Keep: 1})
	if err == nil || !strings.Contains(err.Error(), "backup directory") {
		t.Errorf("a directory under a file: %v", err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
