package db

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"
)

// SessionIdle is how long a session lasts without being used.
const SessionIdle = 30 * 24 * time.Hour

// sessionTouchEvery is how stale a session's last-seen time may get
// before a request writes it again: one write per session per interval,
// not one per request.
const sessionTouchEvery = 10 * time.Minute

// newSessionToken returns 256 random bits, URL-safe.
func newSessionToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// CreateSession signs user in on one device and returns the token its
// cookie carries. Only a hash of the token is stored, so that a copy of
// the database cannot sign anyone in.
func (s *Store) CreateSession(ctx context.Context, user int64) (string, error) {
	token := newSessionToken()
	now := time.Now().Unix()
	_, err := s.w.ExecContext(ctx, `INSERT INTO sessions (id_hash, user_id, created_at, seen_at) VALUES (?, ?, ?, ?)`,
		hashToken(token), user, now, now)
	if err != nil {
		return "", fmt.Errorf("db: unable to create a session for user %d: %w", user, err)
	}
	return token, nil
}

// SessionUser returns the user whose live session token is. A session
// that was ended (sign-out, sign out everywhere, a password change, a
// role change, the account removed) or left unused for SessionIdle is
// ErrNotFound. A session not seen for a while is marked seen.
func (s *Store) SessionUser(ctx context.Context, token string) (User, error) {
	if token == "" {
		return User{}, ErrNotFound
	}
	key := string(hashToken(token))
	e, gen, ok := s.sessions.get(key)
	if !ok {
		var seen, created int64
		err := s.r.QueryRowContext(ctx, `
SELECT u.id, u.username, u.password_hash, u.role, u.created_at, s.seen_at
FROM sessions s JOIN users u ON u.id = s.user_id
WHERE s.id_hash = ?`, []byte(key)).Scan(&e.user.ID, &e.user.Username, &e.user.PasswordHash, &e.user.Role, &created, &seen)
		if errors.Is(err, sql.ErrNoRows) {
			return User{}, ErrNotFound
		}
		if err != nil {
			return User{}, fmt.Errorf("db: unable to load a session: %w", err)
		}
		e.user.CreatedAt, e.seen = time.Unix(created, 0), time.Unix(seen, 0)
		s.sessions.put(key, e, gen)
	}
	now := time.Now()
	if now.Sub(e.seen) > SessionIdle {
		if err := s.RemoveSession(ctx, token); err != nil {
			return User{}, err
		}
		return User{}, ErrNotFound
	}
	if now.Sub(e.seen) > sessionTouchEvery {
		if _, err := s.w.ExecContext(ctx, `UPDATE sessions SET seen_at = ? WHERE id_hash = ?`, now.Unix(), []byte(key)); err != nil {
			return User{}, fmt.Errorf("db: unable to mark a session seen: %w", err)
		}
		e.seen = time.Unix(now.Unix(), 0)
		s.sessions.put(key, e, gen)
	}
	return e.user, nil
}

// RemoveSession ends one session, as signing out does.
func (s *Store) RemoveSession(ctx context.Context, token string) error {
	defer s.sessions.clear()
	if _, err := s.w.ExecContext(ctx, `DELETE FROM sessions WHERE id_hash = ?`, hashToken(token)); err != nil {
		return fmt.Errorf("db: unable to end a session: %w", err)
	}
	return nil
}

// RemoveUserSessions ends every session of user but the one whose token
// is keep ("" keeps none), and returns how many it ended.
func (s *Store) RemoveUserSessions(ctx context.Context, user int64, keep string) (int64, error) {
	defer s.sessions.clear()
	res, err := s.w.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND id_hash != ?`, user, hashToken(keep))
	if err != nil {
		return 0, fmt.Errorf("db: unable to end the sessions of user %d: %w", user, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// CountUserSessions returns how many live sessions user has.
func (s *Store) CountUserSessions(ctx context.Context, user int64) (int, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE user_id = ? AND seen_at > ?`,
		user, time.Now().Add(-SessionIdle).Unix()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("db: unable to count the sessions of user %d: %w", user, err)
	}
	return n, nil
}

// PurgeSessions deletes sessions unused for SessionIdle.
func (s *Store) PurgeSessions(ctx context.Context) error {
	defer s.sessions.clear()
	if _, err := s.w.ExecContext(ctx, `DELETE FROM sessions WHERE seen_at <= ?`, time.Now().Add(-SessionIdle).Unix()); err != nil {
		return fmt.Errorf("db: unable to purge old sessions: %w", err)
	}
	return nil
}

// SetPassword changes user's password hash, ends every other session
// of theirs (keep is the session that made the change) and revokes their
// API tokens, in one transaction, so that whoever knew the old password
// is signed out and a token made with it stops working.
func (s *Store) SetPassword(ctx context.Context, user int64, hash, keep string) error {
	defer s.sessions.clear()
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, user)
		if err != nil {
			return err
		}
		if err := affectedOne(res); err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND id_hash != ?`, user, hashToken(keep)); err != nil {
			return err
		}
		return revokeUserTokens(ctx, tx, user)
	})
	if errors.Is(err, ErrNotFound) {
		return err
	}
	if err != nil {
		return fmt.Errorf("db: unable to set the password of user %d: %w", user, err)
	}
	return nil
}

// ErrResetInvalid is returned for a password reset link that is unknown,
// used or expired.
var ErrResetInvalid = errors.New("db: password reset link unknown, used or expired")

// CreatePasswordReset makes a single-use link, valid for ttl, with which
// user sets a new password; an admin (by) hands it over. Earlier unused
// links of the same user stop working. Only a hash of the token is kept.
func (s *Store) CreatePasswordReset(ctx context.Context, by, user int64, ttl time.Duration) (string, error) {
	token := NewToken()
	now := time.Now()
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE id = ?`, user).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, `UPDATE password_resets SET used_at = ? WHERE user_id = ? AND used_at IS NULL`, now.Unix(), user); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO password_resets (token_hash, user_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
			hashToken(token), user, by, now.Unix(), now.Add(ttl).Unix())
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("db: unable to create a password reset for user %d: %w", user, err)
	}
	return token, nil
}

// PasswordResetUser returns the user a live reset link is for.
func (s *Store) PasswordResetUser(ctx context.Context, token string) (User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx, `
SELECT u.id, u.username, u.password_hash, u.role, u.created_at
FROM password_resets p JOIN users u ON u.id = p.user_id
WHERE p.token_hash = ? AND p.used_at IS NULL AND p.expires_at > ?`, hashToken(token), time.Now().Unix()))
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, ErrResetInvalid
	}
	if err != nil {
		return User{}, fmt.Errorf("db: unable to check a password reset: %w", err)
	}
	return u, nil
}

// ResetPassword spends a reset link: it sets the user's password hash,
// ends every session of theirs, revokes their API tokens and returns the user, in one transaction,
// so that two uses of one link cannot both succeed.
func (s *Store) ResetPassword(ctx context.Context, token, hash string) (User, error) {
	defer s.sessions.clear()
	var u User
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id, user_id FROM password_resets WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?`,
			hashToken(token), time.Now().Unix()).Scan(&id, &u.ID)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrResetInvalid
		}
		if err != nil {
			return err
		}
		steps := []struct {
			q    string
			args []any
		}{
			{`UPDATE password_resets SET used_at = ? WHERE id = ?`, []any{time.Now().Unix(), id}},
			{`UPDATE users SET password_hash = ? WHERE id = ?`, []any{hash, u.ID}},
			{`DELETE FROM sessions WHERE user_id = ?`, []any{u.ID}},
			{`UPDATE api_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL`, []any{time.Now().Unix(), u.ID}},
		}
		for _, st := range steps {
			if _, err := tx.ExecContext(ctx, st.q, st.args...); err != nil {
				return err
			}
		}
		u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, u.ID))
		return err
	})
	if errors.Is(err, ErrResetInvalid) {
		return User{}, err
	}
	if err != nil {
		return User{}, fmt.Errorf("db: unable to reset a password: %w", err)
	}
	return u, nil
}
