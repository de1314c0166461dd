package handlers

import (
	"context"
	"time"
)

// CreateTokenInput is POST /api/v1/tokens.
type CreateTokenInput struct {
	Body struct {
		Name          string `json:"name" minLength:"1" maxLength:"100" doc:"What the token is for, such as the script or machine that uses it."`
		Scope         string `json:"scope" enum:"read,write" doc:"read: everything you may see; write: also change it."`
		ExpiresInDays *int   `json:"expires_in_days,omitempty" enum:"30,90,365" nullable:"true" doc:"Days until it expires: 30, 90 or 365; null or absent: never."`
	}
}

// CreatedToken is a token just made: the only time its secret is shown.
type CreatedToken struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Scope     string     `json:"scope" enum:"read,write"`
	Token     string     `json:"token" doc:"The secret, shown only now: send it as \"Authorization: Bearer <token>\"."`
	ExpiresAt *time.Time `json:"expires_at" nullable:"true" doc:"When it stops working; null: never."`
}

// CreateTokenOutput is the answer to POST /api/v1/tokens.
type CreateTokenOutput struct {
	Body CreatedToken
}

// CreateAPIToken makes a personal API token for the caller and shows its
// secret once.
func (h *Handler) CreateAPIToken(ctx context.Context, in *CreateTokenInput) (*CreateTokenOutput, error) {
	u := apiUser(ctx)
	days := 0
	if in.Body.ExpiresInDays != nil {
		days = *in.Body.ExpiresInDays
		if days == 0 {
			days = -1 // 0 is not a lifetime a client may ask for: null is never
		}
	}
	nt, fe := h.newTokenInput(u.ID, in.Body.Name, in.Body.Scope, days)
	if !fe.Empty() {
		return nil, apiInvalid(fe)
	}
	t, secret, err := h.store.CreateToken(ctx, nt, h.now())
	if err != nil {
		return nil, err
	}
	out := &CreateTokenOutput{Body: CreatedToken{ID: t.ID, Name: t.Name, Scope: t.Scope, Token: secret}}
	if !t.ExpiresAt.IsZero() {
		out.Body.ExpiresAt = &t.ExpiresAt
	}
	return out, nil
}
