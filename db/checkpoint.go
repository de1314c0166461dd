package db

import (
	"context"
	"fmt"
)

// LeaveCheckpointsToLitestream turns off SQLite's automatic checkpoints
// on the writer, so that Litestream, which replicates the write-ahead log
// before it copies it into the database file, is the only one to
// checkpoint (KNOBS_LITESTREAM). Litestream's docs advise it: a
// checkpoint it did not make can lose it part of the log. Without a
// Litestream running beside Knobs, the log then grows without bound.
// The readers never write, so they never checkpoint; the writer has one
// connection that is never closed while the store is open, so the pragma
// holds for the store's life.
func (s *Store) LeaveCheckpointsToLitestream(ctx context.Context) error {
	if _, err := s.w.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil {
		return fmt.Errorf("db: unable to turn automatic checkpoints off: %w", err)
	}
	return nil
}
