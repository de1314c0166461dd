// Package retention removes runs older than the admin's retention setting.
package retention

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"knobs/db"
)

// Choices are the retention periods an admin can set, in days; 0 keeps
// runs forever.
var Choices = []int{0, 7, 30, 90, 365}

// Store is what the purge reads and deletes; *db.Store is one.
type Store interface {
	Setting(ctx context.Context, key string) (string, error)
	PurgeRuns(ctx context.Context, before time.Time) (int64, error)
}

// Days reads the retention setting; 0 keeps runs forever.
func Days(ctx context.Context, store Store) (int, error) {
	v, err := store.Setting(ctx, db.SettingRetentionDays)
	if err != nil {
		return 0, err
	}
	return ParseDays(v)
}

// ParseDays reads a stored retention setting: "" is forever (0). A value
// that is not a whole number of days is an error, and counts as forever,
// so that nothing is deleted on a misreading.
func ParseDays(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	days, err := strconv.Atoi(v)
	if err != nil || days < 0 {
		return 0, fmt.Errorf("retention: the setting %s is %q, not a number of days", db.SettingRetentionDays, v)
	}
	return days, nil
}

// PurgeExpired deletes the runs created more than the retention period
// before now (runs still running stay) and logs how many went. What they
// cost stays in the usage roll-ups. It does
// nothing when runs are kept forever.
func PurgeExpired(ctx context.Context, store Store, now time.Time, log *slog.Logger) (int64, error) {
	days, err := Days(ctx, store)
	if err != nil || days == 0 {
		return 0, err
	}
	n, err := store.PurgeRuns(ctx, now.AddDate(0, 0, -days))
	if n > 0 {
		log.Info("removed runs past the retention period", "runs", n, "days", days)
	}
	return n, err
}
