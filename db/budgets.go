package db

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"time"
)

// DefaultWarnAt is the share of a monthly cap at which users are warned
// when an admin has not chosen another.
const DefaultWarnAt = 0.8

// Budgets are the monthly caps an admin sets, in US dollars, counted over
// the calendar month in UTC. A nil cap is no cap.
type Budgets struct {
	TeamUSD        *float64
	UserDefaultUSD *float64
	// Users are caps of single users, over the default.
	Users map[int64]float64
	// Providers are caps on what the whole team spends on one provider.
	Providers map[string]float64
	// WarnAt is the share of a cap, in (0, 1], at which users are warned.
	WarnAt float64
	// TokenCap bounds the tokens of runs whose cost is not known (no
	// price) that the team may use in a month; nil: no cap.
	TokenCap *int64
	// Exempt are the users no cap applies to, in id order.
	Exempt []int64
}

// UserCap is the cap that applies to user: their own, else the default;
// nil when neither is set.
func (b Budgets) UserCap(user int64) *float64 {
	if usd, ok := b.Users[user]; ok {
		return &usd
	}
	return b.UserDefaultUSD
}

// IsExempt reports whether no cap applies to user.
func (b Budgets) IsExempt(user int64) bool {
	_, ok := slices.BinarySearch(b.Exempt, user)
	return ok
}

// Budgets reads the caps.
func (s *Store) Budgets(ctx context.Context) (Budgets, error) {
	b := Budgets{Users: map[int64]float64{}, Providers: map[string]float64{}, WarnAt: DefaultWarnAt}
	var team, def sql.NullFloat64
	var tokens sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT team_usd, user_default_usd, warn_at, token_cap FROM budget WHERE id = 1`).
		Scan(&team, &def, &b.WarnAt, &tokens)
	if err != nil && err != sql.ErrNoRows {
		return Budgets{}, fmt.Errorf("db: unable to read the budgets: %w", err)
	}
	if team.Valid {
		b.TeamUSD = &team.Float64
	}
	if def.Valid {
		b.UserDefaultUSD = &def.Float64
	}
	if tokens.Valid {
		b.TokenCap = &tokens.Int64
	}
	rows, err := s.r.QueryContext(ctx, `SELECT user_id, usd, exempt FROM budget_users ORDER BY user_id`)
	if err != nil {
		return Budgets{}, fmt.Errorf("db: unable to read the users' budgets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var usd sql.NullFloat64
		var exempt bool
		if err := rows.Scan(&id, &usd, &exempt); err != nil {
			return Budgets{}, fmt.Errorf("db: unable to read the users' budgets: %w", err)
		}
		if usd.Valid {
			b.Users[id] = usd.Float64
		}
		if exempt {
			b.Exempt = append(b.Exempt, id)
		}
	}
	if err := rows.Err(); err != nil {
		return Budgets{}, fmt.Errorf("db: unable to read the users' budgets: %w", err)
	}
	prows, err := s.r.QueryContext(ctx, `SELECT provider, usd FROM budget_providers`)
	if err != nil {
		return Budgets{}, fmt.Errorf("db: unable to read the providers' budgets: %w", err)
	}
	defer prows.Close()
	for prows.Next() {
		var p string
		var usd float64
		if err := prows.Scan(&p, &usd); err != nil {
			return Budgets{}, fmt.Errorf("db: unable to read the providers' budgets: %w", err)
		}
		b.Providers[p] = usd
	}
	if err := prows.Err(); err != nil {
		return Budgets{}, fmt.Errorf("db: unable to read the providers' budgets: %w", err)
	}
	return b, nil
}

// SaveBudgets replaces every cap with b's, in one transaction. The
// caller has checked b (users that exist, amounts not negative, WarnAt
// in (0, 1]); the table's checks refuse the rest.
func (s *Store) SaveBudgets(ctx context.Context, b Budgets, now time.Time) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var tokens any
		if b.TokenCap != nil {
			tokens = *b.TokenCap
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO budget (id, team_usd, user_default_usd, warn_at, token_cap, updated_at) VALUES (1, ?, ?, ?, ?, ?)
	ON CONFLICT (id) DO UPDATE SET team_usd = excluded.team_usd, user_default_usd = excluded.user_default_usd,
	warn_at = excluded.warn_at, token_cap = excluded.token_cap, updated_at = excluded.updated_at`,
			nullable(b.TeamUSD), nullable(b.UserDefaultUSD), b.WarnAt, tokens, now.UnixMilli()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM budget_users`); err != nil {
			return err
		}
		users := map[int64]bool{}
		for id := range b.Users {
			users[id] = true
		}
		for _, id := range b.Exempt {
			users[id] = true
		}
		for _, id := range slices.Sorted(maps.Keys(users)) {
			var usd any
			if v, ok := b.Users[id]; ok {
				usd = v
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO budget_users (user_id, usd, exempt) VALUES (?, ?, ?)`,
				id, usd, slices.Contains(b.Exempt, id)); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM budget_providers`); err != nil {
			return err
		}
		for p, usd := range b.Providers {
			if _, err := tx.ExecContext(ctx, `INSERT INTO budget_providers (provider, usd) VALUES (?, ?)`, p, usd); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("db: unable to save the budgets: %w", err)
	}
	return nil
}

func nullable(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}
