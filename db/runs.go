package db

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Run statuses.
const (
	RunRunning     = "running"
	RunDone        = "done"
	RunError       = "error"
	RunCancelled   = "cancelled"
	RunInterrupted = "interrupted" // the server stopped while it ran
)

// Run is one request to a provider and what came back. Spec, RawRequest
// and Result are JSON that the runner writes; the store keeps them opaque.
type Run struct {
	ID         int64
	UserID     int64
	Provider   string
	Endpoint   string
	Model      string
	Spec       string
	Status     string
	CreatedAt  time.Time
	FinishedAt time.Time // zero while running
	RawRequest string
	Result     string
	// Events is the SSE text the run sent, for replay; loaded only by
	// RunEvents, GroupRuns, SharedGroup and SharedRun.
	Events   []byte
	Starred  bool
	Note     string
	PresetID int64 // 0 when the run was not made from a preset
	GroupID  int64 // 0 when the run is not part of a comparison
	// Pane is the run's place in its comparison, from 0; stored only
	// when GroupID is set.
	Pane int
	// EventTimes holds when each frame of Events was sent, as a
	// little-endian uint32 of milliseconds from the run's start per
	// frame; loaded only with Events by GroupRuns and SharedGroup.
	EventTimes []byte
	// Variables is the JSON object of the values filled into the
	// placeholders of Spec, which keeps the template; "" when none.
	Variables string
	// ExperimentID is the experiment the run is a cell (or a judge's
	// grading) of; 0 when none.
	ExperimentID int64
	// ArenaID is the arena the run made an answer for; 0 when none.
	ArenaID int64
	// Price is what the run's tokens are costed at, stored with its row
	// so that a run cut by a restart is costed as it would have been;
	// nil when its model has no price. Written only by Create.
	Price *RunPrice
}

// nullID stores 0 as NULL.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// CreateRun stores a new run as running and returns its id. Its prompt
// enters the history search in the same transaction. The runner creates
// its runs through WriteRuns instead, with an id from NextRunID.
func (s *Store) CreateRun(ctx context.Context, r Run) (int64, error) {
	r.ID = s.NextRunID()
	if err := s.WriteRuns(ctx, []RunWrite{{RunID: r.ID, Create: &r}}); err != nil {
		return 0, err
	}
	return r.ID, nil
}

// NextRunID hands out the id of a run about to be created. Ids come from
// memory, so that a run can start before its row is written; they stay
// above every id the table ever had (runs is AUTOINCREMENT, and one
// process alone has the file), so none is ever reused.
func (s *Store) NextRunID() int64 { return s.runIDs.Add(1) }

// loadRunIDs sets where NextRunID starts: past the largest id the runs
// table has had.
func (s *Store) loadRunIDs(ctx context.Context) error {
	var last int64
	err := s.w.QueryRowContext(ctx, `SELECT max(ifnull((SELECT seq FROM sqlite_sequence WHERE name = 'runs'), 0), ifnull((SELECT max(id) FROM runs), 0))`).Scan(&last)
	if err != nil {
		return fmt.Errorf("db: unable to read the last run id: %w", err)
	}
	s.runIDs.Store(last)
	return nil
}

// RunChunk is a stretch of a run's stream as it was sent: its SSE frames
// from frame First on, and when each was sent (a little-endian uint32 of
// milliseconds from the run's start per frame).
type RunChunk struct {
	First  int
	Frames []byte
	Times  []byte
}

// RunFinish is a run's final state: its status, its result (the JSON the
// runner keeps) and when it ended.
type RunFinish struct {
	Status string
	Result string
	At     time.Time
}

// RunWrite is one thing to store of run RunID. WriteRuns stores many in
// one transaction, in order, so that the runs going at once share the
// database's single writer instead of queueing on it one by one.
type RunWrite struct {
	RunID int64
	// Create is a new run's row; its prompt enters the history search.
	Create *Run
	// Request is the request as sent (key redacted), kept for the raw
	// view; "" leaves it as it is.
	Request string
	// Chunk is appended to the run's stream.
	Chunk *RunChunk
	// Finish is the run's final state.
	Finish *RunFinish
	// Index is a result (the JSON the runner keeps) whose output enters
	// the history list and search. It is apart from Finish so that the
	// write a run's done waits for does not include indexing its text.
	Index string
	// RawResponse is the provider's answer as received; nil leaves it.
	RawResponse []byte
}

// Size is about how many bytes w writes.
func (w RunWrite) Size() int {
	n := len(w.Request) + len(w.RawResponse) + len(w.Index)
	if w.Chunk != nil {
		n += len(w.Chunk.Frames) + len(w.Chunk.Times)
	}
	if w.Finish != nil {
		n += len(w.Finish.Result)
	}
	return n
}

// WriteRuns stores ws in one transaction. A write about a run whose row
// is gone (removed with its owner) stores nothing and is no error.
func (s *Store) WriteRuns(ctx context.Context, ws []RunWrite) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, w := range ws {
			if err := writeRun(ctx, tx, w); err != nil {
				return fmt.Errorf("run %d: %w", w.RunID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("db: unable to store runs: %w", err)
	}
	return nil
}

func writeRun(ctx context.Context, tx *sql.Tx, w RunWrite) error {
	if r := w.Create; r != nil {
		p := specText(r.Spec)
		var pane any // NULL outside a comparison
		if r.GroupID != 0 {
			pane = r.Pane
		}
		var pi, po, pc, pr any // NULL without a price
		if p := r.Price; p != nil {
			pi, po, pc, pr = p.Input, p.Output, p.CachedInput, p.Reasoning
		}
		_, err := tx.ExecContext(ctx, `
INSERT INTO runs (id, user_id, provider, endpoint, model, spec, status, created_at, preset_id, group_id, pane, prompt_line, variables,
	experiment_id, arena_id, price_input, price_output, price_cached, price_reasoning)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			w.RunID, r.UserID, r.Provider, r.Endpoint, r.Model, r.Spec, RunRunning, r.CreatedAt.UnixMilli(),
			nullID(r.PresetID), nullID(r.GroupID), pane, p.PromptLine, r.Variables, nullID(r.ExperimentID), nullID(r.ArenaID), pi, po, pc, pr)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO runs_fts (rowid, prompt_line, prompt, output_line, output) VALUES (?, ?, ?, '', '')`,
			r.UserID<<ftsOwnerShift|w.RunID, p.PromptLine, p.Prompt)
		if err != nil {
			return err
		}
	}
	// Every other part belongs to a row that exists: a run whose owner
	// was removed while it ran leaves nothing behind.
	var exists int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE id = ?`, w.RunID).Scan(&exists); err != nil {
		return err
	}
	if exists == 0 {
		return nil
	}
	if w.Request != "" || w.RawResponse != nil {
		raw := w.RawResponse
		if raw == nil {
			raw = []byte{}
		}
		_, err := tx.ExecContext(ctx, `
INSERT INTO run_raw (run_id, request, response) VALUES (?, ?, ?)
ON CONFLICT (run_id) DO UPDATE SET
	request = CASE WHEN ?2 != '' THEN ?2 ELSE request END,
	response = CASE WHEN ?4 THEN ?3 ELSE response END`,
			w.RunID, w.Request, raw, w.RawResponse != nil)
		if err != nil {
			return err
		}
	}
	if c := w.Chunk; c != nil && len(c.Frames) > 0 {
		_, err := tx.ExecContext(ctx, `INSERT INTO run_chunks (run_id, first, frames, times) VALUES (?, ?, ?, ?)`,
			w.RunID, c.First, c.Frames, nonNil(c.Times))
		if err != nil {
			return err
		}
	}
	if f := w.Finish; f != nil {
		if err := finishRun(ctx, tx, w.RunID, f.Status, f.Result, f.At); err != nil {
			return err
		}
	}
	if w.Index != "" {
		if err := indexOutput(ctx, tx, w.RunID, resultText(w.Index)); err != nil {
			return err
		}
	}
	return nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// FinishRun stores the whole ending of a run at once: its final state,
// its stream (events, none when nil) and the request as sent. Knobs' own
// runs store their stream as they go (WriteRuns); this is for runs
// stored whole, as imports and tests do.
func (s *Store) FinishRun(ctx context.Context, id int64, status, rawRequest, result string, events []byte, at time.Time) error {
	w := RunWrite{RunID: id, Request: rawRequest, Finish: &RunFinish{Status: status, Result: result, At: at}, Index: result}
	if len(events) > 0 {
		w.Chunk = &RunChunk{First: 1, Frames: events}
	}
	return s.WriteRuns(ctx, []RunWrite{w})
}

// RunRawResponse loads the provider's raw answer of one of user's runs.
func (s *Store) RunRawResponse(ctx context.Context, user, id int64) ([]byte, error) {
	var raw []byte
	err := s.r.QueryRowContext(ctx, `
SELECT ifnull(w.response, x'') FROM runs r LEFT JOIN run_raw w ON w.run_id = r.id WHERE r.id = ? AND r.user_id = ?`, id, user).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("db: unable to load the raw response of run %d: %w", id, err)
	}
	return raw, nil
}

// StoppedRun is what is stored of a run that stopped with its process,
// for rebuilding its result: its endpoint and spec (the template, as
// the user wrote it), the frames its checkpoints stored, and the price
// it was started at (nil when none).
type StoppedRun struct {
	Endpoint string
	Spec     string
	Frames   []byte
	Price    *RunPrice
}

// InterruptRuns marks every run still running as interrupted; Knobs calls
// it at start-up. Such a run's result was never written (a run stores its
// result once, when it ends): rebuild, when not nil, makes it from what
// its checkpoints stored, so that its output up to the last checkpoint is
// kept and searchable, and what it used is counted, at its price. The
// run counts on the day of its last stored frame, not the day Knobs came
// back. It returns how many runs there were.
func (s *Store) InterruptRuns(ctx context.Context, rebuild func(StoppedRun) string) (int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id FROM runs WHERE status = ?`, RunRunning)
	if err != nil {
		return 0, fmt.Errorf("db: unable to list interrupted runs: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("db: unable to list interrupted runs: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("db: unable to list interrupted runs: %w", err)
	}
	now := time.Now()
	for _, id := range ids {
		var (
			result  string
			created int64
			stopped StoppedRun
			price   [4]sql.NullFloat64
		)
		err := s.r.QueryRowContext(ctx, `
SELECT result, endpoint, spec, created_at, price_input, price_output, price_cached, price_reasoning FROM runs WHERE id = ?`, id).
			Scan(&result, &stopped.Endpoint, &stopped.Spec, &created, &price[0], &price[1], &price[2], &price[3])
		if err != nil {
			return 0, fmt.Errorf("db: unable to load interrupted run %d: %w", id, err)
		}
		if price[0].Valid {
			stopped.Price = &RunPrice{Input: price[0].Float64, Output: price[1].Float64, CachedInput: price[2].Float64, Reasoning: price[3].Float64}
		}
		at := now
		if rebuild != nil {
			frames, times, err := runStream(ctx, s.r, id, true)
			if err != nil {
				return 0, fmt.Errorf("db: unable to load the stream of interrupted run %d: %w", id, err)
			}
			if len(frames) > 0 {
				stopped.Frames = frames
				result = rebuild(stopped)
			}
			if n := len(times); n >= 4 {
				last := time.UnixMilli(created).Add(time.Duration(binary.LittleEndian.Uint32(times[n-4:])) * time.Millisecond)
				if last.Before(now) {
					at = last
				}
			}
		}
		err = s.tx(ctx, func(tx *sql.Tx) error {
			var status string
			if err := tx.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, id).Scan(&status); err != nil || status != RunRunning {
				return err
			}
			if err := finishRun(ctx, tx, id, RunInterrupted, result, at); err != nil {
				return err
			}
			return indexOutput(ctx, tx, id, resultText(result))
		})
		if err != nil {
			return 0, fmt.Errorf("db: unable to mark run %d interrupted: %w", id, err)
		}
	}
	return int64(len(ids)), nil
}

// runColumns reads the request as sent from run_raw, where it is kept.
const runColumns = `id, user_id, provider, endpoint, model, spec, status, created_at, ifnull(finished_at, 0),
	ifnull((SELECT w.request FROM run_raw w WHERE w.run_id = runs.id), ''), result,
	starred, note, ifnull(preset_id, 0), ifnull(group_id, 0), variables, ifnull(pane, 0), ifnull(experiment_id, 0)`

func scanRun(row interface{ Scan(...any) error }, more ...any) (Run, error) {
	var r Run
	var created, finished int64
	err := row.Scan(append([]any{&r.ID, &r.UserID, &r.Provider, &r.Endpoint, &r.Model, &r.Spec, &r.Status, &created, &finished, &r.RawRequest, &r.Result,
		&r.Starred, &r.Note, &r.PresetID, &r.GroupID, &r.Variables, &r.Pane, &r.ExperimentID}, more...)...)
	r.CreatedAt = time.UnixMilli(created)
	if finished != 0 {
		r.FinishedAt = time.UnixMilli(finished)
	}
	return r, err
}

// Run loads one of user's runs; another user's run is ErrNotFound.
func (s *Store) Run(ctx context.Context, user, id int64) (Run, error) {
	r, err := scanRun(s.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ? AND user_id = ?`, id, user))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, ErrNotFound
	}
	if err != nil {
		return Run{}, fmt.Errorf("db: unable to load run %d: %w", id, err)
	}
	return r, nil
}

// RunEvents loads the SSE text of one of user's runs as far as it was
// stored: every frame when it ended, those up to its last checkpoint
// when it was interrupted.
func (s *Store) RunEvents(ctx context.Context, user, id int64) ([]byte, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE id = ? AND user_id = ?`, id, user).Scan(&n); err != nil {
		return nil, fmt.Errorf("db: unable to load events of run %d: %w", id, err)
	}
	if n == 0 {
		return nil, ErrNotFound
	}
	frames, _, err := runStream(ctx, s.r, id, false)
	if err != nil {
		return nil, fmt.Errorf("db: unable to load events of run %d: %w", id, err)
	}
	return frames, nil
}

// runStream joins the chunks of run id: its frames, and their times when
// times is true.
func runStream(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, id int64, times bool) (frames, at []byte, err error) {
	cols := `frames, x''`
	if times {
		cols = `frames, times`
	}
	rows, err := q.QueryContext(ctx, `SELECT `+cols+` FROM run_chunks WHERE run_id = ? ORDER BY first`, id)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var f, t []byte
		if err := rows.Scan(&f, &t); err != nil {
			return nil, nil, err
		}
		frames, at = append(frames, f...), append(at, t...)
	}
	return frames, at, rows.Err()
}

// PlaygroundState returns the spec the user last had in the playground,
// or "" when there is none.
func (s *Store) PlaygroundState(ctx context.Context, user int64) (string, error) {
	var spec string
	err := s.r.QueryRowContext(ctx, `SELECT spec FROM playground_state WHERE user_id = ?`, user).Scan(&spec)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("db: unable to load playground state: %w", err)
	}
	return spec, nil
}

// SetPlaygroundState keeps the spec the user has in the playground.
func (s *Store) SetPlaygroundState(ctx context.Context, user int64, spec string) error {
	_, err := s.w.ExecContext(ctx, `
INSERT INTO playground_state (user_id, spec, updated_at) VALUES (?, ?, ?)
ON CONFLICT (user_id) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at`,
		user, spec, time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("db: unable to save playground state: %w", err)
	}
	return nil
}
