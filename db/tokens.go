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

// Token scopes: read sees what the user may see; write also changes it.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
)

// TokenPrefix starts every personal API token, so that a token is
// recognisable in a script or a secret scanner.
const TokenPrefix = "knobs_"

// tokenShown is how many characters of a token its list shows: the
// prefix and 6 of the random part, too few to guess the rest from.
const tokenShown = len(TokenPrefix) + 6

// tokenTouchEvery is how stale a token's last-used time may get before a
// request writes it again: one write per token per interval, not one per
// request.
const tokenTouchEvery = time.Minute

// ErrTokenInvalid is returned for a token that is unknown, revoked or
// expired.
var ErrTokenInvalid = errors.New("db: API token unknown, revoked or expired")

// Token is a personal API token as its owner sees it listed: never the
// secret, which is shown once, when it is made.
type Token struct {
	ID        int64
	UserID    int64
	Name      string
	Scope     string
	Prefix    string    // the first characters of the token
	CreatedAt time.Time //
	ExpiresAt time.Time // zero: never
	LastUsed  time.Time // zero: never used
	RevokedAt time.Time // zero: live
}

// Live reports whether t still authenticates at now.
func (t Token) Live(now time.Time) bool {
	return t.RevokedAt.IsZero() && (t.ExpiresAt.IsZero() || now.Before(t.ExpiresAt))
}

// NewTokenInput is what a new token is made of.
type NewTokenInput struct {
	User    int64
	Name    string
	Scope   string
	Expires time.Time // zero: never
}

// newAPIToken returns "knobs_" and 256 random bits, URL-safe.
func newAPIToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// CreateToken makes a personal API token at now and returns it with its
// secret, which is not stored: only its hash is.
func (s *Store) CreateToken(ctx context.Context, in NewTokenInput, now time.Time) (Token, string, error) {
	secret := newAPIToken()
	t := Token{UserID: in.User, Name: in.Name, Scope: in.Scope, Prefix: secret[:tokenShown],
		CreatedAt: time.Unix(now.Unix(), 0), ExpiresAt: in.Expires}
	res, err := s.w.ExecContext(ctx, `INSERT INTO api_tokens (user_id, name, scope, prefix, hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		in.User, in.Name, in.Scope, t.Prefix, hashToken(secret), now.Unix(), nullTime(in.Expires))
	if err != nil {
		return Token{}, "", fmt.Errorf("db: unable to create an API token for user %d: %w", in.User, err)
	}
	if t.ID, err = res.LastInsertId(); err != nil {
		return Token{}, "", fmt.Errorf("db: unable to create an API token for user %d: %w", in.User, err)
	}
	return t, secret, nil
}

const tokenColumns = `t.id, t.user_id, t.name, t.scope, t.prefix, t.created_at, t.expires_at, t.last_used_at, t.revoked_at`

func scanToken(row interface{ Scan(...any) error }, extra ...any) (Token, error) {
	var t Token
	var created int64
	var expires, used, revoked sql.NullInt64
	err := row.Scan(append([]any{&t.ID, &t.UserID, &t.Name, &t.Scope, &t.Prefix, &created, &expires, &used, &revoked}, extra...)...)
	t.CreatedAt, t.ExpiresAt, t.LastUsed, t.RevokedAt = time.Unix(created, 0), fromNull(expires), fromNull(used), fromNull(revoked)
	return t, err
}

// TokenUser returns the user a live token authenticates at now, and the
// token; anything else is ErrTokenInvalid. The user is read with the
// token, so a changed role counts at once. A token not used for a while
// is marked used.
func (s *Store) TokenUser(ctx context.Context, secret string, now time.Time) (User, Token, error) {
	var u User
	var userCreated int64
	t, err := scanToken(s.r.QueryRowContext(ctx, `
SELECT `+tokenColumns+`, u.id, u.username, u.password_hash, u.role, u.created_at
FROM api_tokens t JOIN users u ON u.id = t.user_id
WHERE t.hash = ?`, hashToken(secret)), &u.ID, &u.Username, &u.PasswordHash, &u.Role, &userCreated)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, Token{}, ErrTokenInvalid
	}
	if err != nil {
		return User{}, Token{}, fmt.Errorf("db: unable to load an API token: %w", err)
	}
	u.CreatedAt = time.Unix(userCreated, 0)
	if !t.Live(now) {
		return User{}, Token{}, ErrTokenInvalid
	}
	if t.LastUsed.IsZero() || now.Sub(t.LastUsed) >= tokenTouchEvery {
		if _, err := s.w.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ?`, now.Unix(), t.ID); err != nil {
			return User{}, Token{}, fmt.Errorf("db: unable to mark API token %d used: %w", t.ID, err)
		}
		t.LastUsed = time.Unix(now.Unix(), 0)
	}
	return u, t, nil
}

// Tokens lists user's tokens that are not revoked (expired ones too),
// newest first: at most limit of them with ids below before (0: from the
// newest).
func (s *Store) Tokens(ctx context.Context, user, before int64, limit int) ([]Token, error) {
	if before <= 0 {
		before = 1<<63 - 1
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens t WHERE t.user_id = ? AND t.id < ? AND t.revoked_at IS NULL ORDER BY t.id DESC LIMIT ?`,
		user, before, limit)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list the API tokens of user %d: %w", user, err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to list the API tokens of user %d: %w", user, err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: unable to list the API tokens of user %d: %w", user, err)
	}
	return out, nil
}

// RevokeToken ends user's token id at now; another user's token, or none,
// is ErrNotFound. Revoking a revoked token changes nothing.
func (s *Store) RevokeToken(ctx context.Context, user, id int64, now time.Time) error {
	res, err := s.w.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? AND user_id = ?`, now.Unix(), id, user)
	if err != nil {
		return fmt.Errorf("db: unable to revoke API token %d: %w", id, err)
	}
	return affectedOne(res)
}

// revokeUserTokens ends every live token of user, in the transaction of
// the change that calls for it (a password change, a demotion).
func revokeUserTokens(ctx context.Context, tx *sql.Tx, user int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL`, time.Now().Unix(), user)
	return err
}

func nullTime(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.Unix(), Valid: true}
}

func fromNull(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.Unix(v.Int64, 0)
}
