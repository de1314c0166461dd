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
	// Events is the SSE text the run sent, for replay; loaded only by RunEvents.
	Events []byte
}

// CreateRun stores a new run as running and returns its id.
func (s *Store) CreateRun(ctx context.Context, r Run) (int64, error) {
	res, err := s.w.ExecContext(ctx, `
INSERT INTO runs (user_id, provider, endpoint, model, spec, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		r.UserID, r.Provider, r.Endpoint, r.Model, r.Spec, RunRunning, r.CreatedAt.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("db: unable to create run: %w", err)
	}
	return res.LastInsertId()
}

// CheckpointRun saves a running run's partial result.
func (s *Store) CheckpointRun(ctx context.Context, id int64, rawRequest, result string) error {
	_, err := s.w.ExecContext(ctx, `UPDATE runs SET raw_request = ?, result = ? WHERE id = ? AND status = 'running'`, rawRequest, result, id)
	if err != nil {
		return fmt.Errorf("db: unable to checkpoint run %d: %w", id, err)
	}
	return nil
}

// FinishRun saves a run's final status, result and events.
func (s *Store) FinishRun(ctx context.Context, id int64, status, rawRequest, result string, events []byte, at time.Time) error {
	_, err := s.w.ExecContext(ctx, `
UPDATE runs SET status = ?, raw_request = ?, result = ?, events = ?, finished_at = ? WHERE id = ?`,
		status, rawRequest, result, events, at.UnixMilli(), id)
	if err != nil {
		return fmt.Errorf("db: unable to finish run %d: %w", id, err)
	}
	return nil
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

const runColumns = `id, user_id, provider, endpoint, model, spec, status, created_at, ifnull(finished_at, 0), raw_request, result`

func scanRun(row interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var created, finished int64
	err := row.Scan(&r.ID, &r.UserID, &r.Provider, &r.Endpoint, &r.Model, &r.Spec, &r.Status, &created, &finished, &r.RawRequest, &r.Result)
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
