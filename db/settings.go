package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Setting keys kept in the settings table.
const (
	SettingSecret     = "secret"      // generated when KNOBS_SECRET is unset
	SettingSignUpMode = "signup_mode" // "invite" (default) or "open"
)

// Setting returns a setting's value, or "" when it was never set.
func (s *Store) Setting(ctx context.Context, key string) (string, error) {
	var v string
	err := s.r.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("db: unable to read setting %s: %w", key, err)
	}
	return v, nil
}

// SetSetting stores a setting's value.
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	_, err := s.w.ExecContext(ctx,
		`INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("db: unable to write setting %s: %w", key, err)
	}
	return nil
}

// SettingOrInit returns a setting's value, storing init() first when it
// was never set; created says whether it was. Two processes starting at
// once agree on one value.
func (s *Store) SettingOrInit(ctx context.Context, key string, init func() string) (value string, created bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&value)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		value, created = init(), true
		_, err = tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)`, key, value)
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("db: unable to initialise setting %s: %w", key, err)
	}
	return value, created, nil
}
