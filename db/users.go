package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Roles a user can have.
const (
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// ErrUsernameTaken is returned when a new username is already in use.
var ErrUsernameTaken = errors.New("db: username taken")

// ErrLastAdmin is returned when a change would leave the team without an admin.
var ErrLastAdmin = errors.New("db: the last admin cannot be removed or demoted")

// User is a person with an account.
type User struct {
	ID           int64
	Username     string
	PasswordHash string
	Role         string
	CreatedAt    time.Time
}

// IsAdmin reports whether u may change team settings.
func (u User) IsAdmin() bool { return u.Role == RoleAdmin }

const userColumns = `id, username, password_hash, role, created_at`

func scanUser(row interface{ Scan(...any) error }) (User, error) {
	var u User
	var created int64
	err := row.Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Role, &created)
	u.CreatedAt = time.Unix(created, 0)
	return u, err
}

// User loads one user by id.
func (s *Store) User(ctx context.Context, id int64) (User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, ErrNotFound
	}
	if err != nil {
		return User{}, fmt.Errorf("db: unable to load user %d: %w", id, err)
	}
	return u, nil
}

// UserByName loads one user by username, ignoring case.
func (s *Store) UserByName(ctx context.Context, username string) (User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE username = ?`, username))
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, ErrNotFound
	}
	if err != nil {
		return User{}, fmt.Errorf("db: unable to load user %q: %w", username, err)
	}
	return u, nil
}

// Users lists every account, oldest first.
func (s *Store) Users(ctx context.Context) ([]User, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+userColumns+` FROM users ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list users: %w", err)
	}
	defer rows.Close()
	var users []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to list users: %w", err)
		}
		users = append(users, u)
	}
	return users, rows.Err()
}

// SignUp is what creating an account needs.
type SignUp struct {
	Username     string
	PasswordHash string
	// InviteToken, when set, is consumed in the same transaction; an
	// unknown, used or expired invite fails with ErrInviteInvalid unless
	// Open.
	InviteToken string
	// Open is true when sign-up without an invite is allowed.
	Open bool
}

// ErrSignUpClosed is returned when sign-up needs an invite and none was given.
var ErrSignUpClosed = errors.New("db: sign-up needs an invite")

// CreateUser creates an account. The first account becomes the admin; after
// that an invite or open sign-up is needed, checked in the same
// transaction so that two first sign-ups cannot both become admin.
func (s *Store) CreateUser(ctx context.Context, in SignUp) (User, error) {
	now := time.Now()
	u := User{Username: in.Username, PasswordHash: in.PasswordHash, Role: RoleMember, CreatedAt: now}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var count int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&count); err != nil {
			return err
		}
		var inviteID int64
		switch {
		case count == 0:
			u.Role = RoleAdmin
		case in.InviteToken != "":
			err := tx.QueryRowContext(ctx,
				`SELECT id FROM invites WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?`,
				hashToken(in.InviteToken), now.Unix()).Scan(&inviteID)
			// With sign-up open, a spent invite in the link is no reason to refuse.
			if errors.Is(err, sql.ErrNoRows) && !in.Open {
				return ErrInviteInvalid
			}
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		case !in.Open:
			return ErrSignUpClosed
		}
		res, err := tx.ExecContext(ctx,
			`INSERT INTO users (username, password_hash, role, created_at) VALUES (?, ?, ?, ?)`,
			u.Username, u.PasswordHash, u.Role, now.Unix())
		if err != nil {
			if strings.Contains(err.Error(), "UNIQUE constraint failed") {
				return ErrUsernameTaken
			}
			return err
		}
		if u.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		if inviteID != 0 {
			_, err = tx.ExecContext(ctx, `UPDATE invites SET used_at = ?, used_by = ? WHERE id = ?`, now.Unix(), u.ID, inviteID)
		}
		return err
	})
	if errors.Is(err, ErrInviteInvalid) || errors.Is(err, ErrUsernameTaken) || errors.Is(err, ErrSignUpClosed) {
		return User{}, err
	}
	if err != nil {
		return User{}, fmt.Errorf("db: unable to create user %q: %w", in.Username, err)
	}
	return u, nil
}

// CountUsers returns how many accounts exist.
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("db: unable to count users: %w", err)
	}
	return n, nil
}

// SetUserRole changes a user's role; a demotion ends their sessions but
// keep (the session of an admin who steps down) and revokes their API
// tokens. The last admin cannot
// be demoted.
func (s *Store) SetUserRole(ctx context.Context, id int64, role, keep string) error {
	defer s.sessions.clear()
	if role != RoleAdmin && role != RoleMember {
		return fmt.Errorf("db: unknown role %q", role)
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if role == RoleMember {
			if err := ensureOtherAdmin(ctx, tx, id); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE users SET role = ? WHERE id = ?`, role, id)
		if err != nil {
			return err
		}
		if err := affectedOne(res); err != nil {
			return err
		}
		if role == RoleAdmin {
			return nil
		}
		// Every session and API token of theirs ends: a demoted admin's
		// open pages and scripts must not keep admin rights.
		if _, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND id_hash != ?`, id, hashToken(keep)); err != nil {
			return err
		}
		return revokeUserTokens(ctx, tx, id)
	})
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrLastAdmin) {
		return err
	}
	if err != nil {
		return fmt.Errorf("db: unable to set role of user %d: %w", id, err)
	}
	return nil
}

// RemoveUser deletes an account and everything it owns; the last admin
// cannot be removed. Its usage stays in the roll-ups, under its id.
func (s *Store) RemoveUser(ctx context.Context, id int64) error {
	defer s.sessions.clear()
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := ensureOtherAdmin(ctx, tx, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id)
		if err != nil {
			return err
		}
		return affectedOne(res)
	})
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrLastAdmin) {
		return err
	}
	if err != nil {
		return fmt.Errorf("db: unable to remove user %d: %w", id, err)
	}
	return nil
}

// ensureOtherAdmin fails with ErrLastAdmin when id is the only admin.
func ensureOtherAdmin(ctx context.Context, tx *sql.Tx, id int64) error {
	var others int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE role = 'admin' AND id != ?`, id).Scan(&others)
	if err != nil {
		return err
	}
	var role string
	err = tx.QueryRowContext(ctx, `SELECT role FROM users WHERE id = ?`, id).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	if role == RoleAdmin && others == 0 {
		return ErrLastAdmin
	}
	return nil
}

func affectedOne(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
