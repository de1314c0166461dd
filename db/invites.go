package db

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"
)

// ErrInviteInvalid is returned for an invite that is unknown, used or expired.
var ErrInviteInvalid = errors.New("db: invite unknown, used or expired")

// Invite is a single-use sign-up link made by an admin. Only a hash of
// its token is stored; the token itself is shown once, when it is made.
type Invite struct {
	ID        int64
	CreatedBy string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time // zero while unused
	UsedBy    string
}

// NewToken returns a URL-safe random token of 128 bits.
func NewToken() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails on Linux; crypto/rand panics itself if it cannot
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// CreateInvite makes an invite valid for ttl and returns its token.
func (s *Store) CreateInvite(ctx context.Context, by int64, ttl time.Duration) (string, error) {
	token := NewToken()
	now := time.Now()
	_, err := s.w.ExecContext(ctx,
		`INSERT INTO invites (token_hash, created_by, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		hashToken(token), by, now.Unix(), now.Add(ttl).Unix())
	if err != nil {
		return "", fmt.Errorf("db: unable to create invite: %w", err)
	}
	return token, nil
}

// InviteValid reports whether token is an unused, unexpired invite.
func (s *Store) InviteValid(ctx context.Context, token string) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx,
		`SELECT count(*) FROM invites WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?`,
		hashToken(token), time.Now().Unix()).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("db: unable to check invite: %w", err)
	}
	return n == 1, nil
}

// Invites lists the invites made, newest first.
func (s *Store) Invites(ctx context.Context) ([]Invite, error) {
	rows, err := s.r.QueryContext(ctx, `
SELECT i.id, c.username, i.created_at, i.expires_at, ifnull(i.used_at, 0), ifnull(u.username, '')
FROM invites i JOIN users c ON c.id = i.created_by LEFT JOIN users u ON u.id = i.used_by
ORDER BY i.id DESC LIMIT 50`)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list invites: %w", err)
	}
	defer rows.Close()
	var out []Invite
	for rows.Next() {
		var in Invite
		var created, expires, used int64
		if err := rows.Scan(&in.ID, &in.CreatedBy, &created, &expires, &used, &in.UsedBy); err != nil {
			return nil, fmt.Errorf("db: unable to list invites: %w", err)
		}
		in.CreatedAt, in.ExpiresAt = time.Unix(created, 0), time.Unix(expires, 0)
		if used != 0 {
			in.UsedAt = time.Unix(used, 0)
		}
		out = append(out, in)
	}
	return out, rows.Err()
}

// RevokeInvite deletes an unused invite.
func (s *Store) RevokeInvite(ctx context.Context, id int64) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM invites WHERE id = ? AND used_at IS NULL`, id)
	if err != nil {
		return fmt.Errorf("db: unable to revoke invite %d: %w", id, err)
	}
	return affectedOne(res)
}
