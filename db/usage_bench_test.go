package db

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// usageBenchRuns is how many finished runs the usage benchmarks' roll-ups
// hold, spread over a year.
const usageBenchRuns = 1_000_000

// usageSeedVersion names the roll-ups seedUsage makes; change it when
// seedUsage or the roll-up tables change.
const usageSeedVersion = 3

var usageBench struct {
	once  sync.Once
	store *Store
	end   time.Time // the last day of the year seeded
	user  int64     // a member with an average share of the runs
	err   error
}

// usageBenchStore returns a store whose roll-ups hold a year of
// usageBenchRuns runs, each rolled up by addUsage as a run's ending is:
// 25 users, each on any of 7 models of 4 providers (the worst case for
// usage_daily: every user, model and day has calls); a third of the runs
// from one of their own 4 presets; a tenth the cells of one of 24
// experiments, each run by one user over 3 days; a twentieth the answers
// of one of 12 arenas, each made over 5 days; a twentieth failed; the
// simulator's and acme's calls unpriced. The file is kept in os.TempDir
// by schema version for the next run; delete knobs-usage-bench-*.db to
// reclaim it.
func usageBenchStore(b *testing.B) *Store {
	b.Helper()
	usageBench.once.Do(func() {
		ctx := context.Background()
		usageBench.end = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
		path := filepath.Join(os.TempDir(), fmt.Sprintf("knobs-usage-bench-v%d-s%d-%d.db", SchemaVersion(), usageSeedVersion, usageBenchRuns))
		if _, err := os.Stat(path); err != nil {
			start := time.Now()
			tmp := path + ".seeding"
			os.Remove(tmp)
			if usageBench.err = seedUsage(ctx, tmp, usageBench.end); usageBench.err != nil {
				return
			}
			if usageBench.err = os.Rename(tmp, path); usageBench.err != nil {
				return
			}
			fmt.Fprintf(os.Stderr, "rolled up %d runs in %v into %s\n", usageBenchRuns, time.Since(start).Round(time.Millisecond), path)
		}
		usageBench.store, usageBench.err = Open(ctx, path)
		usageBench.user = 7
	})
	if usageBench.err != nil {
		b.Fatal(usageBench.err)
	}
	return usageBench.store
}

func seedUsage(ctx context.Context, path string, end time.Time) error {
	s, err := Open(ctx, path)
	if err != nil {
		return err
	}
	defer s.Close()
	models := []struct {
		provider, model string
		priced          bool
	}{{"cerebras", "gpt-oss-120b", true}, {"cerebras", "llama3.1-8b", true}, {"xai", "grok-4-0709", true}, {"xai", "grok-3-mini", true},
		{"xai", "grok-code-fast-1", true}, {"sim", "sim-reasoning", false}, {"acme", "acme-chat", false}}
	rng := rand.New(rand.NewPCG(18, 18))
	first := unixDay(end) - 364
	type burst struct{ user, day int64 }
	bursts := func(n, days int) []burst {
		out := make([]burst, n)
		for i := range out {
			out[i] = burst{1 + int64(rng.IntN(25)), first + int64(rng.IntN(365-days))}
		}
		return out
	}
	experiments, arenas := bursts(24, 3), bursts(12, 5)
	const batch = 50_000
	for done := 0; done < usageBenchRuns; done += batch {
		err := s.tx(ctx, func(tx *sql.Tx) error {
			for range batch {
				m := models[rng.IntN(len(models))]
				k := usageKey{day: first + int64(rng.IntN(365)), user: 1 + int64(rng.IntN(25)), provider: m.provider, model: m.model}
				switch n := rng.IntN(20); {
				case n < 2:
					e := rng.IntN(len(experiments))
					k.experiment, k.user, k.day = 1+int64(e), experiments[e].user, experiments[e].day+int64(rng.IntN(3))
				case n < 3:
					a := rng.IntN(len(arenas))
					k.arena, k.user, k.day = 1+int64(a), arenas[a].user, arenas[a].day+int64(rng.IntN(5))
				}
				if rng.IntN(3) == 0 {
					k.preset = k.user*4 + int64(rng.IntN(4))
				}
				c := runCost{input: int64(rng.IntN(3000)), output: int64(rng.IntN(1500)), priced: m.priced}
				c.cached, c.reasoning = c.input/4, c.output/3
				if m.priced {
					c.costUSD = float64(c.input+c.output) * 0.5 / 1e6
				}
				if err := addUsage(ctx, tx, k, rng.IntN(20) == 0, c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkUsagePageYear is the queries of the usage page for an admin
// looking at a whole year of everyone's usage by day: the table
// (Usage) and the chart and unpriced list (UsageByDayAndModel).
func BenchmarkUsagePageYear(b *testing.B) {
	s := usageBenchStore(b)
	ctx := context.Background()
	from := usageBench.end.AddDate(0, 0, -364)
	var rows int
	for b.Loop() {
		rep, err := s.Usage(ctx, UsageQuery{From: from, To: usageBench.end, GroupBy: UsageByDay})
		if err != nil {
			b.Fatal(err)
		}
		days, err := s.UsageByDayAndModel(ctx, from, usageBench.end, 0)
		if err != nil {
			b.Fatal(err)
		}
		rows = len(rep.Rows) + len(days)
		if rep.Total.Calls != usageBenchRuns {
			b.Fatalf("the roll-ups count %d calls, want %d", rep.Total.Calls, usageBenchRuns)
		}
	}
	b.ReportMetric(float64(rows), "rows")
}

// BenchmarkUsagePageYearBy is the admin's year grouped otherwise.
func BenchmarkUsagePageYearBy(b *testing.B) {
	s := usageBenchStore(b)
	ctx := context.Background()
	from := usageBench.end.AddDate(0, 0, -364)
	for _, by := range []string{UsageByUser, UsageByModel, UsageByMonth, UsageByPreset, UsageByExperiment} {
		b.Run(by, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Usage(ctx, UsageQuery{From: from, To: usageBench.end, GroupBy: by}); err != nil {
					b.Fatal(err)
				}
				if _, err := s.UsageByDayAndModel(ctx, from, usageBench.end, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUsagePageMonth is the page as it opens: this month, by day.
func BenchmarkUsagePageMonth(b *testing.B) {
	s := usageBenchStore(b)
	ctx := context.Background()
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		if _, err := s.Usage(ctx, UsageQuery{From: from, To: usageBench.end, GroupBy: UsageByDay}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.UsageByDayAndModel(ctx, from, usageBench.end, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUsagePageMemberYear is a member's own year.
func BenchmarkUsagePageMemberYear(b *testing.B) {
	s := usageBenchStore(b)
	ctx := context.Background()
	from := usageBench.end.AddDate(0, 0, -364)
	for b.Loop() {
		if _, err := s.Usage(ctx, UsageQuery{From: from, To: usageBench.end, UserID: usageBench.user, GroupBy: UsageByModel}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.UsageByDayAndModel(ctx, from, usageBench.end, usageBench.user); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpentSinceMonth is the budgets' question: a user's spend on
// one provider this month.
func BenchmarkSpentSinceMonth(b *testing.B) {
	s := usageBenchStore(b)
	ctx := context.Background()
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		if _, _, err := s.SpentSince(ctx, from, usageBench.user, "xai"); err != nil {
			b.Fatal(err)
		}
	}
}

// migrationBenchRuns and migrationBenchResult are the history the usage
// migration is measured on: finished runs with long answers, as a team
// that has used Knobs for a while leaves them.
const (
	migrationBenchRuns   = 2_000
	migrationBenchResult = 200 << 10
)

// migrationBenchFile returns a database file left at the schema version
// before the usage migration, holding migrationBenchRuns finished runs
// whose results are each about migrationBenchResult bytes. It is kept in
// os.TempDir for the next run.
func migrationBenchFile(b *testing.B) string {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("knobs-usage-migration-v%d-%d.db", UsageVersion()-1, migrationBenchRuns))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp := path + ".seeding"
	os.Remove(tmp)
	if err := MigrateTo(ctx, tmp, UsageVersion()-1); err != nil {
		b.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+tmp+"?_pragma=busy_timeout(5000)")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	if _, err := raw.ExecContext(ctx, `INSERT INTO users (id, username, password_hash, role, created_at) VALUES (1, 'ada', 'x', 'admin', 0), (2, 'bob', 'x', 'member', 0)`); err != nil {
		b.Fatal(err)
	}
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	answer := strings.Repeat("All work and no play makes a long answer. ", migrationBenchResult/42)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	models := []struct{ provider, model string }{{"xai", "grok-3"}, {"cerebras", "gpt-oss-120b"}, {"sim", "sim-reasoning"}}
	for i := range migrationBenchRuns {
		m := models[i%len(models)]
		at := start.Add(time.Duration(i) * 3 * time.Hour).UnixMilli()
		status, cost := RunDone, float64(i%7)/1000
		if i%20 == 0 {
			status = RunError
		}
		if m.provider == "sim" {
			cost = 0
		}
		result := fmt.Sprintf(`{"choices":[{"index":0,"content":%q}],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"reasoning_tokens":%d,"cached_tokens":%d},"metrics":{"tokens":%d,"cost_usd":%g}}`,
			answer, 100+i%50, 2000+i%300, i%100, i%40, 2000+i%300, cost)
		_, err := tx.ExecContext(ctx, `
INSERT INTO runs (id, user_id, provider, endpoint, model, spec, status, created_at, finished_at, result, cost_usd, preset_id, experiment_id)
VALUES (?, ?, ?, 'chat', ?, '{}', ?, ?, ?, ?, ?, ?, ?)`,
			i+1, 1+i%2, m.provider, m.model, status, at, at+20_000, result, cost, nullID(int64(i%3)), nullID(int64(i%5)))
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkUsageMigration is Knobs' first start after the upgrade that
// brings the usage roll-ups, on migrationBenchRuns runs of 200 KB: how
// long the start waits on the migration, what it allocates and how large
// a write-ahead log it leaves (wal-MB), which the disk must hold until
// the next checkpoint.
func BenchmarkUsageMigration(b *testing.B) {
	src := migrationBenchFile(b)
	image, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	var wal int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "knobs.db")
		if err := os.WriteFile(path, image, 0o600); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if fi, err := os.Stat(path + "-wal"); err == nil {
			wal = fi.Size()
		}
		var calls int64
		if err := s.r.QueryRowContext(ctx, `SELECT sum(calls) FROM usage_daily_team`).Scan(&calls); err != nil || calls != migrationBenchRuns {
			b.Fatalf("the roll-ups count %d calls (%v), want %d", calls, err, migrationBenchRuns)
		}
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(wal)/1e6, "wal-MB")
}
