package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Group is a comparison: runs made side by side, one per pane.
type Group struct {
	ID      int64
	OwnerID int64
	Title   string
	// Panes is the JSON array of the pane specs the group was made
	// with; the store keeps it opaque.
	Panes     string
	CreatedAt time.Time
	// RunIDs holds the run of each pane, indexed by pane; 0 where a
	// pane's run was removed since.
	RunIDs []int64
}

// CreateGroup stores a new comparison group of owner and returns its id.
func (s *Store) CreateGroup(ctx context.Context, owner int64, title, panes string) (int64, error) {
	if panes == "" {
		panes = "[]"
	}
	var id int64
	err := s.w.QueryRowContext(ctx, `INSERT INTO groups (owner_id, title, panes, created_at) VALUES (?, ?, ?, ?) RETURNING id`,
		owner, title, panes, time.Now().UnixMilli()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("db: unable to create group: %w", err)
	}
	return id, nil
}

// RenameGroup sets the title of one of owner's groups; another user's
// group is ErrNotFound.
func (s *Store) RenameGroup(ctx context.Context, owner, id int64, title string) error {
	res, err := s.w.ExecContext(ctx, `UPDATE groups SET title = ? WHERE id = ? AND owner_id = ?`, title, id, owner)
	if err != nil {
		return fmt.Errorf("db: unable to rename group %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("db: unable to rename group %d: %w", id, err)
	} else if n == 0 {
		return ErrNotFound
	}
	return nil
}

// Group loads one of viewer's comparison groups with the run of each
// pane; another user's group is ErrNotFound.
func (s *Store) Group(ctx context.Context, viewer, id int64) (Group, error) {
	g, err := s.group(ctx, id, viewer)
	if err != nil {
		return Group{}, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, ifnull(pane, 0) FROM runs WHERE group_id = ? AND user_id = ? ORDER BY pane, id`, id, viewer)
	if err != nil {
		return Group{}, fmt.Errorf("db: unable to load the runs of group %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var run int64
		var pane int
		if err := rows.Scan(&run, &pane); err != nil {
			return Group{}, fmt.Errorf("db: unable to load the runs of group %d: %w", id, err)
		}
		g.RunIDs = placeRun(g.RunIDs, pane, run)
	}
	if err := rows.Err(); err != nil {
		return Group{}, fmt.Errorf("db: unable to load the runs of group %d: %w", id, err)
	}
	return g, nil
}

// placeRun puts run at index pane of ids, growing it with zeros; the
// first run of a pane wins.
func placeRun(ids []int64, pane int, run int64) []int64 {
	if pane < 0 || pane > 1000 {
		return ids
	}
	for len(ids) <= pane {
		ids = append(ids, 0)
	}
	if ids[pane] == 0 {
		ids[pane] = run
	}
	return ids
}

// group loads group id of owner, without its runs.
func (s *Store) group(ctx context.Context, id, owner int64) (Group, error) {
	g := Group{ID: id}
	var created int64
	err := s.r.QueryRowContext(ctx, `SELECT owner_id, title, panes, created_at FROM groups WHERE id = ? AND owner_id = ?`, id, owner).
		Scan(&g.OwnerID, &g.Title, &g.Panes, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Group{}, ErrNotFound
	}
	if err != nil {
		return Group{}, fmt.Errorf("db: unable to load group %d: %w", id, err)
	}
	g.CreatedAt = time.UnixMilli(created)
	return g, nil
}

// GroupRuns loads the runs of one of viewer's groups in pane order, with
// their events and event times, for replay. Another user's group has no
// runs.
func (s *Store) GroupRuns(ctx context.Context, viewer, id int64) ([]Run, error) {
	return s.groupRuns(ctx, viewer, id, true)
}

// groupRuns loads the runs of group id of viewer in pane order; their
// events and event times only when events is true.
func (s *Store) groupRuns(ctx context.Context, viewer, id int64, events bool) ([]Run, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE group_id = ? AND user_id = ? ORDER BY pane, id`, id, viewer)
	if err != nil {
		return nil, fmt.Errorf("db: unable to load the runs of group %d: %w", id, err)
	}
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("db: unable to load the runs of group %d: %w", id, err)
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: unable to load the runs of group %d: %w", id, err)
	}
	if events {
		for i := range out {
			if out[i].Events, out[i].EventTimes, err = runStream(ctx, s.r, out[i].ID, true); err != nil {
				return nil, fmt.Errorf("db: unable to load the events of run %d: %w", out[i].ID, err)
			}
		}
	}
	return out, nil
}

// RunStamp tells one state of a run from another: a finished run does not
// change, so its id, status and end name what it stored.
type RunStamp struct {
	ID         int64
	Status     string
	FinishedAt time.Time // zero while running
}

// GroupStamps returns the stamp of each run of group id of owner, in pane
// order, without reading what they stored.
func (s *Store) GroupStamps(ctx context.Context, owner, id int64) ([]RunStamp, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, status, ifnull(finished_at, 0) FROM runs WHERE group_id = ? AND user_id = ? ORDER BY pane, id`, id, owner)
	if err != nil {
		return nil, fmt.Errorf("db: unable to load the runs of group %d: %w", id, err)
	}
	defer rows.Close()
	var out []RunStamp
	for rows.Next() {
		var st RunStamp
		var finished int64
		if err := rows.Scan(&st.ID, &st.Status, &finished); err != nil {
			return nil, fmt.Errorf("db: unable to load the runs of group %d: %w", id, err)
		}
		if finished != 0 {
			st.FinishedAt = time.UnixMilli(finished)
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: unable to load the runs of group %d: %w", id, err)
	}
	return out, nil
}

// SharedGroup loads the comparison an active group share link points
// to, with its runs in pane order (without their events: GroupRuns of
// the group's owner has them) and the share (whose Audience the caller
// enforces). ErrNotFound for an unknown or revoked token, or a group
// gone since.
func (s *Store) SharedGroup(ctx context.Context, token string) (Group, []Run, Share, error) {
	sh, err := scanShare(s.r.QueryRowContext(ctx,
		`SELECT `+shareColumns+` FROM shares WHERE token = ? AND kind = ? AND revoked_at IS NULL`, token, ShareGroup))
	if errors.Is(err, sql.ErrNoRows) {
		return Group{}, nil, Share{}, ErrNotFound
	}
	if err != nil {
		return Group{}, nil, Share{}, fmt.Errorf("db: unable to load a share: %w", err)
	}
	g, err := s.Group(ctx, sh.OwnerID, sh.TargetID)
	if err != nil {
		return Group{}, nil, Share{}, err
	}
	runs, err := s.groupRuns(ctx, sh.OwnerID, sh.TargetID, false)
	if err != nil {
		return Group{}, nil, Share{}, err
	}
	return g, runs, sh, nil
}
