package db

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
)

// rebuildAutoincrement remakes each table with its INTEGER PRIMARY KEY
// declared AUTOINCREMENT, keeping every row, column, index and trigger.
// Without AUTOINCREMENT SQLite hands out max(id)+1, so removing the
// newest row gives its id to the next one: the next sign-up would take a
// removed member's id, and with it their still-valid cookie.
//
// SQLite cannot change a primary key in place; this is its documented
// rebuild (create, copy, drop, rename), run with foreign keys off (see
// migrateTo) so that dropping the old table cascades nowhere. Triggers
// are dropped before and made again after, since renaming a table
// re-checks every trigger that names a table being rebuilt.
func rebuildAutoincrement(ctx context.Context, tx *sql.Tx, tables ...string) error {
	triggers, err := schemaSQL(ctx, tx, `type = 'trigger'`)
	if err != nil {
		return err
	}
	for _, t := range triggers {
		if _, err := tx.ExecContext(ctx, `DROP TRIGGER `+t.name); err != nil {
			return fmt.Errorf("dropping trigger %s: %w", t.name, err)
		}
	}
	for _, table := range tables {
		if err := rebuildTable(ctx, tx, table); err != nil {
			return fmt.Errorf("rebuilding %s: %w", table, err)
		}
	}
	for _, t := range triggers {
		if _, err := tx.ExecContext(ctx, t.sql); err != nil {
			return fmt.Errorf("making trigger %s again: %w", t.name, err)
		}
	}
	return nil
}

type schemaEntry struct{ name, sql string }

// schemaSQL lists the named schema entries matching where, in creation order.
func schemaSQL(ctx context.Context, tx *sql.Tx, where string, args ...any) ([]schemaEntry, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL AND `+where+` ORDER BY rowid`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []schemaEntry
	for rows.Next() {
		var e schemaEntry
		if err := rows.Scan(&e.name, &e.sql); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

var (
	createTable = regexp.MustCompile(`^CREATE TABLE "?(\w+)"?\s*\(`)
	integerKey  = regexp.MustCompile(`\bINTEGER PRIMARY KEY\b(\s+AUTOINCREMENT)?`)
)

func rebuildTable(ctx context.Context, tx *sql.Tx, table string) error {
	var create string
	if err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&create); err != nil {
		return err
	}
	if !createTable.MatchString(create) {
		return fmt.Errorf("unexpected definition %q", create)
	}
	key := integerKey.FindStringSubmatchIndex(create)
	if key == nil {
		return fmt.Errorf("no INTEGER PRIMARY KEY in %q", create)
	}
	if key[2] >= 0 {
		return nil // already AUTOINCREMENT
	}
	newName := table + "_rebuilt"
	def := create[:key[1]] + " AUTOINCREMENT" + create[key[1]:]
	def = createTable.ReplaceAllString(def, "CREATE TABLE "+newName+" (")
	indexes, err := schemaSQL(ctx, tx, `type = 'index' AND tbl_name = ?`, table)
	if err != nil {
		return err
	}
	steps := []string{
		def,
		`INSERT INTO ` + newName + ` SELECT * FROM ` + table,
		`DROP TABLE ` + table,
		`ALTER TABLE ` + newName + ` RENAME TO ` + table,
	}
	for _, ix := range indexes {
		steps = append(steps, ix.sql)
	}
	for _, q := range steps {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", strings.SplitN(q, "\n", 2)[0], err)
		}
	}
	return nil
}

// ftsOwnerShift places a run's owner in the high bits of its search
// index rowid: (user_id << 40) | run id. A term's entries in FTS5 are
// ordered by rowid, so each user's runs form one contiguous range that a
// search reads alone (a rowid range is applied inside the index), and the
// time a search takes does not depend on what other users wrote. Run ids
// stay below 2^40 and user ids below 2^23.
const ftsOwnerShift = 40

// ftsIDMask is the SQL that takes the run id out of a search rowid.
const ftsIDMask = `((1 << 40) - 1)`

// ftsRowid is the SQL for the search rowid of the run whose id is bound
// to its one parameter.
const ftsRowid = `(SELECT (user_id << 40) | id FROM runs WHERE id = ?)`

// rekeySearch moves every run's search entry to its owner-keyed rowid and
// makes the trigger that forgets a removed run use it. An entry already
// keyed (summariseRuns writes keyed rowids) keeps its key.
func rekeySearch(ctx context.Context, tx *sql.Tx) error {
	steps := []string{
		`DROP TRIGGER runs_forget`,
		`CREATE VIRTUAL TABLE runs_fts_keyed USING fts5 (prompt_line, prompt, output_line, output, tokenize = 'unicode61 remove_diacritics 2')`,
		`INSERT INTO runs_fts_keyed (rowid, prompt_line, prompt, output_line, output)
			SELECT (r.user_id << 40) | r.id, f.prompt_line, f.prompt, f.output_line, f.output
			FROM runs_fts f JOIN runs r ON r.id = f.rowid & ((1 << 40) - 1)`,
		`DROP TABLE runs_fts`,
		`ALTER TABLE runs_fts_keyed RENAME TO runs_fts`,
		`CREATE TRIGGER runs_forget AFTER DELETE ON runs BEGIN
	DELETE FROM runs_fts WHERE rowid = (old.user_id << 40) | old.id;
	DELETE FROM shares WHERE kind = 'run' AND target_id = old.id;
END`,
	}
	for _, q := range steps {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("re-keying the search index: %w", err)
		}
	}
	return nil
}

// shareKinds is the CHECK on shares.kind before migration 14.
const shareKinds = `kind IN ('run', 'group', 'preset')`

// widenShareKinds lets shares name experiments and arenas' results: SQLite cannot alter a
// CHECK, so the table is made again with the wider one and its rows,
// indexes and the triggers naming it kept.
func widenShareKinds(ctx context.Context, tx *sql.Tx) error {
	var create string
	if err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'shares'`).Scan(&create); err != nil {
		return err
	}
	if !strings.Contains(create, shareKinds) {
		return fmt.Errorf("unexpected definition of shares %q", create)
	}
	create = strings.Replace(create, shareKinds, `kind IN ('run', 'group', 'preset', 'experiment', 'arena')`, 1)
	triggers, err := schemaSQL(ctx, tx, `type = 'trigger'`)
	if err != nil {
		return err
	}
	for _, t := range triggers {
		if _, err := tx.ExecContext(ctx, `DROP TRIGGER `+t.name); err != nil {
			return fmt.Errorf("dropping trigger %s: %w", t.name, err)
		}
	}
	indexes, err := schemaSQL(ctx, tx, `type = 'index' AND tbl_name = 'shares'`)
	if err != nil {
		return err
	}
	steps := []string{
		createTable.ReplaceAllString(create, "CREATE TABLE shares_widened ("),
		`INSERT INTO shares_widened SELECT * FROM shares`,
		`DROP TABLE shares`,
		`ALTER TABLE shares_widened RENAME TO shares`,
	}
	for _, ix := range indexes {
		steps = append(steps, ix.sql)
	}
	for _, t := range triggers {
		steps = append(steps, t.sql)
	}
	for _, q := range steps {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", strings.SplitN(q, "\n", 2)[0], err)
		}
	}
	return nil
}
