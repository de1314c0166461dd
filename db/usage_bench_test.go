package db

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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
