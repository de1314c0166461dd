package web_test

import (
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"knobs/db"
)

// usageBenchFile copies the database of a year of 1,000,000 runs' roll-ups
// that db's usage benchmarks build and keep in the temp directory
// (db/usage_bench_test.go) to a file of b's own; with models set, the
// team's roll-up also gets that many more priced models, each with a cost
// every day of the year, as a team trying many models has. The benchmark
// is skipped until db's has built the file.
func usageBenchFile(b *testing.B, models int) string {
	b.Helper()
	found, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("knobs-usage-bench-v%d-s*-1000000.db", db.SchemaVersion())))
	if len(found) == 0 {
		b.Skip("no usage bench database: build it with go test -run '^$' -bench UsagePageYear ./db/")
	}
	image, err := os.ReadFile(found[len(found)-1])
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "knobs.db")
	if err := os.WriteFile(path, image, 0o600); err != nil {
		b.Fatal(err)
	}
	if models == 0 {
		return path
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	end := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).UnixMilli() / (24 * 3600 * 1000)
	_, err = raw.Exec(`
WITH RECURSIVE d(day) AS (SELECT ?1 - 364 UNION ALL SELECT day + 1 FROM d WHERE day < ?1),
	m(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM m WHERE i < ?2)
INSERT INTO usage_daily_team (day, provider, model, calls, input_tokens, output_tokens, cost_usd)
SELECT day, 'acme', 'acme-' || i, 10, 1000, 1000, 0.001 * i FROM d, m`, end, models)
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkUsagePageHTTP is GET /usage for an admin over a whole year of
// everyone's usage by day, through the server: the roll-up queries, the
// page's template with its table and chart, and the response. bytes/page
// is the HTML sent, rects/page the chart's bars.
func BenchmarkUsagePageHTTP(b *testing.B) {
	for _, extra := range []int{0, 40} {
		b.Run(fmt.Sprintf("models=%d", 7+extra), func(b *testing.B) {
			_, admin := newTeam(b, withEnv("KNOBS_DB", usageBenchFile(b, extra)))
			var size, rects int
			for b.Loop() {
				r := admin.get("/usage?from=2025-12-01&to=2026-11-30&group_by=day")
				if r.status != http.StatusOK {
					b.Fatalf("GET /usage: %d", r.status)
				}
				size, rects = len(r.body), strings.Count(r.body, "<rect x=")
			}
			b.ReportMetric(float64(size), "bytes/page")
			b.ReportMetric(float64(rects), "rects/page")
		})
	}
}
