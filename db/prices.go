package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ModelPrice is an admin's price for one model of one provider, in USD
// per million tokens, with when and by whom it was set. It is in force
// over the provider's listing until removed.
type ModelPrice struct {
	Provider    string
	Model       string
	Input       float64
	Output      float64
	CachedInput float64
	Reasoning   float64
	SetAt       time.Time
	SetBy       int64  // 0 when the admin was removed since
	SetByName   string // "" when the admin was removed since
}

const modelPriceColumns = `p.provider, p.model, p.input, p.output, p.cached_input, p.reasoning, p.set_at, ifnull(p.set_by, 0),
	ifnull((SELECT username FROM users WHERE id = p.set_by), '')`

func scanModelPrice(row interface{ Scan(...any) error }) (ModelPrice, error) {
	var p ModelPrice
	var at int64
	err := row.Scan(&p.Provider, &p.Model, &p.Input, &p.Output, &p.CachedInput, &p.Reasoning, &at, &p.SetBy, &p.SetByName)
	p.SetAt = time.UnixMilli(at)
	return p, err
}

// ModelPrice loads the admin's price of provider's model; ErrNotFound
// when none is set.
func (s *Store) ModelPrice(ctx context.Context, provider, model string) (ModelPrice, error) {
	p, err := scanModelPrice(s.r.QueryRowContext(ctx, `SELECT `+modelPriceColumns+` FROM model_prices p WHERE provider = ? AND model = ?`, provider, model))
	if errors.Is(err, sql.ErrNoRows) {
		return ModelPrice{}, ErrNotFound
	}
	if err != nil {
		return ModelPrice{}, fmt.Errorf("db: unable to load the price of %s/%s: %w", provider, model, err)
	}
	return p, nil
}

// ModelPrices lists every price an admin set, by provider and model.
func (s *Store) ModelPrices(ctx context.Context) ([]ModelPrice, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+modelPriceColumns+` FROM model_prices p ORDER BY provider, model`)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list prices: %w", err)
	}
	defer rows.Close()
	var out []ModelPrice
	for rows.Next() {
		p, err := scanModelPrice(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to list prices: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: unable to list prices: %w", err)
	}
	return out, nil
}

// SetModelPrice sets (or replaces) the admin's price of p.Provider's
// p.Model, as set by p.SetBy at p.SetAt. Runs already finished keep the
// price they were costed at.
func (s *Store) SetModelPrice(ctx context.Context, p ModelPrice) error {
	_, err := s.w.ExecContext(ctx, `
INSERT INTO model_prices (provider, model, input, output, cached_input, reasoning, set_at, set_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (provider, model) DO UPDATE SET input = excluded.input, output = excluded.output, cached_input = excluded.cached_input,
	reasoning = excluded.reasoning, set_at = excluded.set_at, set_by = excluded.set_by`,
		p.Provider, p.Model, p.Input, p.Output, p.CachedInput, p.Reasoning, p.SetAt.UnixMilli(), nullID(p.SetBy))
	if err != nil {
		return fmt.Errorf("db: unable to set the price of %s/%s: %w", p.Provider, p.Model, err)
	}
	return nil
}

// RemoveModelPrice removes the admin's price of provider's model, so
// that the provider's listing is in force again; ErrNotFound when none
// was set.
func (s *Store) RemoveModelPrice(ctx context.Context, provider, model string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM model_prices WHERE provider = ? AND model = ?`, provider, model)
	if err != nil {
		return fmt.Errorf("db: unable to remove the price of %s/%s: %w", provider, model, err)
	}
	return affectedOne(res)
}
