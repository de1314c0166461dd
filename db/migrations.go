package db

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations is append-only: never edit or reorder an entry that has
// shipped. Its length is the schema version a database ends up at.
var migrations = []string{
	// 1: accounts, settings, provider keys, custom providers, invites.
	`
CREATE TABLE settings (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE users (
	id            INTEGER PRIMARY KEY,
	username      TEXT NOT NULL UNIQUE COLLATE NOCASE,
	password_hash TEXT NOT NULL,
	role          TEXT NOT NULL CHECK (role IN ('admin', 'member')),
	created_at    INTEGER NOT NULL
);
CREATE TABLE invites (
	id         INTEGER PRIMARY KEY,
	token_hash BLOB NOT NULL UNIQUE,
	created_by INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	used_at    INTEGER,
	used_by    INTEGER REFERENCES users (id) ON DELETE SET NULL
);
CREATE TABLE providers (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE COLLATE NOCASE,
	base_url   TEXT NOT NULL,
	created_at INTEGER NOT NULL
);
-- user_id NULL is the team-wide key of a provider.
CREATE TABLE provider_keys (
	id         INTEGER PRIMARY KEY,
	user_id    INTEGER REFERENCES users (id) ON DELETE CASCADE,
	provider   TEXT NOT NULL,
	sealed     BLOB NOT NULL,
	last4      TEXT NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX provider_keys_owner ON provider_keys (ifnull(user_id, 0), provider);
`,
	// 2: runs, and the playground state each user left behind.
	`
CREATE TABLE runs (
	id          INTEGER PRIMARY KEY,
	user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	provider    TEXT NOT NULL,
	endpoint    TEXT NOT NULL,
	model       TEXT NOT NULL,
	spec        TEXT NOT NULL,
	status      TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	finished_at INTEGER,
	raw_request TEXT NOT NULL DEFAULT '',
	result      TEXT NOT NULL DEFAULT '{}',
	events      BLOB NOT NULL DEFAULT x''
);
CREATE INDEX runs_user ON runs (user_id, id DESC);
CREATE TABLE playground_state (
	user_id    INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
	spec       TEXT NOT NULL,
	updated_at INTEGER NOT NULL
);
`,
}

// SchemaVersion is the version a database has once Open returns.
func SchemaVersion() int { return len(migrations) }

func (s *Store) migrate(ctx context.Context) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("db: unable to create schema_version: %w", err)
		}
		var v int
		err := tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
		if err == sql.ErrNoRows {
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
				return fmt.Errorf("db: unable to initialise schema_version: %w", err)
			}
		} else if err != nil {
			return fmt.Errorf("db: unable to read schema_version: %w", err)
		}
		if v > len(migrations) {
			return fmt.Errorf("db: the database is at schema version %d, newer than this Knobs (%d)", v, len(migrations))
		}
		for i := v; i < len(migrations); i++ {
			if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
				return fmt.Errorf("db: unable to apply migration %d: %w", i+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, len(migrations)); err != nil {
			return fmt.Errorf("db: unable to record schema version: %w", err)
		}
		return nil
	})
}
