package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchRuns is how many runs the history benchmarks run against.
const benchRuns = 100_000

// seedVersion names the data seedRuns makes; change it when seedRuns
// changes, so that a cached file from before is not used.
const seedVersion = 1

var bench struct {
	once  sync.Once
	store *Store
	user  int64 // owns most runs; the others are interleaved
	ids   []int64
	err   error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.store != nil {
		bench.store.Close()
	}
	os.Exit(code)
}

// benchStore returns a store of benchRuns runs. Seeding takes most of a
// minute, so the file is kept in os.TempDir, named by schema and seed
// version, for the next make bench; delete knobs-bench-*.db to reclaim it.
func benchStore(b *testing.B) *Store {
	b.Helper()
	bench.once.Do(func() {
		ctx := context.Background()
		path := filepath.Join(os.TempDir(), fmt.Sprintf("knobs-bench-v%d-s%d-%d.db", SchemaVersion(), seedVersion, benchRuns))
		if _, err := os.Stat(path); err != nil {
			start := time.Now()
			tmp := path + ".seeding"
			os.Remove(tmp)
			if bench.err = seedRuns(ctx, tmp, benchRuns); bench.err != nil {
				return
			}
			if bench.err = os.Rename(tmp, path); bench.err != nil {
				return
			}
			fmt.Fprintf(os.Stderr, "seeded %d runs in %v into %s\n", benchRuns, time.Since(start).Round(time.Millisecond), path)
		}
		if bench.store, bench.err = Open(ctx, path); bench.err != nil {
			return
		}
		bench.err = bench.store.r.QueryRowContext(ctx, `SELECT id FROM users WHERE username = 'other'`).Scan(&bench.user)
		if bench.err != nil {
			return
		}
		rows, err := bench.store.r.QueryContext(ctx, `SELECT id FROM runs WHERE user_id = ? ORDER BY id`, bench.user)
		if bench.err = err; err != nil {
			return
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			rows.Scan(&id)
			bench.ids = append(bench.ids, id)
		}
		bench.err = rows.Err()
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.store
}

// Vocabulary of the seeded runs.
var (
	seedProviders = map[string][]string{
		"cerebras": {"llama-3.3-70b", "qwen-3-32b", "gpt-oss-120b"},
		"xai":      {"grok-4", "grok-3-mini"},
		"sim":      {"sim-small", "sim-large"},
		"acme":     {"acme-chat"},
	}
	seedTasks  = []string{"Explain", "Summarise", "Translate into French", "Write a haiku about", "List three facts about", "Compare", "Give an example of", "Debug this code about"}
	seedTopics = []string{"photosynthesis", "the French revolution", "binary search trees", "otters", "quantum entanglement", "sourdough bread", "the Roman empire", "TCP congestion control", "black holes", "jazz improvisation", "volcanoes", "garbage collection", "the stock market", "migrating birds", "SQLite indexes", "coral reefs"}
	seedWords  = strings.Fields(`the a of and to in is that it for on with as was at by an be this from or are which but not have has had were they
their one all there been more when if will would about can into some than them other these its then two could time only
system model token answer question example result value function data network energy light water river mountain forest city
garden ocean planet animal language history music theory memory process signal market price growth heat cold speed force
layer cache query index table column page tree branch leaf root node edge graph path cost ratio error fault retry queue stream`)
	seedStatuses = []string{"done", "done", "done", "done", "done", "done", "done", "done", "done", "done", "done", "done", "done", "done", "done", "done", "error", "error", "cancelled", "interrupted"}
)

// seedRuns builds a database of n realistic runs, fast: one transaction,
// prepared statements, the same summary and search text the store keeps.
// A third user owns 70% of the runs; two others share the rest.
func seedRuns(ctx context.Context, path string, n int) error {
	s, err := Open(ctx, path) // creates the schema
	if err != nil {
		return err
	}
	s.Close()
	// Without a journal every page is written once, not to the WAL first.
	w, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)&_pragma=cache_size(-500000)&_pragma=foreign_keys(1)")
	if err != nil {
		return err
	}
	w.SetMaxOpenConns(1)
	err = seedInto(ctx, w, n)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	return nil
}

func seedInto(ctx context.Context, w *sql.DB, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	providers := []string{"acme", "cerebras", "sim", "xai"} // in order, for a reproducible data set
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = seedWords[rng.IntN(len(seedWords))]
		}
		return strings.Join(w, " ")
	}
	start := time.Now().Add(-180 * 24 * time.Hour)
	var main int64
	err := (&Store{w: w}).tx(ctx, func(tx *sql.Tx) error {
		for i, name := range []string{"admin", "member", "other"} {
			res, err := tx.ExecContext(ctx, `INSERT INTO users (username, password_hash, role, created_at) VALUES (?, 'x', ?, 0)`, name, []string{"admin", "member", "member"}[i])
			if err != nil {
				return err
			}
			if i == 2 {
				main, _ = res.LastInsertId()
			}
		}
		insRun, err := tx.PrepareContext(ctx, `
INSERT INTO runs (id, user_id, provider, endpoint, model, spec, status, created_at, finished_at, raw_request, result, events,
	starred, note, preset_id, prompt_line, output_line, tokens, ttft_ms, tokens_per_sec, cost_usd)
VALUES (?, ?, ?, 'chat', ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer insRun.Close()
		insFTS, err := tx.PrepareContext(ctx, `INSERT INTO runs_fts (rowid, prompt_line, prompt, output_line, output) VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer insFTS.Close()
		for i := range n {
			user := main
			if r := rng.IntN(10); r >= 7 {
				user = main - 1 - int64(r%2)
			}
			provider := providers[rng.IntN(len(providers))]
			models := seedProviders[provider]
			model := models[rng.IntN(len(models))]
			status := seedStatuses[rng.IntN(len(seedStatuses))]
			prompt := fmt.Sprintf("%s %s.\n%s", seedTasks[rng.IntN(len(seedTasks))], seedTopics[rng.IntN(len(seedTopics))], words(20+rng.IntN(40)))
			spec, _ := json.Marshal(map[string]any{"provider": provider, "endpoint": "chat", "body": map[string]any{
				"model": model, "temperature": 0.7, "max_completion_tokens": 1024,
				"messages": []map[string]any{{"role": "system", "content": "You are a helpful assistant. " + words(10)}, {"role": "user", "content": prompt}},
			}})
			output := words(60 + rng.IntN(200))
			tokens := len(strings.Fields(output))
			result, _ := json.Marshal(map[string]any{
				"choices": []map[string]any{{"index": 0, "content": output, "finish_reason": "stop"}},
				"usage":   map[string]any{"prompt_tokens": 80, "completion_tokens": tokens, "total_tokens": 80 + tokens},
				"metrics": map[string]any{"ttft_ms": 80 + rng.Float64()*400, "total_ms": 2000, "tokens": tokens, "tokens_per_sec": 40 + rng.Float64()*1500, "cost_usd": 0.0004},
			})
			var events strings.Builder
			chunk := strings.Fields(output)
			for j := 0; j < len(chunk); j += 4 {
				fmt.Fprintf(&events, "id: %d\nevent: delta\ndata: {\"choice\":0,\"text\":%q}\n\n", j/4+1, strings.Join(chunk[j:min(j+4, len(chunk))], " ")+" ")
			}
			var preset any
			if rng.IntN(5) == 0 {
				preset = 1 + rng.IntN(20)
			}
			p, o := specText(string(spec)), resultText(string(result))
			if status == "error" {
				o = outputText{}
				result = []byte(`{"choices":[],"metrics":{"ttft_ms":0,"total_ms":300,"tokens":0,"tokens_per_sec":0},"error":{"kind":"rate_limit","status":429,"message":"Too many requests"}}`)
			}
			created := start.Add(time.Duration(i) * (180 * 24 * time.Hour / time.Duration(n)))
			id := int64(i + 1)
			_, err := insRun.ExecContext(ctx, id, user, provider, model, spec, status, created.UnixMilli(), created.Add(2*time.Second).UnixMilli(),
				spec, result, events.String(), rng.IntN(30) == 0, preset, p.PromptLine, o.OutputLine, o.Tokens, o.TTFTMs, o.TokensPerSec, o.CostUSD)
			if err != nil {
				return err
			}
			if _, err := insFTS.ExecContext(ctx, id, p.PromptLine, p.Prompt, o.OutputLine, o.Output); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = w.ExecContext(ctx, `INSERT INTO runs_fts (runs_fts) VALUES ('optimize'); PRAGMA optimize`)
	return err
}

// benchList runs one history query per iteration and reports ms/op.
func benchList(b *testing.B, f RunFilter) {
	s := benchStore(b)
	f.UserID = bench.user
	ctx := context.Background()
	var n int
	b.ResetTimer()
	for b.Loop() {
		runs, _, err := s.Runs(ctx, f)
		if err != nil {
			b.Fatal(err)
		}
		n = len(runs)
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/1e6, "ms/op")
	b.ReportMetric(float64(n), "rows")
}

// deep is a keyset cursor halfway down the user's history.
func deep() int64 { return bench.ids[len(bench.ids)/2] }

func BenchmarkHistoryFirstPage(b *testing.B) { benchList(b, RunFilter{}) }

func BenchmarkHistoryDeepPage(b *testing.B) {
	benchStore(b)
	benchList(b, RunFilter{Before: deep()})
}

func BenchmarkHistoryFilteredPage(b *testing.B) {
	benchStore(b)
	mid := time.Now().Add(-90 * 24 * time.Hour)
	for _, tt := range []struct {
		name string
		f    RunFilter
	}{
		{"provider", RunFilter{Provider: "xai"}},
		{"provider-deep", RunFilter{Provider: "xai", Before: deep()}},
		{"model", RunFilter{Model: "qwen-3-32b"}},
		{"status-error", RunFilter{Status: "error"}},
		{"status-error-deep", RunFilter{Status: "error", Before: deep()}},
		{"starred", RunFilter{Starred: true}},
		{"preset", RunFilter{PresetID: 3}},
		{"week", RunFilter{From: mid, To: mid.Add(7 * 24 * time.Hour)}},
		{"old-week", RunFilter{From: mid.Add(-80 * 24 * time.Hour), To: mid.Add(-73 * 24 * time.Hour)}},
		{"provider-model-status", RunFilter{Provider: "cerebras", Model: "gpt-oss-120b", Status: "cancelled"}},
		{"starred-provider-week", RunFilter{Starred: true, Provider: "sim", From: mid, To: mid.Add(7 * 24 * time.Hour)}},
		{"no-match", RunFilter{Provider: "xai", Model: "llama-3.3-70b"}},
	} {
		b.Run(tt.name, func(b *testing.B) { benchList(b, tt.f) })
	}
}

func BenchmarkHistorySearch(b *testing.B) {
	benchStore(b)
	for _, tt := range []struct {
		name string
		f    RunFilter
	}{
		{"common-word", RunFilter{Query: "river"}},
		{"rare-topic", RunFilter{Query: "otters"}},
		{"prefix", RunFilter{Query: "photo*"}},
		{"two-words", RunFilter{Query: "sourdough garden"}},
		{"phrase-punctuation", RunFilter{Query: `"TCP congestion"`}},
		{"deep-page", RunFilter{Query: "river", Before: deep()}},
		{"with-filter", RunFilter{Query: "volcanoes", Provider: "xai", Status: "done"}},
		{"rare-combination", RunFilter{Query: "otters quantum haiku"}},
		{"no-match", RunFilter{Query: "zeppelin"}},
	} {
		b.Run(tt.name, func(b *testing.B) { benchList(b, tt.f) })
	}
}

func BenchmarkHistoryFacets(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	for b.Loop() {
		if _, _, err := s.RunFacets(ctx, bench.user); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/1e6, "ms/op")
}

func BenchmarkRunLoad(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	id := deep()
	for b.Loop() {
		if _, err := s.Run(ctx, bench.user, id); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/1e6, "ms/op")
}
