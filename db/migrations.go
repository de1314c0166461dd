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
	// 3: the provider's answer as it came over the wire, for the raw view.
	`ALTER TABLE runs ADD COLUMN raw_response BLOB NOT NULL DEFAULT x'';`,
	// 4: history: star, note, preset and comparison group of a run; the
	// first lines and metrics the list shows, filled from the spec and
	// result as the run goes (existing runs by summariseRuns); full-text
	// search; share links.
	`
ALTER TABLE runs ADD COLUMN starred INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN preset_id INTEGER;
ALTER TABLE runs ADD COLUMN group_id INTEGER;
ALTER TABLE runs ADD COLUMN prompt_line TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN output_line TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN ttft_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN tokens_per_sec REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
CREATE INDEX runs_user_provider ON runs (user_id, provider, id);
CREATE INDEX runs_user_model ON runs (user_id, model, id);
CREATE INDEX runs_user_status ON runs (user_id, status, id);
CREATE INDEX runs_user_starred ON runs (user_id, id) WHERE starred = 1;
CREATE INDEX runs_user_preset ON runs (user_id, preset_id, id) WHERE preset_id IS NOT NULL;
CREATE INDEX runs_user_created ON runs (user_id, created_at);
CREATE INDEX runs_created ON runs (created_at);
CREATE INDEX runs_group ON runs (group_id) WHERE group_id IS NOT NULL;
-- rowid is runs.id. prompt_line and output_line repeat the list's first
-- lines so that snippet() can mark matches in exactly what the list shows.
CREATE VIRTUAL TABLE runs_fts USING fts5 (prompt_line, prompt, output_line, output, tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE shares (
	id         INTEGER PRIMARY KEY,
	token      TEXT NOT NULL UNIQUE,
	kind       TEXT NOT NULL CHECK (kind IN ('run', 'group')),
	target_id  INTEGER NOT NULL,
	owner_id   INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	audience   TEXT NOT NULL CHECK (audience IN ('team', 'public')),
	created_at INTEGER NOT NULL,
	revoked_at INTEGER
);
CREATE INDEX shares_target ON shares (kind, target_id);
-- However a run goes (removed, purged, its owner removed), it leaves
-- search and its share links stop working.
CREATE TRIGGER runs_forget AFTER DELETE ON runs BEGIN
	DELETE FROM runs_fts WHERE rowid = old.id;
	DELETE FROM shares WHERE kind = 'run' AND target_id = old.id;
END;
`,
	// 5: presets and their versions, a default preset per user, preset
	// share links, and the variable values a run was made with. The
	// shares table is rebuilt, as SQLite cannot change a CHECK in place;
	// runs_forget names shares, so it is dropped first and made again.
	// presets.id is AUTOINCREMENT so that runs.preset_id of a removed
	// preset never comes to mean another one.
	`
CREATE TABLE presets (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	owner_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	name         TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
	description  TEXT NOT NULL DEFAULT '',
	tags         TEXT NOT NULL DEFAULT '',
	visibility   TEXT NOT NULL CHECK (visibility IN ('private', 'team')),
	spec         TEXT NOT NULL,
	variables    TEXT NOT NULL DEFAULT '{}',
	version      INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	last_used_at INTEGER
);
CREATE INDEX presets_owner ON presets (owner_id);
CREATE INDEX presets_team ON presets (visibility) WHERE visibility = 'team';
CREATE TABLE preset_versions (
	preset_id   INTEGER NOT NULL REFERENCES presets (id) ON DELETE CASCADE,
	version     INTEGER NOT NULL,
	name        TEXT NOT NULL,
	description TEXT NOT NULL,
	tags        TEXT NOT NULL,
	spec        TEXT NOT NULL,
	variables   TEXT NOT NULL,
	saved_at    INTEGER NOT NULL,
	saved_by    INTEGER REFERENCES users (id) ON DELETE SET NULL,
	PRIMARY KEY (preset_id, version)
) WITHOUT ROWID;
CREATE TABLE user_defaults (
	user_id   INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
	preset_id INTEGER NOT NULL REFERENCES presets (id) ON DELETE CASCADE
);
CREATE INDEX user_defaults_preset ON user_defaults (preset_id);
ALTER TABLE runs ADD COLUMN variables TEXT NOT NULL DEFAULT '';

DROP TRIGGER runs_forget;
CREATE TABLE shares_new (
	id         INTEGER PRIMARY KEY,
	token      TEXT NOT NULL UNIQUE,
	kind       TEXT NOT NULL CHECK (kind IN ('run', 'group', 'preset')),
	target_id  INTEGER NOT NULL,
	owner_id   INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	audience   TEXT NOT NULL CHECK (audience IN ('team', 'public')),
	created_at INTEGER NOT NULL,
	revoked_at INTEGER
);
INSERT INTO shares_new (id, token, kind, target_id, owner_id, audience, created_at, revoked_at)
	SELECT id, token, kind, target_id, owner_id, audience, created_at, revoked_at FROM shares;
DROP TABLE shares;
ALTER TABLE shares_new RENAME TO shares;
CREATE INDEX shares_target ON shares (kind, target_id);
CREATE TRIGGER runs_forget AFTER DELETE ON runs BEGIN
	DELETE FROM runs_fts WHERE rowid = old.id;
	DELETE FROM shares WHERE kind = 'run' AND target_id = old.id;
END;
-- However a preset goes (removed, its owner removed), its share links
-- stop working; its versions and the defaults naming it go by cascade.
CREATE TRIGGER presets_forget AFTER DELETE ON presets BEGIN
	DELETE FROM shares WHERE kind = 'preset' AND target_id = old.id;
END;
`,
	// 6: comparison groups: who owns each, its title and its pane specs;
	// each run's pane in its group; and the time of each event of a run,
	// for replay at the recorded pace. groups.id is AUTOINCREMENT so that
	// runs.group_id of a removed group never comes to mean another one.
	`
CREATE TABLE groups (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	owner_id   INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	title      TEXT NOT NULL DEFAULT '',
	panes      TEXT NOT NULL DEFAULT '[]',
	created_at INTEGER NOT NULL
);
CREATE INDEX groups_owner ON groups (owner_id, id DESC);
ALTER TABLE runs ADD COLUMN pane INTEGER;
ALTER TABLE runs ADD COLUMN event_times BLOB NOT NULL DEFAULT x'';
-- However a group goes (its owner removed), its share links stop working.
CREATE TRIGGER groups_forget AFTER DELETE ON groups BEGIN
	DELETE FROM shares WHERE kind = 'group' AND target_id = old.id;
END;
`,
	// 7: a filter on provider and model together that matches few runs
	// walks this index instead of every run of the provider.
	`CREATE INDEX runs_user_provider_model ON runs (user_id, provider, model, id);`,
	// 8: ids are never reused: users, runs, shares and invites are rebuilt
	// with AUTOINCREMENT (by rebuildAutoincrement), so that a removed
	// member's cookie or live run can never come to name a newcomer's
	// account or run. Sessions live on the server, so that removing,
	// demoting or a password change ends them all, and a copied cookie
	// dies at sign-out. One-time password reset links made by an admin.
	// The search index is keyed by owner (see ftsRowid), so that a search
	// reads only the searcher's part of it.
	`
CREATE TABLE sessions (
	id_hash    BLOB PRIMARY KEY,
	user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at INTEGER NOT NULL,
	seen_at    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id);
CREATE TABLE password_resets (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	token_hash BLOB NOT NULL UNIQUE,
	user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_by INTEGER REFERENCES users (id) ON DELETE SET NULL,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	used_at    INTEGER
);
CREATE INDEX password_resets_user ON password_resets (user_id);
`,
	// 9: a run's stream is stored as it goes, in chunks appended at each
	// checkpoint (the frames since the last one and when each was sent),
	// so that a long run costs storage work in proportion to its length
	// and its end writes only its last chunk and its small final state.
	// What is big and written once (the request as sent, the provider's
	// raw answer) has its own table. Runs stored before move over here.
	`
CREATE TABLE run_chunks (
	id       INTEGER PRIMARY KEY,
	run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	first    INTEGER NOT NULL,
	frames   BLOB NOT NULL,
	times    BLOB NOT NULL
);
CREATE UNIQUE INDEX run_chunks_run ON run_chunks (run_id, first);
CREATE TABLE run_raw (
	run_id   INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	request  TEXT NOT NULL DEFAULT '',
	response BLOB NOT NULL DEFAULT x''
);
INSERT INTO run_chunks (run_id, first, frames, times)
	SELECT id, 1, events, event_times FROM runs WHERE length(events) > 0;
INSERT INTO run_raw (run_id, request, response)
	SELECT id, raw_request, raw_response FROM runs WHERE raw_request != '' OR length(raw_response) > 0;
UPDATE runs SET events = x'', event_times = x'', raw_response = x'', raw_request = ''
	WHERE length(events) > 0 OR length(event_times) > 0 OR length(raw_response) > 0 OR raw_request != '';
`,
	// 10: personal API tokens. Only a SHA-256 hash of a token is stored
	// (a token has 256 random bits, so a fast hash is enough), with its
	// first characters to tell tokens apart in a list. ids are
	// AUTOINCREMENT, never reused, so a revoked token's id never names
	// another. A token goes with its user.
	`
CREATE TABLE api_tokens (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	name         TEXT NOT NULL,
	scope        TEXT NOT NULL CHECK (scope IN ('read', 'write')),
	prefix       TEXT NOT NULL,
	hash         BLOB NOT NULL,
	created_at   INTEGER NOT NULL,
	expires_at   INTEGER,
	last_used_at INTEGER,
	revoked_at   INTEGER
);
CREATE UNIQUE INDEX api_tokens_hash ON api_tokens (hash);
CREATE INDEX api_tokens_user ON api_tokens (user_id, id);
`,
	// 11: labels on preset versions ("production", "staging") that apps
	// fetch a preset by, and every move of one, kept as its history. A
	// label names a version of its preset; a protected label is moved by
	// the preset's owner or an admin only. Moves' ids are AUTOINCREMENT,
	// never reused; both go with their preset.
	`
CREATE TABLE preset_labels (
	preset_id INTEGER NOT NULL,
	name      TEXT NOT NULL,
	version   INTEGER NOT NULL,
	protected INTEGER NOT NULL DEFAULT 0,
	moved_at  INTEGER NOT NULL,
	moved_by  INTEGER REFERENCES users (id) ON DELETE SET NULL,
	PRIMARY KEY (preset_id, name),
	FOREIGN KEY (preset_id) REFERENCES presets (id) ON DELETE CASCADE,
	FOREIGN KEY (preset_id, version) REFERENCES preset_versions (preset_id, version) ON DELETE CASCADE
);
CREATE TABLE preset_label_moves (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	preset_id    INTEGER NOT NULL REFERENCES presets (id) ON DELETE CASCADE,
	label        TEXT NOT NULL,
	from_version INTEGER,
	to_version   INTEGER,
	protected    INTEGER NOT NULL,
	moved_at     INTEGER NOT NULL,
	moved_by     INTEGER REFERENCES users (id) ON DELETE SET NULL
);
CREATE INDEX preset_label_moves_preset ON preset_label_moves (preset_id, id);
`,
	// 12: datasets, tables of rows that experiments run a preset over.
	// A dataset is versioned without copying: a row's content is never
	// changed, an edit ends it (removed_in) and adds its new content
	// (added_in) under the same key, so a version is the rows added at
	// or before it and not removed by it, and an experiment that names a
	// version names exactly the rows it ran on. Ids are AUTOINCREMENT,
	// never reused; everything goes with its dataset.
	`
CREATE TABLE datasets (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	owner_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	name        TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	visibility  TEXT NOT NULL CHECK (visibility IN ('private', 'team')),
	version     INTEGER NOT NULL,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
);
CREATE INDEX datasets_owner ON datasets (owner_id);
CREATE TABLE dataset_versions (
	dataset_id INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
	version    INTEGER NOT NULL,
	columns    TEXT NOT NULL,
	row_count  INTEGER NOT NULL,
	note       TEXT NOT NULL DEFAULT '',
	saved_at   INTEGER NOT NULL,
	saved_by   INTEGER REFERENCES users (id) ON DELETE SET NULL,
	PRIMARY KEY (dataset_id, version)
) WITHOUT ROWID;
CREATE TABLE dataset_rows (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	dataset_id INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
	key        INTEGER NOT NULL,
	pos        INTEGER NOT NULL,
	vars       TEXT NOT NULL,
	expected   TEXT,
	tags       TEXT NOT NULL DEFAULT '',
	added_in   INTEGER NOT NULL,
	removed_in INTEGER
);
CREATE INDEX dataset_rows_order ON dataset_rows (dataset_id, pos, added_in);
CREATE INDEX dataset_rows_key ON dataset_rows (dataset_id, key);
`,
	// 13: experiments, a preset or setup run over a dataset's rows,
	// variants x rows x repeats, each cell a run graded by the
	// experiment's graders and rated by people. A cell keeps the row's
	// values as it ran them, so a dataset edited or removed later leaves
	// the results whole; a run made for a cell names its experiment.
	`
CREATE TABLE experiments (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	owner_id        INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	name            TEXT NOT NULL,
	visibility      TEXT NOT NULL CHECK (visibility IN ('private', 'team')),
	dataset_id      INTEGER REFERENCES datasets (id) ON DELETE SET NULL,
	dataset_version INTEGER NOT NULL,
	dataset_name    TEXT NOT NULL,
	repeats         INTEGER NOT NULL,
	concurrency     INTEGER NOT NULL,
	graders         TEXT NOT NULL,
	status          TEXT NOT NULL CHECK (status IN ('running', 'done', 'cancelled', 'error')),
	error           TEXT NOT NULL DEFAULT '',
	created_at      INTEGER NOT NULL,
	finished_at     INTEGER
);
CREATE INDEX experiments_owner ON experiments (owner_id, id DESC);
CREATE INDEX experiments_running ON experiments (status) WHERE status = 'running';
CREATE TABLE experiment_variants (
	experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
	idx           INTEGER NOT NULL,
	name          TEXT NOT NULL,
	spec          TEXT NOT NULL,
	variables     TEXT NOT NULL DEFAULT '',
	preset_id     INTEGER,
	preset_version INTEGER,
	preset_label  TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (experiment_id, idx)
) WITHOUT ROWID;
CREATE TABLE experiment_cells (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
	variant       INTEGER NOT NULL,
	row_idx       INTEGER NOT NULL,
	row_key       INTEGER NOT NULL,
	repeat        INTEGER NOT NULL,
	vars          TEXT NOT NULL,
	expected      TEXT,
	tags          TEXT NOT NULL DEFAULT '',
	status        TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'error', 'cancelled')),
	run_id        INTEGER,
	attempts      INTEGER NOT NULL DEFAULT 0,
	output        TEXT NOT NULL DEFAULT '',
	finish_reason TEXT NOT NULL DEFAULT '',
	latency_ms    REAL NOT NULL DEFAULT 0,
	ttft_ms       REAL NOT NULL DEFAULT 0,
	tokens        INTEGER NOT NULL DEFAULT 0,
	cost_usd      REAL NOT NULL DEFAULT 0,
	cost_known    INTEGER NOT NULL DEFAULT 0,
	error         TEXT NOT NULL DEFAULT '',
	finished_at   INTEGER,
	UNIQUE (experiment_id, variant, row_idx, repeat)
);
CREATE INDEX experiment_cells_pending ON experiment_cells (experiment_id, status);
CREATE INDEX experiment_cells_grid ON experiment_cells (experiment_id, row_idx, variant, repeat);
CREATE TABLE experiment_grades (
	cell_id      INTEGER NOT NULL REFERENCES experiment_cells (id) ON DELETE CASCADE,
	grader       INTEGER NOT NULL,
	pass         INTEGER NOT NULL,
	score        REAL NOT NULL,
	reason       TEXT NOT NULL,
	error        TEXT NOT NULL DEFAULT '',
	judge_run_id INTEGER,
	PRIMARY KEY (cell_id, grader)
) WITHOUT ROWID;
CREATE TABLE experiment_ratings (
	cell_id  INTEGER NOT NULL REFERENCES experiment_cells (id) ON DELETE CASCADE,
	user_id  INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	thumbs   INTEGER,
	stars    INTEGER,
	note     TEXT NOT NULL DEFAULT '',
	rated_at INTEGER NOT NULL,
	PRIMARY KEY (cell_id, user_id)
) WITHOUT ROWID;
ALTER TABLE runs ADD COLUMN experiment_id INTEGER;
CREATE INDEX runs_experiment ON runs (experiment_id) WHERE experiment_id IS NOT NULL;
`,
	// 14: an experiment, and an arena's results, can be shared read-only
	// as runs, comparisons and presets are: the shares table takes the
	// kinds 'experiment' and 'arena' (widenShareKinds rewrites its CHECK,
	// which SQLite cannot alter), and their links go with them.
	`
CREATE TRIGGER experiments_forget AFTER DELETE ON experiments BEGIN
	DELETE FROM shares WHERE kind = 'experiment' AND target_id = old.id;
END;
`,
	// 15: arenas, blind head-to-head votes between contestants (presets
	// or setups) on prompts (a dataset's rows, a list, or the voters'
	// own), through a link (/a/{token}) that is revoked by revoked_at.
	// Answers are generated ahead (or live, within a budget); a pair is
	// issued to a voter, who votes on it once: the unique index on the
	// unordered pair makes a second vote on the same prompt and pair
	// impossible. Ids are AUTOINCREMENT; everything goes with its arena.
	`
CREATE TABLE arenas (
	id                  INTEGER PRIMARY KEY AUTOINCREMENT,
	owner_id            INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	name                TEXT NOT NULL,
	token               TEXT NOT NULL UNIQUE,
	audience            TEXT NOT NULL CHECK (audience IN ('team', 'public')),
	mode                TEXT NOT NULL CHECK (mode IN ('pregenerated', 'live')),
	show_streaming      INTEGER NOT NULL DEFAULT 0,
	prompts_kind        TEXT NOT NULL CHECK (prompts_kind IN ('dataset', 'list', 'open')),
	dataset_id          INTEGER REFERENCES datasets (id) ON DELETE SET NULL,
	dataset_version     INTEGER NOT NULL DEFAULT 0,
	budget_usd          REAL,
	budget_calls        INTEGER,
	spent_usd           REAL NOT NULL DEFAULT 0,
	calls               INTEGER NOT NULL DEFAULT 0,
	max_votes_per_voter INTEGER,
	ends_at             INTEGER,
	mask_terms          TEXT NOT NULL DEFAULT '[]',
	status              TEXT NOT NULL CHECK (status IN ('preparing', 'ready', 'error')),
	error               TEXT NOT NULL DEFAULT '',
	revoked_at          INTEGER,
	created_at          INTEGER NOT NULL
);
CREATE INDEX arenas_owner ON arenas (owner_id, id DESC);
CREATE TABLE arena_contestants (
	arena_id       INTEGER NOT NULL REFERENCES arenas (id) ON DELETE CASCADE,
	idx            INTEGER NOT NULL,
	name           TEXT NOT NULL,
	spec           TEXT NOT NULL,
	variables      TEXT NOT NULL DEFAULT '',
	preset_id      INTEGER,
	preset_version INTEGER NOT NULL DEFAULT 0,
	preset_label   TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (arena_id, idx)
) WITHOUT ROWID;
CREATE TABLE arena_prompts (
	arena_id   INTEGER NOT NULL REFERENCES arenas (id) ON DELETE CASCADE,
	idx        INTEGER NOT NULL,
	text       TEXT NOT NULL,
	vars       TEXT NOT NULL DEFAULT '',
	voter_id   TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	PRIMARY KEY (arena_id, idx)
) WITHOUT ROWID;
CREATE TABLE arena_answers (
	arena_id   INTEGER NOT NULL REFERENCES arenas (id) ON DELETE CASCADE,
	prompt_idx INTEGER NOT NULL,
	contestant INTEGER NOT NULL,
	status     TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'error')),
	run_id     INTEGER,
	text       TEXT NOT NULL DEFAULT '',
	error      TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (arena_id, prompt_idx, contestant)
) WITHOUT ROWID;
CREATE TABLE arena_voters (
	arena_id   INTEGER NOT NULL REFERENCES arenas (id) ON DELETE CASCADE,
	id         TEXT NOT NULL,
	user_id    INTEGER REFERENCES users (id) ON DELETE SET NULL,
	name       TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	PRIMARY KEY (arena_id, id)
) WITHOUT ROWID;
CREATE TABLE arena_pairs (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	arena_id   INTEGER NOT NULL REFERENCES arenas (id) ON DELETE CASCADE,
	voter_id   TEXT NOT NULL,
	prompt_idx INTEGER NOT NULL,
	a          INTEGER NOT NULL,
	b          INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	voted_at   INTEGER,
	choice     TEXT CHECK (choice IN ('a', 'b', 'tie', 'both_bad')),
	reason     TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX arena_pairs_once ON arena_pairs (arena_id, voter_id, prompt_idx, min(a, b), max(a, b));
CREATE UNIQUE INDEX arena_pairs_open ON arena_pairs (arena_id, voter_id) WHERE voted_at IS NULL;
CREATE TRIGGER arenas_forget AFTER DELETE ON arenas BEGIN
	DELETE FROM shares WHERE kind = 'arena' AND target_id = old.id;
END;
CREATE INDEX arena_pairs_votes ON arena_pairs (arena_id, voted_at) WHERE voted_at IS NOT NULL;
`,
	// single sign-on: the verified email of an account, the provider
	// identities (issuer, subject) that sign in to it, and the identities
	// of removed accounts, which sign-on does not make an account for
	// again without an invite. The trigger keeps them whatever removes
	// the account; a rebuild of users must create it again.
	`
ALTER TABLE users ADD COLUMN email TEXT COLLATE NOCASE;
CREATE UNIQUE INDEX users_email ON users (email) WHERE email IS NOT NULL;
CREATE TABLE user_identities (
	issuer       TEXT NOT NULL,
	subject      TEXT NOT NULL,
	user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	email        TEXT NOT NULL COLLATE NOCASE,
	created_at   INTEGER NOT NULL,
	last_used_at INTEGER NOT NULL,
	PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_user ON user_identities (user_id);
CREATE TABLE removed_identities (
	issuer     TEXT NOT NULL,
	subject    TEXT NOT NULL,
	email      TEXT NOT NULL COLLATE NOCASE,
	removed_at INTEGER NOT NULL,
	PRIMARY KEY (issuer, subject)
);
CREATE INDEX removed_identities_email ON removed_identities (email);
CREATE TRIGGER users_remember_identities BEFORE DELETE ON users BEGIN
	INSERT OR REPLACE INTO removed_identities (issuer, subject, email, removed_at)
	SELECT issuer, subject, email, unixepoch() FROM user_identities WHERE user_id = old.id;
END;
`,
	// budgets: the monthly caps an admin sets. One row of team-wide
	// settings (a NULL cap is no cap), a user's override and exemption,
	// and a cap per provider. A removed user's row goes with them.
	`
CREATE TABLE budget (
	id               INTEGER PRIMARY KEY CHECK (id = 1),
	team_usd         REAL CHECK (team_usd >= 0),
	user_default_usd REAL CHECK (user_default_usd >= 0),
	warn_at          REAL NOT NULL DEFAULT 0.8 CHECK (warn_at > 0 AND warn_at <= 1),
	token_cap        INTEGER CHECK (token_cap >= 0),
	updated_at       INTEGER NOT NULL DEFAULT 0
);
INSERT INTO budget (id) VALUES (1);
CREATE TABLE budget_users (
	user_id INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
	usd     REAL CHECK (usd >= 0),
	exempt  INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE budget_providers (
	provider TEXT PRIMARY KEY,
	usd      REAL NOT NULL CHECK (usd >= 0)
);
`,
	// 18: usage and cost. An admin's price per model (USD per million
	// tokens), over the provider's listing; a run keeps the tokens it
	// used and the price it was costed at, so that a later price change
	// leaves its cost alone; the usage_daily tables roll finished runs
	// up by UTC day and by user and model, by model alone, by user alone,
	// and by preset, experiment or arena, in the transaction that
	// finishes the run (several small roll-ups rather than one keyed by
	// everything, so that a year of a million runs is a few thousand rows
	// for an admin's view of the team: BENCHMARKS.md). They have no
	// foreign keys on purpose: spend stays when runs, their owners,
	// presets, experiments or arenas are deleted, as the bill does
	// (finished runs already stored are rolled up by backfillUsage).
	`
CREATE TABLE model_prices (
	provider     TEXT NOT NULL,
	model        TEXT NOT NULL,
	input        REAL NOT NULL,
	output       REAL NOT NULL,
	cached_input REAL NOT NULL,
	reasoning    REAL NOT NULL,
	set_at       INTEGER NOT NULL,
	set_by       INTEGER REFERENCES users (id) ON DELETE SET NULL,
	PRIMARY KEY (provider, model)
) WITHOUT ROWID;
ALTER TABLE runs ADD COLUMN arena_id INTEGER;
ALTER TABLE runs ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN priced INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN price_input REAL;
ALTER TABLE runs ADD COLUMN price_output REAL;
ALTER TABLE runs ADD COLUMN price_cached REAL;
ALTER TABLE runs ADD COLUMN price_reasoning REAL;
CREATE TABLE usage_daily (
	day              INTEGER NOT NULL,
	user_id          INTEGER NOT NULL,
	provider         TEXT NOT NULL,
	model            TEXT NOT NULL,
	calls            INTEGER NOT NULL DEFAULT 0,
	errors           INTEGER NOT NULL DEFAULT 0,
	input_tokens     INTEGER NOT NULL DEFAULT 0,
	output_tokens    INTEGER NOT NULL DEFAULT 0,
	cached_tokens    INTEGER NOT NULL DEFAULT 0,
	reasoning_tokens INTEGER NOT NULL DEFAULT 0,
	cost_usd         REAL NOT NULL DEFAULT 0,
	unpriced_calls   INTEGER NOT NULL DEFAULT 0,
	unpriced_tokens  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (day, user_id, provider, model)
) WITHOUT ROWID;
CREATE INDEX usage_daily_user_day ON usage_daily (user_id, day);
-- The same figures for everyone, by model and by user: what an admin's
-- view of the whole team reads.
CREATE TABLE usage_daily_team (
	day              INTEGER NOT NULL,
	provider         TEXT NOT NULL,
	model            TEXT NOT NULL,
	calls            INTEGER NOT NULL DEFAULT 0,
	errors           INTEGER NOT NULL DEFAULT 0,
	input_tokens     INTEGER NOT NULL DEFAULT 0,
	output_tokens    INTEGER NOT NULL DEFAULT 0,
	cached_tokens    INTEGER NOT NULL DEFAULT 0,
	reasoning_tokens INTEGER NOT NULL DEFAULT 0,
	cost_usd         REAL NOT NULL DEFAULT 0,
	unpriced_calls   INTEGER NOT NULL DEFAULT 0,
	unpriced_tokens  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (day, provider, model)
) WITHOUT ROWID;
CREATE TABLE usage_daily_user (
	day              INTEGER NOT NULL,
	user_id          INTEGER NOT NULL,
	calls            INTEGER NOT NULL DEFAULT 0,
	errors           INTEGER NOT NULL DEFAULT 0,
	input_tokens     INTEGER NOT NULL DEFAULT 0,
	output_tokens    INTEGER NOT NULL DEFAULT 0,
	cached_tokens    INTEGER NOT NULL DEFAULT 0,
	reasoning_tokens INTEGER NOT NULL DEFAULT 0,
	cost_usd         REAL NOT NULL DEFAULT 0,
	unpriced_calls   INTEGER NOT NULL DEFAULT 0,
	unpriced_tokens  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (day, user_id)
) WITHOUT ROWID;
-- And for the runs made from a preset, for an experiment or in an arena,
-- by that id (ref_id): a run is here once per kind it has.
CREATE TABLE usage_daily_by (
	kind             TEXT NOT NULL CHECK (kind IN ('preset', 'experiment', 'arena')),
	day              INTEGER NOT NULL,
	user_id          INTEGER NOT NULL,
	ref_id           INTEGER NOT NULL,
	calls            INTEGER NOT NULL DEFAULT 0,
	errors           INTEGER NOT NULL DEFAULT 0,
	input_tokens     INTEGER NOT NULL DEFAULT 0,
	output_tokens    INTEGER NOT NULL DEFAULT 0,
	cached_tokens    INTEGER NOT NULL DEFAULT 0,
	reasoning_tokens INTEGER NOT NULL DEFAULT 0,
	cost_usd         REAL NOT NULL DEFAULT 0,
	unpriced_calls   INTEGER NOT NULL DEFAULT 0,
	unpriced_tokens  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (kind, day, user_id, ref_id)
) WITHOUT ROWID;
CREATE INDEX usage_daily_by_user ON usage_daily_by (kind, user_id, day);
`,
	// listed prices: a model's price as its provider's own listing gave
	// it, kept so that a restart prices runs as the listing last did.
	`
CREATE TABLE listed_prices (
	provider     TEXT NOT NULL,
	model        TEXT NOT NULL,
	input        REAL NOT NULL,
	output       REAL NOT NULL,
	cached_input REAL NOT NULL,
	reasoning    REAL NOT NULL,
	read_at      INTEGER NOT NULL,
	PRIMARY KEY (provider, model)
) WITHOUT ROWID;
`,
}

// afterMigration holds the steps, in Go, that complete a migration in
// its transaction, by the schema version the migration brings.
var afterMigration = map[int]func(context.Context, *sql.Tx) error{
	14: widenShareKinds,
	18: backfillUsage,
	4:  summariseRuns,
	8: func(ctx context.Context, tx *sql.Tx) error {
		if err := rebuildAutoincrement(ctx, tx, "users", "runs", "shares", "invites"); err != nil {
			return err
		}
		return rekeySearch(ctx, tx)
	},
}

// SchemaVersion is the version a database has once Open returns.
func SchemaVersion() int { return len(migrations) }

func (s *Store) migrate(ctx context.Context) error {
	return s.migrateTo(ctx, len(migrations))
}

// migrateTo brings the schema up to version to; tests use it to build a
// database as an older Knobs left it.
//
// Foreign keys are off while migrations run, as SQLite's rebuild of a
// table needs (a DROP TABLE would otherwise cascade into every table
// that references it), and every reference is checked before commit.
// The writer has one connection, so the pragma applies to the
// transaction below.
func (s *Store) migrateTo(ctx context.Context, to int) (err error) {
	if _, err := s.w.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return fmt.Errorf("db: unable to turn foreign keys off to migrate: %w", err)
	}
	defer func() {
		if _, ferr := s.w.ExecContext(context.Background(), `PRAGMA foreign_keys = ON`); ferr != nil && err == nil {
			err = fmt.Errorf("db: unable to turn foreign keys back on: %w", ferr)
		}
	}()
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
		if v >= to {
			return nil
		}
		for i := v; i < to; i++ {
			if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
				return fmt.Errorf("db: unable to apply migration %d: %w", i+1, err)
			}
			if after := afterMigration[i+1]; after != nil {
				if err := after(ctx, tx); err != nil {
					return fmt.Errorf("db: unable to complete migration %d: %w", i+1, err)
				}
			}
		}
		if err := checkForeignKeys(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, to); err != nil {
			return fmt.Errorf("db: unable to record schema version: %w", err)
		}
		return nil
	})
}

// checkForeignKeys fails when any row references one that does not exist.
func checkForeignKeys(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return fmt.Errorf("db: unable to check foreign keys: %w", err)
	}
	defer rows.Close()
	if rows.Next() {
		var table string
		var rowid sql.NullInt64
		var parent string
		var fkid int64
		if err := rows.Scan(&table, &rowid, &parent, &fkid); err != nil {
			return fmt.Errorf("db: unable to check foreign keys: %w", err)
		}
		return fmt.Errorf("db: migration left row %d of %s referencing a missing %s", rowid.Int64, table, parent)
	}
	return rows.Err()
}
