package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Share kinds: what a share link shows.
const (
	ShareRun    = "run"
	ShareGroup  = "group"  // a comparison group and the runs with its group_id
	SharePreset = "preset" // a preset, opened read-only
	// ShareExperiment is an experiment's results, read-only.
	ShareExperiment = "experiment"
	// ShareArena is an arena's results, read-only (never its voting link).
	ShareArena = "arena"
)

// Share audiences: who may open a share link.
const (
	ShareTeam   = "team"   // signed-in members
	SharePublic = "public" // anyone with the link
)

// Share is a read-only link to a run, a comparison group or a preset.
type Share struct {
	ID        int64
	Token     string // 128-bit random, URL-safe (NewToken)
	Kind      string // ShareRun, ShareGroup or SharePreset
	TargetID  int64
	OwnerID   int64
	Audience  string // ShareTeam or SharePublic
	CreatedAt time.Time
	RevokedAt time.Time // zero while active
}

// Active reports whether the link still opens.
func (sh Share) Active() bool { return sh.RevokedAt.IsZero() }

const shareColumns = `id, token, kind, target_id, owner_id, audience, created_at, ifnull(revoked_at, 0)`

func scanShare(row interface{ Scan(...any) error }) (Share, error) {
	var sh Share
	var created, revoked int64
	err := row.Scan(&sh.ID, &sh.Token, &sh.Kind, &sh.TargetID, &sh.OwnerID, &sh.Audience, &created, &revoked)
	sh.CreatedAt = time.UnixMilli(created)
	if revoked != 0 {
		sh.RevokedAt = time.UnixMilli(revoked)
	}
	return sh, err
}

// CreateShare makes a share link to owner's target; ErrNotFound when the
// target is not owner's. The token is stored as is, since the owner sees
// the link again in the list of shares.
func (s *Store) CreateShare(ctx context.Context, owner int64, kind string, target int64, audience string) (Share, error) {
	if kind != ShareRun && kind != ShareGroup && kind != SharePreset && kind != ShareExperiment && kind != ShareArena {
		return Share{}, fmt.Errorf("db: unknown share kind %q", kind)
	}
	if audience != ShareTeam && audience != SharePublic {
		return Share{}, fmt.Errorf("db: unknown share audience %q", audience)
	}
	sh := Share{Token: NewToken(), Kind: kind, TargetID: target, OwnerID: owner, Audience: audience, CreatedAt: time.Now()}
	owns := `SELECT count(*) FROM runs WHERE id = ? AND user_id = ?`
	switch kind {
	case ShareGroup:
		owns = `SELECT count(*) FROM groups WHERE id = ? AND owner_id = ?`
	case SharePreset:
		// Only the owner shares a preset, even a team one an admin may edit.
		owns = `SELECT count(*) FROM presets WHERE id = ? AND owner_id = ?`
	case ShareExperiment:
		owns = `SELECT count(*) FROM experiments WHERE id = ? AND owner_id = ?`
	case ShareArena:
		owns = `SELECT count(*) FROM arenas WHERE id = ? AND owner_id = ?`
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, owns, target, owner).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		return tx.QueryRowContext(ctx, `
INSERT INTO shares (token, kind, target_id, owner_id, audience, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
			sh.Token, sh.Kind, sh.TargetID, sh.OwnerID, sh.Audience, sh.CreatedAt.UnixMilli()).Scan(&sh.ID)
	})
	if errors.Is(err, ErrNotFound) {
		return Share{}, err
	}
	if err != nil {
		return Share{}, fmt.Errorf("db: unable to share %s %d: %w", kind, target, err)
	}
	return sh, nil
}

// Shares lists owner's share links to target, newest first, revoked ones
// included.
func (s *Store) Shares(ctx context.Context, owner int64, kind string, target int64) ([]Share, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+shareColumns+` FROM shares WHERE kind = ? AND target_id = ? AND owner_id = ? ORDER BY id DESC`,
		kind, target, owner)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list shares of %s %d: %w", kind, target, err)
	}
	defer rows.Close()
	var out []Share
	for rows.Next() {
		sh, err := scanShare(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to list shares of %s %d: %w", kind, target, err)
		}
		out = append(out, sh)
	}
	return out, rows.Err()
}

// RevokeShare stops one of owner's share links from opening; revoking a
// revoked link again is not an error. Another owner's link is ErrNotFound.
func (s *Store) RevokeShare(ctx context.Context, owner, shareID int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE shares SET revoked_at = ifnull(revoked_at, ?) WHERE id = ? AND owner_id = ?`,
		time.Now().UnixMilli(), shareID, owner)
	if err != nil {
		return fmt.Errorf("db: unable to revoke share %d: %w", shareID, err)
	}
	return affectedOne(res)
}

// SharedRun loads the run an active run share link points to, events
// included, with the share (whose Audience the caller enforces).
// ErrNotFound for an unknown or revoked token, or a run gone since.
func (s *Store) SharedRun(ctx context.Context, token string) (Run, Share, error) {
	sh, err := scanShare(s.r.QueryRowContext(ctx,
		`SELECT `+shareColumns+` FROM shares WHERE token = ? AND kind = ? AND revoked_at IS NULL`, token, ShareRun))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, Share{}, ErrNotFound
	}
	if err != nil {
		return Run{}, Share{}, fmt.Errorf("db: unable to load a share: %w", err)
	}
	r, err := scanRun(s.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ? AND user_id = ?`, sh.TargetID, sh.OwnerID))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, Share{}, ErrNotFound
	}
	if err == nil {
		r.Events, _, err = runStream(ctx, s.r, r.ID, false)
	}
	if err != nil {
		return Run{}, Share{}, fmt.Errorf("db: unable to load shared run %d: %w", sh.TargetID, err)
	}
	return r, sh, nil
}

// SharedPreset loads the preset an active preset share link points to,
// with the share (whose Audience the caller enforces). ErrNotFound for an
// unknown or revoked token, or a preset gone since.
func (s *Store) SharedPreset(ctx context.Context, token string) (Preset, Share, error) {
	sh, err := scanShare(s.r.QueryRowContext(ctx,
		`SELECT `+shareColumns+` FROM shares WHERE token = ? AND kind = ? AND revoked_at IS NULL`, token, SharePreset))
	if errors.Is(err, sql.ErrNoRows) {
		return Preset{}, Share{}, ErrNotFound
	}
	if err != nil {
		return Preset{}, Share{}, fmt.Errorf("db: unable to load a share: %w", err)
	}
	p, err := scanPreset(s.r.QueryRowContext(ctx, `SELECT `+presetColumns+` FROM presets p JOIN users u ON u.id = p.owner_id
WHERE p.id = ? AND p.owner_id = ?`, sh.TargetID, sh.OwnerID))
	if errors.Is(err, sql.ErrNoRows) {
		return Preset{}, Share{}, ErrNotFound
	}
	if err != nil {
		return Preset{}, Share{}, fmt.Errorf("db: unable to load shared preset %d: %w", sh.TargetID, err)
	}
	return p, sh, nil
}

// SharedExperiment loads the experiment behind a live share token, as
// its owner sees it.
func (s *Store) SharedExperiment(ctx context.Context, token string) (Experiment, Share, error) {
	sh, err := scanShare(s.r.QueryRowContext(ctx,
		`SELECT `+shareColumns+` FROM shares WHERE token = ? AND kind = ? AND revoked_at IS NULL`, token, ShareExperiment))
	if errors.Is(err, sql.ErrNoRows) {
		return Experiment{}, Share{}, ErrNotFound
	}
	if err != nil {
		return Experiment{}, Share{}, fmt.Errorf("db: unable to load a share: %w", err)
	}
	e, err := s.Experiment(ctx, sh.OwnerID, sh.TargetID)
	if err != nil {
		return Experiment{}, Share{}, err
	}
	return e, sh, nil
}

// SharedArena loads the arena behind a live share token of its results.
func (s *Store) SharedArena(ctx context.Context, token string) (Arena, Share, error) {
	sh, err := scanShare(s.r.QueryRowContext(ctx,
		`SELECT `+shareColumns+` FROM shares WHERE token = ? AND kind = ? AND revoked_at IS NULL`, token, ShareArena))
	if errors.Is(err, sql.ErrNoRows) {
		return Arena{}, Share{}, ErrNotFound
	}
	if err != nil {
		return Arena{}, Share{}, fmt.Errorf("db: unable to load a share: %w", err)
	}
	a, err := s.Arena(ctx, sh.TargetID)
	if err != nil {
		return Arena{}, Share{}, err
	}
	return a, sh, nil
}
