package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Experiment statuses.
const (
	ExperimentRunning   = "running"
	ExperimentDone      = "done"
	ExperimentCancelled = "cancelled"
	ExperimentError     = "error"
)

// Cell statuses.
const (
	CellPending   = "pending"
	CellRunning   = "running"
	CellDone      = "done"
	CellError     = "error"
	CellCancelled = "cancelled"
)

// Experiment is a run of variants over the rows of a dataset version,
// each row Repeats times.
type Experiment struct {
	ID             int64
	OwnerID        int64
	OwnerName      string // loaded, never written
	Name           string
	Visibility     string // PresetPrivate or PresetTeam
	DatasetID      int64  // 0 once the dataset is removed
	DatasetVersion int
	DatasetName    string // as it was when the experiment was made
	Repeats        int
	Concurrency    int
	Graders        string // a JSON array of grader specs
	Status         string
	Error          string
	CreatedAt      time.Time
	FinishedAt     time.Time // zero while running
	// Counts of its cells, loaded.
	Total, Finished, Failed int
}

// ExperimentVariant is one setup an experiment runs every row with.
type ExperimentVariant struct {
	Index         int
	Name          string
	Spec          string // a RunSpec JSON, with {{placeholders}}
	Variables     string // JSON object of default values; "" when none
	PresetID      int64
	PresetVersion int
	PresetLabel   string
}

// Cell is one variant run on one row, once (of Repeats).
type Cell struct {
	ID           int64
	ExperimentID int64
	Variant      int
	Row          int   // the row's place in the dataset version, from 0
	RowKey       int64 // the row's key in its dataset
	Repeat       int
	Vars         map[string]string
	Expected     *string
	Tags         []string
	Status       string
	RunID        int64
	Attempts     int
	Output       string
	FinishReason string
	LatencyMs    float64
	TTFTMs       float64
	Tokens       int
	CostUSD      float64
	CostKnown    bool
	Error        string
	Grades       []CellGrade  // loaded by ExperimentCells
	Ratings      []CellRating // loaded by ExperimentCells
	FinishedAt   time.Time    // zero until it ends
}

// CellGrade is one grader's verdict on a cell.
type CellGrade struct {
	Grader     int // its place in the experiment's graders
	Pass       bool
	Score      float64
	Reason     string
	Error      string // the grader could not grade: not a pass, not a fail
	JudgeRunID int64  // the judge's own run; 0 for other graders
}

// CellRating is a person's rating of a cell: thumbs up or down, or 1 to
// 5 stars, and a note.
type CellRating struct {
	UserID   int64
	Username string // loaded
	Thumbs   *bool
	Stars    int // 0: none
	Note     string
	At       time.Time
}

const experimentColumns = `e.id, e.owner_id, u.username, e.name, e.visibility, ifnull(e.dataset_id, 0), e.dataset_version, e.dataset_name,
	e.repeats, e.concurrency, e.graders, e.status, e.error, e.created_at, ifnull(e.finished_at, 0),
	(SELECT count(*) FROM experiment_cells c WHERE c.experiment_id = e.id),
	(SELECT count(*) FROM experiment_cells c WHERE c.experiment_id = e.id AND c.status IN ('done', 'error', 'cancelled')),
	(SELECT count(*) FROM experiment_cells c WHERE c.experiment_id = e.id AND c.status = 'error')`

const experimentVisible = `(e.owner_id = ?1 OR e.visibility = 'team')`

func scanExperiment(row interface{ Scan(...any) error }) (Experiment, error) {
	var e Experiment
	var created, finished int64
	err := row.Scan(&e.ID, &e.OwnerID, &e.OwnerName, &e.Name, &e.Visibility, &e.DatasetID, &e.DatasetVersion, &e.DatasetName,
		&e.Repeats, &e.Concurrency, &e.Graders, &e.Status, &e.Error, &created, &finished, &e.Total, &e.Finished, &e.Failed)
	e.CreatedAt = time.UnixMilli(created)
	if finished != 0 {
		e.FinishedAt = time.UnixMilli(finished)
	}
	return e, err
}

// CreateExperiment stores an experiment with its variants and its
// cells, all pending, at once or not at all.
func (s *Store) CreateExperiment(ctx context.Context, e Experiment, variants []ExperimentVariant, cells []Cell) (Experiment, error) {
	if e.Visibility == "" {
		e.Visibility = PresetPrivate
	}
	now := time.Now()
	var out Experiment
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `
INSERT INTO experiments (owner_id, name, visibility, dataset_id, dataset_version, dataset_name, repeats, concurrency, graders, status, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?) RETURNING id`,
			e.OwnerID, e.Name, e.Visibility, nullID(e.DatasetID), e.DatasetVersion, e.DatasetName, e.Repeats, e.Concurrency, e.Graders,
			now.UnixMilli()).Scan(&e.ID)
		if err != nil {
			return err
		}
		for _, v := range variants {
			if _, err := tx.ExecContext(ctx, `
INSERT INTO experiment_variants (experiment_id, idx, name, spec, variables, preset_id, preset_version, preset_label) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				e.ID, v.Index, v.Name, v.Spec, v.Variables, nullID(v.PresetID), v.PresetVersion, v.PresetLabel); err != nil {
				return err
			}
		}
		stmt, err := tx.PrepareContext(ctx, `
INSERT INTO experiment_cells (experiment_id, variant, row_idx, row_key, repeat, vars, expected, tags, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending')`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, c := range cells {
			vars, err := json.Marshal(c.Vars)
			if err != nil {
				return err
			}
			if _, err := stmt.ExecContext(ctx, e.ID, c.Variant, c.Row, c.RowKey, c.Repeat, string(vars), c.Expected, strings.Join(c.Tags, ",")); err != nil {
				return err
			}
		}
		out, err = scanExperiment(tx.QueryRowContext(ctx, `SELECT `+experimentColumns+` FROM experiments e JOIN users u ON u.id = e.owner_id
WHERE e.id = ?`, e.ID))
		return err
	})
	if err != nil {
		return Experiment{}, fmt.Errorf("db: unable to create experiment: %w", err)
	}
	return out, nil
}

// Experiment loads an experiment viewer sees.
func (s *Store) Experiment(ctx context.Context, viewer, id int64) (Experiment, error) {
	e, err := scanExperiment(s.r.QueryRowContext(ctx, `SELECT `+experimentColumns+` FROM experiments e JOIN users u ON u.id = e.owner_id
WHERE e.id = ?2 AND `+experimentVisible, viewer, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Experiment{}, ErrNotFound
	}
	if err != nil {
		return Experiment{}, fmt.Errorf("db: unable to load experiment %d: %w", id, err)
	}
	return e, nil
}

// Experiments lists the experiments viewer sees, newest first, at most
// limit of them with ids below before (0: from the newest).
func (s *Store) Experiments(ctx context.Context, viewer, before int64, limit int) ([]Experiment, error) {
	if before <= 0 {
		before = 1 << 62
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+experimentColumns+` FROM experiments e JOIN users u ON u.id = e.owner_id
WHERE `+experimentVisible+` AND e.id < ?2 ORDER BY e.id DESC LIMIT ?3`, viewer, before, limit)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list experiments: %w", err)
	}
	defer rows.Close()
	var out []Experiment
	for rows.Next() {
		e, err := scanExperiment(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to list experiments: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// RunningExperiments lists every experiment left running, oldest first:
// a start of Knobs resumes them.
func (s *Store) RunningExperiments(ctx context.Context) ([]Experiment, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+experimentColumns+` FROM experiments e JOIN users u ON u.id = e.owner_id
WHERE e.status = 'running' ORDER BY e.id`)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list running experiments: %w", err)
	}
	defer rows.Close()
	var out []Experiment
	for rows.Next() {
		e, err := scanExperiment(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to list running experiments: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// ExperimentVariants loads the variants of an experiment, in order; the
// caller has checked that the experiment is seen.
func (s *Store) ExperimentVariants(ctx context.Context, id int64) ([]ExperimentVariant, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT idx, name, spec, variables, ifnull(preset_id, 0), ifnull(preset_version, 0), preset_label
FROM experiment_variants WHERE experiment_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, fmt.Errorf("db: unable to load the variants of experiment %d: %w", id, err)
	}
	defer rows.Close()
	var out []ExperimentVariant
	for rows.Next() {
		var v ExperimentVariant
		if err := rows.Scan(&v.Index, &v.Name, &v.Spec, &v.Variables, &v.PresetID, &v.PresetVersion, &v.PresetLabel); err != nil {
			return nil, fmt.Errorf("db: unable to load the variants of experiment %d: %w", id, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

const cellColumns = `c.id, c.experiment_id, c.variant, c.row_idx, c.row_key, c.repeat, c.vars, c.expected, c.tags, c.status,
	ifnull(c.run_id, 0), c.attempts, c.output, c.finish_reason, c.latency_ms, c.ttft_ms, c.tokens, c.cost_usd, c.cost_known, c.error,
	ifnull(c.finished_at, 0)`

func scanCell(row interface{ Scan(...any) error }) (Cell, error) {
	var c Cell
	var vars, tags string
	var expected sql.NullString
	var finished int64
	err := row.Scan(&c.ID, &c.ExperimentID, &c.Variant, &c.Row, &c.RowKey, &c.Repeat, &vars, &expected, &tags, &c.Status,
		&c.RunID, &c.Attempts, &c.Output, &c.FinishReason, &c.LatencyMs, &c.TTFTMs, &c.Tokens, &c.CostUSD, &c.CostKnown, &c.Error, &finished)
	_ = json.Unmarshal([]byte(vars), &c.Vars)
	if expected.Valid {
		c.Expected = &expected.String
	}
	c.Tags = splitTags(tags)
	if finished != 0 {
		c.FinishedAt = time.UnixMilli(finished)
	}
	return c, err
}

// UnfinishedCells lists the cells of an experiment that have not ended
// (pending, or running when a restart cut them), in order of row, repeat
// and variant, so that rows fill in one after another.
func (s *Store) UnfinishedCells(ctx context.Context, id int64) ([]Cell, error) {
	return s.queryCells(ctx, `c.experiment_id = ? AND c.status IN ('pending', 'running') ORDER BY c.row_idx, c.repeat, c.variant`, id)
}

func (s *Store) queryCells(ctx context.Context, where string, args ...any) ([]Cell, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+cellColumns+` FROM experiment_cells c WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("db: unable to load cells: %w", err)
	}
	defer rows.Close()
	var out []Cell
	for rows.Next() {
		c, err := scanCell(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to load cells: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ExperimentCells loads the cells of an experiment viewer sees with
// their grades and ratings, in order of row, variant and repeat, at most
// limit from offset.
func (s *Store) ExperimentCells(ctx context.Context, viewer, id int64, offset, limit int) ([]Cell, error) {
	if _, err := s.Experiment(ctx, viewer, id); err != nil {
		return nil, err
	}
	cells, err := s.queryCells(ctx, `c.experiment_id = ? ORDER BY c.row_idx, c.variant, c.repeat LIMIT ? OFFSET ?`, id, limit, offset)
	if err != nil || len(cells) == 0 {
		return cells, err
	}
	byID := make(map[int64]*Cell, len(cells))
	for i := range cells {
		byID[cells[i].ID] = &cells[i]
	}
	first, last := cells[0].ID, cells[0].ID
	for _, c := range cells {
		first, last = min(first, c.ID), max(last, c.ID)
	}
	grades, err := s.r.QueryContext(ctx, `SELECT g.cell_id, g.grader, g.pass, g.score, g.reason, g.error, ifnull(g.judge_run_id, 0)
FROM experiment_grades g JOIN experiment_cells c ON c.id = g.cell_id
WHERE c.experiment_id = ? AND g.cell_id BETWEEN ? AND ? ORDER BY g.cell_id, g.grader`, id, first, last)
	if err != nil {
		return nil, fmt.Errorf("db: unable to load grades: %w", err)
	}
	defer grades.Close()
	for grades.Next() {
		var cell int64
		var g CellGrade
		if err := grades.Scan(&cell, &g.Grader, &g.Pass, &g.Score, &g.Reason, &g.Error, &g.JudgeRunID); err != nil {
			return nil, fmt.Errorf("db: unable to load grades: %w", err)
		}
		if c := byID[cell]; c != nil {
			c.Grades = append(c.Grades, g)
		}
	}
	if err := grades.Err(); err != nil {
		return nil, err
	}
	ratings, err := s.r.QueryContext(ctx, `SELECT r.cell_id, r.user_id, ifnull(u.username, ''), r.thumbs, ifnull(r.stars, 0), r.note, r.rated_at
FROM experiment_ratings r JOIN experiment_cells c ON c.id = r.cell_id LEFT JOIN users u ON u.id = r.user_id
WHERE c.experiment_id = ? AND r.cell_id BETWEEN ? AND ? ORDER BY r.cell_id, r.user_id`, id, first, last)
	if err != nil {
		return nil, fmt.Errorf("db: unable to load ratings: %w", err)
	}
	defer ratings.Close()
	for ratings.Next() {
		var cell int64
		var r CellRating
		var thumbs sql.NullBool
		var at int64
		if err := ratings.Scan(&cell, &r.UserID, &r.Username, &thumbs, &r.Stars, &r.Note, &at); err != nil {
			return nil, fmt.Errorf("db: unable to load ratings: %w", err)
		}
		if thumbs.Valid {
			r.Thumbs = &thumbs.Bool
		}
		r.At = time.UnixMilli(at)
		if c := byID[cell]; c != nil {
			c.Ratings = append(c.Ratings, r)
		}
	}
	return cells, ratings.Err()
}

// StartCell records that a cell's attempt runs as run: the run that a
// restart looks at before it sends anything again.
func (s *Store) StartCell(ctx context.Context, cell, run int64) error {
	_, err := s.w.ExecContext(ctx, `UPDATE experiment_cells SET status = 'running', run_id = ?, attempts = attempts + 1 WHERE id = ?`, run, cell)
	if err != nil {
		return fmt.Errorf("db: unable to start cell %d: %w", cell, err)
	}
	return nil
}

// FinishCell stores how a cell ended (c.Status done or error, its
// output and measurements) and its grades, in one transaction.
func (s *Store) FinishCell(ctx context.Context, c Cell) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
UPDATE experiment_cells SET status = ?, run_id = ?, output = ?, finish_reason = ?, latency_ms = ?, ttft_ms = ?, tokens = ?, cost_usd = ?,
	cost_known = ?, error = ?, finished_at = ? WHERE id = ?`,
			c.Status, nullID(c.RunID), c.Output, c.FinishReason, c.LatencyMs, c.TTFTMs, c.Tokens, c.CostUSD, c.CostKnown, c.Error,
			time.Now().UnixMilli(), c.ID)
		if err != nil {
			return err
		}
		for _, g := range c.Grades {
			if _, err := tx.ExecContext(ctx, `
INSERT INTO experiment_grades (cell_id, grader, pass, score, reason, error, judge_run_id) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (cell_id, grader) DO UPDATE SET pass = excluded.pass, score = excluded.score, reason = excluded.reason,
	error = excluded.error, judge_run_id = excluded.judge_run_id`,
				c.ID, g.Grader, g.Pass, g.Score, g.Reason, g.Error, nullID(g.JudgeRunID)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("db: unable to finish cell %d: %w", c.ID, err)
	}
	return nil
}

// EndExperiment marks an experiment ended with status; cells not ended
// are marked cancelled when it was cancelled.
func (s *Store) EndExperiment(ctx context.Context, id int64, status, msg string) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if status == ExperimentCancelled {
			if _, err := tx.ExecContext(ctx, `UPDATE experiment_cells SET status = 'cancelled', finished_at = ?
WHERE experiment_id = ? AND status IN ('pending', 'running')`, time.Now().UnixMilli(), id); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE experiments SET status = ?, error = ?, finished_at = ? WHERE id = ? AND status = 'running'`,
			status, msg, time.Now().UnixMilli(), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("db: unable to end experiment %d: %w", id, err)
	}
	return nil
}

// RateCell saves user's rating of a cell of an experiment they see,
// replacing their earlier one.
func (s *Store) RateCell(ctx context.Context, user, experiment, cell int64, r CellRating) error {
	if _, err := s.Experiment(ctx, user, experiment); err != nil {
		return err
	}
	var stars any
	if r.Stars > 0 {
		stars = r.Stars
	}
	res, err := s.w.ExecContext(ctx, `
INSERT INTO experiment_ratings (cell_id, user_id, thumbs, stars, note, rated_at)
SELECT c.id, ?, ?, ?, ?, ? FROM experiment_cells c WHERE c.id = ? AND c.experiment_id = ?
ON CONFLICT (cell_id, user_id) DO UPDATE SET thumbs = excluded.thumbs, stars = excluded.stars, note = excluded.note, rated_at = excluded.rated_at`,
		user, r.Thumbs, stars, r.Note, time.Now().UnixMilli(), cell, experiment)
	if err != nil {
		return fmt.Errorf("db: unable to rate cell %d: %w", cell, err)
	}
	return affectedOne(res)
}

// VariantAggregate sums up one variant's cells.
type VariantAggregate struct {
	Variant             int
	Cells, Done, Errors int
	Tokens              int
	CostUSD             float64
	RatedUp, RatedDown  int
	Latencies           []float64 // of the cells done, for percentiles
	Graders             []GraderAggregate
}

// GraderAggregate sums up one grader's verdicts on a variant's cells.
type GraderAggregate struct {
	Graded, Passed, Errors int
	ScoreSum               float64
	// Compared counts a person's thumbs on a cell the grader graded, and
	// Agreed those that said what the grader said (up = pass).
	Compared, Agreed int
}

// ExperimentAggregates sums up an experiment's cells per variant (of
// variants) and grader (of graders); the caller has checked that the
// experiment is seen.
func (s *Store) ExperimentAggregates(ctx context.Context, id int64, variants, graders int) ([]VariantAggregate, error) {
	out := make([]VariantAggregate, variants)
	for i := range out {
		out[i] = VariantAggregate{Variant: i, Graders: make([]GraderAggregate, graders)}
	}
	at := func(v int) *VariantAggregate {
		if v < 0 || v >= len(out) {
			return nil
		}
		return &out[v]
	}
	rows, err := s.r.QueryContext(ctx, `SELECT variant, status, latency_ms, tokens, cost_usd FROM experiment_cells WHERE experiment_id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("db: unable to sum up experiment %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var v, tokens int
		var status string
		var latency, cost float64
		if err := rows.Scan(&v, &status, &latency, &tokens, &cost); err != nil {
			return nil, fmt.Errorf("db: unable to sum up experiment %d: %w", id, err)
		}
		a := at(v)
		if a == nil {
			continue
		}
		a.Cells++
		a.Tokens += tokens
		a.CostUSD += cost
		switch status {
		case CellDone:
			a.Done++
			a.Latencies = append(a.Latencies, latency)
		case CellError:
			a.Errors++
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	grades, err := s.r.QueryContext(ctx, `SELECT c.variant, g.grader, count(*), sum(g.error = '' AND g.pass), sum(g.error != ''),
	sum(CASE WHEN g.error = '' THEN g.score ELSE 0 END)
FROM experiment_grades g JOIN experiment_cells c ON c.id = g.cell_id WHERE c.experiment_id = ? GROUP BY c.variant, g.grader`, id)
	if err != nil {
		return nil, fmt.Errorf("db: unable to sum up the grades of experiment %d: %w", id, err)
	}
	defer grades.Close()
	for grades.Next() {
		var v, g, n, passed, errs int
		var sum float64
		if err := grades.Scan(&v, &g, &n, &passed, &errs, &sum); err != nil {
			return nil, fmt.Errorf("db: unable to sum up the grades of experiment %d: %w", id, err)
		}
		if a := at(v); a != nil && g >= 0 && g < len(a.Graders) {
			a.Graders[g] = GraderAggregate{Graded: n - errs, Passed: passed, Errors: errs, ScoreSum: sum}
		}
	}
	if err := grades.Err(); err != nil {
		return nil, err
	}
	agree, err := s.r.QueryContext(ctx, `SELECT c.variant, g.grader, count(*), sum(g.pass = r.thumbs)
FROM experiment_grades g JOIN experiment_cells c ON c.id = g.cell_id JOIN experiment_ratings r ON r.cell_id = c.id
WHERE c.experiment_id = ? AND g.error = '' AND r.thumbs IS NOT NULL GROUP BY c.variant, g.grader`, id)
	if err != nil {
		return nil, fmt.Errorf("db: unable to compare the ratings of experiment %d: %w", id, err)
	}
	defer agree.Close()
	for agree.Next() {
		var v, g, n, same int
		if err := agree.Scan(&v, &g, &n, &same); err != nil {
			return nil, fmt.Errorf("db: unable to compare the ratings of experiment %d: %w", id, err)
		}
		if a := at(v); a != nil && g >= 0 && g < len(a.Graders) {
			a.Graders[g].Compared, a.Graders[g].Agreed = n, same
		}
	}
	if err := agree.Err(); err != nil {
		return nil, err
	}
	ratings, err := s.r.QueryContext(ctx, `SELECT c.variant, sum(r.thumbs = 1), sum(r.thumbs = 0)
FROM experiment_ratings r JOIN experiment_cells c ON c.id = r.cell_id WHERE c.experiment_id = ? GROUP BY c.variant`, id)
	if err != nil {
		return nil, fmt.Errorf("db: unable to sum up the ratings of experiment %d: %w", id, err)
	}
	defer ratings.Close()
	for ratings.Next() {
		var v int
		var up, down sql.NullInt64
		if err := ratings.Scan(&v, &up, &down); err != nil {
			return nil, fmt.Errorf("db: unable to sum up the ratings of experiment %d: %w", id, err)
		}
		if a := at(v); a != nil {
			a.RatedUp, a.RatedDown = int(up.Int64), int(down.Int64)
		}
	}
	return out, ratings.Err()
}

// ExperimentColumns lists the variables of an experiment's cells, by
// name: the columns of its export.
func (s *Store) ExperimentColumns(ctx context.Context, id int64) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT j.key FROM experiment_cells c, json_each(c.vars) j
WHERE c.experiment_id = ? ORDER BY j.key LIMIT 1000`, id)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list the columns of experiment %d: %w", id, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("db: unable to list the columns of experiment %d: %w", id, err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}
