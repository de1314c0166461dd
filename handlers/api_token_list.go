package handlers

import (
	"context"
	"time"

	"knobs/db"
)

// ListTokensInput is GET /api/v1/tokens.
type ListTokensInput struct {
	PageQuery
}

// TokenItem is a token as its list shows it: never the secret.
type TokenItem struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Scope     string     `json:"scope" enum:"read,write"`
	Prefix    string     `json:"prefix" doc:"The token's first characters, to tell it apart."`
	CreatedAt time.Time  `json:"created_at"`
	LastUsed  *time.Time `json:"last_used_at" nullable:"true" doc:"When it was last used, to the minute; null: never."`
	ExpiresAt *time.Time `json:"expires_at" nullable:"true" doc:"When it stops (or stopped) working; null: never."`
}

// ListTokensOutput is the answer to GET /api/v1/tokens.
type ListTokensOutput struct {
	Body Page[TokenItem]
}

// ListAPITokens lists the caller's tokens that are not revoked, newest
// first.
func (h *Handler) ListAPITokens(ctx context.Context, in *ListTokensInput) (*ListTokensOutput, error) {
	before, err := in.before()
	if err != nil {
		return nil, err
	}
	rows, err := h.store.Tokens(ctx, apiUser(ctx).ID, before, in.Limit+1)
	if err != nil {
		return nil, err
	}
	page := pageOf(in.PageQuery, rows, func(t db.Token) int64 { return t.ID }, func(t db.Token) TokenItem {
		return TokenItem{ID: t.ID, Name: t.Name, Scope: t.Scope, Prefix: t.Prefix, CreatedAt: t.CreatedAt,
			LastUsed: timeOrNil(t.LastUsed), ExpiresAt: timeOrNil(t.ExpiresAt)}
	})
	return &ListTokensOutput{Body: page}, nil
}

// timeOrNil is t, or nil for the zero time (JSON null).
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
