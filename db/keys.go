package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Team is the owner id of team-wide provider keys.
const Team int64 = 0

// ProviderKey is a stored API key, sealed; only its last four characters
// are ever shown.
type ProviderKey struct {
	Provider  string
	UserID    int64 // Team for a team-wide key
	Sealed    []byte
	Last4     string
	UpdatedAt time.Time
}

func ownerArg(userID int64) any {
	if userID == Team {
		return nil
	}
	return userID
}

// SetProviderKey stores (or replaces) the key of owner for provider.
func (s *Store) SetProviderKey(ctx context.Context, owner int64, provider string, sealed []byte, last4 string) error {
	_, err := s.w.ExecContext(ctx, `
INSERT INTO provider_keys (user_id, provider, sealed, last4, updated_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (ifnull(user_id, 0), provider) DO UPDATE SET sealed = excluded.sealed, last4 = excluded.last4, updated_at = excluded.updated_at`,
		ownerArg(owner), provider, sealed, last4, time.Now().Unix())
	if err != nil {
		return fmt.Errorf("db: unable to store key for %s: %w", provider, err)
	}
	return nil
}

// RemoveProviderKey deletes the key of owner for provider.
func (s *Store) RemoveProviderKey(ctx context.Context, owner int64, provider string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM provider_keys WHERE ifnull(user_id, 0) = ? AND provider = ?`, owner, provider)
	if err != nil {
		return fmt.Errorf("db: unable to remove key for %s: %w", provider, err)
	}
	return affectedOne(res)
}

// ProviderKeys lists owner's keys (Team for the team-wide ones).
func (s *Store) ProviderKeys(ctx context.Context, owner int64) ([]ProviderKey, error) {
	rows, err := s.r.QueryContext(ctx,
		`SELECT provider, ifnull(user_id, 0), sealed, last4, updated_at FROM provider_keys WHERE ifnull(user_id, 0) = ? ORDER BY provider`, owner)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list keys: %w", err)
	}
	defer rows.Close()
	var out []ProviderKey
	for rows.Next() {
		var k ProviderKey
		var updated int64
		if err := rows.Scan(&k.Provider, &k.UserID, &k.Sealed, &k.Last4, &updated); err != nil {
			return nil, fmt.Errorf("db: unable to list keys: %w", err)
		}
		k.UpdatedAt = time.Unix(updated, 0)
		out = append(out, k)
	}
	return out, rows.Err()
}

// EffectiveKey returns the key that wins for user on provider: the user's
// own, else the team's. ErrNotFound means neither is stored.
func (s *Store) EffectiveKey(ctx context.Context, user int64, provider string) (ProviderKey, error) {
	var k ProviderKey
	var updated int64
	err := s.r.QueryRowContext(ctx, `
SELECT provider, ifnull(user_id, 0), sealed, last4, updated_at FROM provider_keys
WHERE provider = ? AND (user_id = ? OR user_id IS NULL)
ORDER BY user_id IS NULL LIMIT 1`, provider, user).Scan(&k.Provider, &k.UserID, &k.Sealed, &k.Last4, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return ProviderKey{}, ErrNotFound
	}
	if err != nil {
		return ProviderKey{}, fmt.Errorf("db: unable to load key for %s: %w", provider, err)
	}
	k.UpdatedAt = time.Unix(updated, 0)
	return k, nil
}

// CustomProvider is an OpenAI-compatible endpoint added by an admin.
type CustomProvider struct {
	ID        string
	Name      string
	BaseURL   string
	CreatedAt time.Time
}

// ErrProviderTaken is returned when a custom provider's id or name is in use.
var ErrProviderTaken = errors.New("db: provider name taken")

// CustomProviders lists the custom providers by name.
func (s *Store) CustomProviders(ctx context.Context) ([]CustomProvider, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, name, base_url, created_at FROM providers ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list providers: %w", err)
	}
	defer rows.Close()
	var out []CustomProvider
	for rows.Next() {
		var p CustomProvider
		var created int64
		if err := rows.Scan(&p.ID, &p.Name, &p.BaseURL, &created); err != nil {
			return nil, fmt.Errorf("db: unable to list providers: %w", err)
		}
		p.CreatedAt = time.Unix(created, 0)
		out = append(out, p)
	}
	return out, rows.Err()
}

// CustomProvider loads one custom provider.
func (s *Store) CustomProvider(ctx context.Context, id string) (CustomProvider, error) {
	var p CustomProvider
	var created int64
	err := s.r.QueryRowContext(ctx, `SELECT id, name, base_url, created_at FROM providers WHERE id = ?`, id).
		Scan(&p.ID, &p.Name, &p.BaseURL, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return CustomProvider{}, ErrNotFound
	}
	if err != nil {
		return CustomProvider{}, fmt.Errorf("db: unable to load provider %s: %w", id, err)
	}
	p.CreatedAt = time.Unix(created, 0)
	return p, nil
}

// CreateCustomProvider adds a provider, with its team key when sealed is
// not nil, in one transaction.
func (s *Store) CreateCustomProvider(ctx context.Context, p CustomProvider, sealed []byte, last4 string) error {
	now := time.Now().Unix()
	err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO providers (id, name, base_url, created_at) VALUES (?, ?, ?, ?)`,
			p.ID, p.Name, p.BaseURL, now)
		if err != nil {
			if strings.Contains(err.Error(), "UNIQUE constraint failed") {
				return ErrProviderTaken
			}
			return err
		}
		if sealed == nil {
			return nil
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO provider_keys (user_id, provider, sealed, last4, updated_at) VALUES (NULL, ?, ?, ?, ?)`,
			p.ID, sealed, last4, now)
		return err
	})
	if errors.Is(err, ErrProviderTaken) {
		return err
	}
	if err != nil {
		return fmt.Errorf("db: unable to create provider %s: %w", p.Name, err)
	}
	return nil
}

// RemoveCustomProvider deletes a provider and every key stored for it.
func (s *Store) RemoveCustomProvider(ctx context.Context, id string) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM providers WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if err := affectedOne(res); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM provider_keys WHERE provider = ?`, id)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return err
	}
	if err != nil {
		return fmt.Errorf("db: unable to remove provider %s: %w", id, err)
	}
	return nil
}
