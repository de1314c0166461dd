package db

import (
	"context"
	"database/sql"
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
}

// nullID stores 0 as NULL.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// CreateRun stores a new run as running and returns its id. Its prompt
// enters the history search in the same transaction.
func (s *Store) CreateRun(ctx context.Context, r Run) (int64, error) {
	p := specText(r.Spec)
	var pane any // NULL outside a comparison
	if r.GroupID != 0 {
		pane = r.Pane
	}
	var id int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `
INSERT INTO runs (user_id, provider, endpoint, model, spec, status, created_at, preset_id, group_id, pane, prompt_line, variables)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			r.UserID, r.Provider, r.Endpoint, r.Model, r.Spec, RunRunning, r.CreatedAt.UnixMilli(),
			nullID(r.PresetID), nullID(r.GroupID), pane, p.PromptLine, r.Variables).Scan(&id)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO runs_fts (rowid, prompt_line, prompt, output_line, output) VALUES (?, ?, ?, '', '')`,
			r.UserID<<ftsOwnerShift|id, p.PromptLine, p.Prompt)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("db: unable to create run: %w", err)
	}
	return id, nil
}

// CheckpointRun saves a running run's partial result, and its output so
// far for the history list and search.
func (s *Store) CheckpointRun(ctx context.Context, id int64, rawRequest, result string) error {
	o := resultText(result)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET raw_request = ?, result = ? WHERE id = ? AND status = 'running'`, rawRequest, result, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		return indexOutput(ctx, tx, id, o)
	})
	if err != nil {
		return fmt.Errorf("db: unable to checkpoint run %d: %w", id, err)
	}
	return nil
}

// FinishRun saves a run's final status, result and events, and its output
// for the history list and search.
func (s *Store) FinishRun(ctx context.Context, id int64, status, rawRequest, result string, events []byte, at time.Time) error {
	o := resultText(result)
	if events == nil {
		events = []byte{} // nil would be NULL, which the column refuses
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
UPDATE runs SET status = ?, raw_request = ?, result = ?, events = ?, finished_at = ? WHERE id = ?`,
			status, rawRequest, result, events, at.UnixMilli(), id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		return indexOutput(ctx, tx, id, o)
	})
	if err != nil {
		return fmt.Errorf("db: unable to finish run %d: %w", id, err)
	}
	return nil
}

// SetRunRawResponse keeps the provider's answer as received (capped by
// the client), for the raw view.
func (s *Store) SetRunRawResponse(ctx context.Context, id int64, raw []byte) error {
	if raw == nil {
		raw = []byte{}
	}
	_, err := s.w.ExecContext(ctx, `UPDATE runs SET raw_response = ? WHERE id = ?`, raw, id)
	if err != nil {
		return fmt.Errorf("db: unable to store the raw response of run %d: %w", id, err)
	}
	return nil
}

// SetRunEventTimes keeps when each of a finished run's frames was sent
// (see Run.EventTimes), for replay at the recorded pace.
func (s *Store) SetRunEventTimes(ctx context.Context, id int64, times []byte) error {
	if times == nil {
		times = []byte{}
	}
	_, err := s.w.ExecContext(ctx, `UPDATE runs SET event_times = ? WHERE id = ?`, times, id)
	if err != nil {
		return fmt.Errorf("db: unable to store the event times of run %d: %w", id, err)
	}
	return nil
}

// RunRawResponse loads the provider's raw answer of one of user's runs.
func (s *Store) RunRawResponse(ctx context.Context, user, id int64) ([]byte, error) {
	var raw []byte
	err := s.r.QueryRowContext(ctx, `SELECT raw_response FROM runs WHERE id = ? AND user_id = ?`, id, user).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("db: unable to load the raw response of run %d: %w", id, err)
	}
	return raw, nil
}

// InterruptRuns marks every run still running as interrupted, keeping its
// last checkpoint; Knobs calls it at start-up. It returns how many there were.
func (s *Store) InterruptRuns(ctx context.Context) (int64, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE runs SET status = ?, finished_at = ? WHERE status = ?`,
		RunInterrupted, time.Now().UnixMilli(), RunRunning)
	if err != nil {
		return 0, fmt.Errorf("db: unable to mark interrupted runs: %w", err)
	}
	return res.RowsAffected()
}

const runColumns = `id, user_id, provider, endpoint, model, spec, status, created_at, ifnull(finished_at, 0), raw_request, result,
	starred, note, ifnull(preset_id, 0), ifnull(group_id, 0), variables, ifnull(pane, 0)`

func scanRun(row interface{ Scan(...any) error }, more ...any) (Run, error) {
	var r Run
	var created, finished int64
	err := row.Scan(append([]any{&r.ID, &r.UserID, &r.Provider, &r.Endpoint, &r.Model, &r.Spec, &r.Status, &created, &finished, &r.RawRequest, &r.Result,
		&r.Starred, &r.Note, &r.PresetID, &r.GroupID, &r.Variables, &r.Pane}, more...)...)
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

// RunEvents loads the SSE text of one of user's finished runs.
func (s *Store) RunEvents(ctx context.Context, user, id int64) ([]byte, error) {
	var ev []byte
	err := s.r.QueryRowContext(ctx, `SELECT events FROM runs WHERE id = ? AND user_id = ?`, id, user).Scan(&ev)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("db: unable to load events of run %d: %w", id, err)
	}
	return ev, nil
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
