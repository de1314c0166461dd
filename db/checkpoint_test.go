package db_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"knobs/db"
	"knobs/db/dbtest"
)

// walFrames writes settings until well past SQLite's automatic
// checkpoint (1000 pages) and returns how many frames the write-ahead log
// then holds, read by another connection as Litestream reads it.
func walFrames(t *testing.T, litestream bool) int {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "knobs.db")
	dbtest.Fresh(t, path)
	s, err := db.Open(ctx, path)
	must(t, err)
	defer s.Close()
	if litestream {
		must(t, s.LeaveCheckpointsToLitestream(ctx))
	}
	value := strings.Repeat("x", 6000) // two pages or so a write
	for i := range 1200 {
		must(t, s.SetSetting(ctx, fmt.Sprintf("filler-%d", i), value))
	}
	var busy, frames, moved int
	must(t, rawDB(t, path).QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &moved))
	return frames
}

// With KNOBS_LITESTREAM, Knobs never checkpoints: the log keeps every
// frame written until Litestream checkpoints. Without it, SQLite's
// automatic checkpoint restarts the log past 1000 pages.
func TestLeaveCheckpointsToLitestream(t *testing.T) {
	if got := walFrames(t, true); got < 2400 {
		t.Errorf("with checkpoints left to Litestream the log holds %d frames, want every frame written (2400 or more)", got)
	}
	if got := walFrames(t, false); got >= 2400 {
		t.Errorf("with Knobs' own checkpoints the log holds %d frames; it should have restarted", got)
	}
}
