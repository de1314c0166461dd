package db

import (
	"context"
	"database/sql"
	"net/url"
	"time"
)

// MigrateTo leaves the file at path at schema version v, as an older
// Knobs would have left it.
func MigrateTo(ctx context.Context, path string, v int) error {
	w, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		return err
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	return (&Store{w: w}).migrateTo(ctx, v)
}

// FTSQuery exposes the search sanitiser to tests.
var FTSQuery = ftsQuery

// AddFinishedRuns stores n finished runs of user created at created, in
// one transaction, so that tests can build a long history quickly.
func (s *Store) AddFinishedRuns(ctx context.Context, user int64, n int, created time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for range n {
			// Ids from NextRunID, as every run of this process gets.
			id := s.NextRunID()
			_, err := tx.ExecContext(ctx, `
INSERT INTO runs (id, user_id, provider, endpoint, model, spec, status, created_at, prompt_line, variables, result)
VALUES (?, ?, 'sim', 'chat', 'sim-fast', '{}', 'done', ?, 'an old question', '', '{"choices":[{"content":"an old answer"}]}')`, id, user, created.UnixMilli())
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO run_chunks (run_id, first, frames, times) VALUES (?, 1, 'event: done', x'')`, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO runs_fts (rowid, prompt_line, prompt, output_line, output) VALUES (?, 'an old question', 'an old question', 'an old answer', 'an old answer')`, user<<ftsOwnerShift|id); err != nil {
				return err
			}
		}
		return nil
	})
}
