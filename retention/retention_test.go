package retention_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"knobs/db"
	"knobs/retention"
)

func TestPurgeExpired(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	tests := []struct {
		name    string
		setting string // "" = never set
		kept    []int  // ages in days of the runs that stay, of 1, 8, 31, 100 and 400 days
		wantErr bool
	}{
		{"never set keeps all", "", []int{1, 8, 31, 100, 400}, false},
		{"forever", "0", []int{1, 8, 31, 100, 400}, false},
		{"7 days", "7", []int{1}, false},
		{"30 days", "30", []int{1, 8}, false},
		{"365 days", "365", []int{1, 8, 31, 100}, false},
		{"a broken value deletes nothing", "thirty", []int{1, 8, 31, 100, 400}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, err := db.Open(ctx, filepath.Join(t.TempDir(), "knobs.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			user, err := store.CreateUser(ctx, db.SignUp{Username: "ada", PasswordHash: "hash"})
			if err != nil {
				t.Fatal(err)
			}
			ages := map[int64]int{}
			for _, age := range []int{1, 8, 31, 100, 400} {
				id, err := store.CreateRun(ctx, db.Run{UserID: user.ID, Provider: "sim", Endpoint: "chat", Model: "sim-fast",
					Spec: `{"provider":"sim","endpoint":"chat","body":{}}`, CreatedAt: now.AddDate(0, 0, -age)})
				if err != nil {
					t.Fatal(err)
				}
				if err := store.FinishRun(ctx, id, db.RunDone, "{}", "{}", nil, now); err != nil {
					t.Fatal(err)
				}
				ages[id] = age
			}
			// A run still running is never purged, however old.
			running, err := store.CreateRun(ctx, db.Run{UserID: user.ID, Provider: "sim", Endpoint: "chat", Model: "sim-fast",
				Spec: `{}`, CreatedAt: now.AddDate(0, 0, -1000)})
			if err != nil {
				t.Fatal(err)
			}
			if tt.setting != "" {
				if err := store.SetSetting(ctx, db.SettingRetentionDays, tt.setting); err != nil {
					t.Fatal(err)
				}
			}
			var logs bytes.Buffer
			n, err := retention.PurgeExpired(ctx, store, now, slog.New(slog.NewTextHandler(&logs, nil)))
			if (err != nil) != tt.wantErr {
				t.Fatalf("PurgeExpired: %v, want error %v", err, tt.wantErr)
			}
			if want := int64(5 - len(tt.kept)); n != want {
				t.Errorf("removed %d runs, want %d", n, want)
			}
			if n > 0 && !strings.Contains(logs.String(), "runs="+strconv.FormatInt(n, 10)) {
				t.Errorf("the log does not say how many runs went: %s", logs.String())
			}
			for id, age := range ages {
				_, err := store.Run(ctx, user.ID, id)
				want := slices.Contains(tt.kept, age)
				if (err == nil) != want {
					t.Errorf("run %d days old: kept %v, want %v (%v)", age, err == nil, want, err)
				}
			}
			if _, err := store.Run(ctx, user.ID, running); err != nil {
				t.Errorf("a running run was purged: %v", err)
			}
		})
	}
}
