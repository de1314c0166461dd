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

// ListedPrice is a model's price as its provider's own model listing
// gave it, in USD per million tokens; a zero cached or reasoning price is
// one the listing did not give. ReadAt is when Knobs first read this
// price: a listing that gives the same price again leaves it as it was.
type ListedPrice struct {
	Provider    string
	Model       string
	Input       float64
	Output      float64
	CachedInput float64
	Reasoning   float64
	ReadAt      time.Time
}

const listedPriceColumns = `provider, model, input, output, cached_input, reasoning, read_at`

func scanListedPrice(row interface{ Scan(...any) error }) (ListedPrice, error) {
	var p ListedPrice
	var at int64
	err := row.Scan(&p.Provider, &p.Model, &p.Input, &p.Output, &p.CachedInput, &p.Reasoning, &at)
	p.ReadAt = time.UnixMilli(at)
	return p, err
}

// ListedPrice loads the price provider's listing last gave model;
// ErrNotFound when Knobs never read one.
func (s *Store) ListedPrice(ctx context.Context, provider, model string) (ListedPrice, error) {
	p, err := scanListedPrice(s.r.QueryRowContext(ctx, `SELECT `+listedPriceColumns+` FROM listed_prices WHERE provider = ? AND model = ?`, provider, model))
	if errors.Is(err, sql.ErrNoRows) {
		return ListedPrice{}, ErrNotFound
	}
	if err != nil {
		return ListedPrice{}, fmt.Errorf("db: unable to load the listed price of %s/%s: %w", provider, model, err)
	}
	return p, nil
}

// ListedPrices lists the prices the providers' listings last gave, by
// provider and model.
func (s *Store) ListedPrices(ctx context.Context) ([]ListedPrice, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+listedPriceColumns+` FROM listed_prices ORDER BY provider, model`)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list listed prices: %w", err)
	}
	defer rows.Close()
	var out []ListedPrice
	for rows.Next() {
		p, err := scanListedPrice(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to list listed prices: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: unable to list listed prices: %w", err)
	}
	return out, nil
}

// KeepListedPrices keeps the prices a listing gave, in one transaction.
// A model's ReadAt changes only when its price did, so it stays the date
// the price was first read. An admin's price (model_prices) is a table of
// its own and is never touched.
func (s *Store) KeepListedPrices(ctx context.Context, prices []ListedPrice) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, p := range prices {
			_, err := tx.ExecContext(ctx, `
INSERT INTO listed_prices (provider, model, input, output, cached_input, reasoning, read_at) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (provider, model) DO UPDATE SET input = excluded.input, output = excluded.output, cached_input = excluded.cached_input,
	reasoning = excluded.reasoning, read_at = excluded.read_at
WHERE input != excluded.input OR output != excluded.output OR cached_input != excluded.cached_input OR reasoning != excluded.reasoning`,
				p.Provider, p.Model, p.Input, p.Output, p.CachedInput, p.Reasoning, p.ReadAt.UnixMilli())
			if err != nil {
				return fmt.Errorf("db: unable to keep the listed price of %s/%s: %w", p.Provider, p.Model, err)
			}
		}
		return nil
	})
}
