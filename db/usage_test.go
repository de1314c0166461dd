package db_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"knobs/db"
)

// ledgerRun is a finished run as the test made it, for recomputing usage
// without the store.
type ledgerRun struct {
	id                               int64
	user                             int64
	userName                         string
	provider, model                  string
	preset, experiment, arena        int64
	finished                         time.Time
	failed                           bool
	input, output, cached, reasoning int64
	cost                             float64
	priced                           bool
}

// recompute sums the runs as Usage should for grouping by, everyone's.
func recompute(runs []ledgerRun, removedUsers map[int64]bool, by string) map[string]db.UsageFigures {
	out := map[string]db.UsageFigures{}
	for _, r := range runs {
		var key string
		switch by {
		case db.UsageByUser:
			key = r.userName
			if removedUsers[r.user] {
				key = "removed user #" + strconv.FormatInt(r.user, 10)
			}
		case db.UsageByProvider:
			key = r.provider
		case db.UsageByModel:
			key = r.provider + "/" + r.model
		case db.UsageByDay:
			key = r.finished.UTC().Format(time.DateOnly)
		case db.UsageByMonth:
			key = r.finished.UTC().Format("2006-01")
		case db.UsageByPreset, db.UsageByExperiment, db.UsageByArena:
			id := map[string]int64{db.UsageByPreset: r.preset, db.UsageByExperiment: r.experiment, db.UsageByArena: r.arena}[by]
			key = "none"
			if id != 0 {
				key = "#" + strconv.FormatInt(id, 10) + " (removed)" // the test makes no presets, experiments or arenas
			}
		}
		f := out[key]
		f.Calls++
		if r.failed {
			f.Errors++
		}
		f.InputTokens += r.input
		f.OutputTokens += r.output
		f.CachedTokens += r.cached
		f.ReasoningTokens += r.reasoning
		if r.priced {
			f.CostUSD += r.cost
		} else {
			f.UnpricedCalls++
			f.UnpricedTokens += r.input + r.output
		}
		out[key] = f
	}
	return out
}

func sameFigures(a, b db.UsageFigures) bool {
	ca, cb := a.CostUSD, b.CostUSD
	a.CostUSD, b.CostUSD = 0, 0
	return a == b && math.Abs(ca-cb) < 1e-9
}

// checkUsage compares every grouping of the store's roll-ups over the
// whole period, everyone's and user's, with a recomputation from runs.
func checkUsage(t *testing.T, s *db.Store, from, to time.Time, all []ledgerRun, removed map[int64]bool, user int64, when string) {
	t.Helper()
	var own []ledgerRun
	for _, r := range all {
		if r.user == user {
			own = append(own, r)
		}
	}
	checkUsageOf(t, s, from, to, all, removed, 0, when)
	checkUsageOf(t, s, from, to, own, removed, user, when+", one user's")
}

func checkUsageOf(t *testing.T, s *db.Store, from, to time.Time, runs []ledgerRun, removed map[int64]bool, user int64, when string) {
	t.Helper()
	ctx := context.Background()
	for _, by := range []string{db.UsageByUser, db.UsageByProvider, db.UsageByModel, db.UsageByDay, db.UsageByMonth, db.UsageByPreset, db.UsageByExperiment, db.UsageByArena} {
		rep, err := s.Usage(ctx, db.UsageQuery{From: from, To: to, GroupBy: by, UserID: user})
		if err != nil {
			t.Fatalf("%s: usage by %s: %v", when, by, err)
		}
		want := recompute(runs, removed, by)
		got := map[string]db.UsageFigures{}
		var total db.UsageFigures
		for _, r := range rep.Rows {
			got[r.Key] = r.UsageFigures
			total.Calls += r.Calls
			total.CostUSD += r.CostUSD
		}
		if len(got) != len(want) {
			t.Fatalf("%s: by %s: %d groups, want %d:\n got %v\nwant %v", when, by, len(got), len(want), got, want)
		}
		for k, w := range want {
			if !sameFigures(got[k], w) {
				t.Errorf("%s: by %s, %q: got %+v, want %+v", when, by, k, got[k], w)
			}
		}
		if total.Calls != rep.Total.Calls || math.Abs(total.CostUSD-rep.Total.CostUSD) > 1e-9 || rep.Total.Calls != int64(len(runs)) {
			t.Errorf("%s: by %s: total %+v, rows add to %d calls, %d runs finished", when, by, rep.Total, total.Calls, len(runs))
		}
	}
}

// Runs are finished at random (users, providers, priced or not, errors,
// presets, experiments, arenas, days over three months) between random
// single deletes, a member's removal and retention purges. The roll-ups
// always equal a recomputation from every run ever finished: deletes do
// not take spend back. Before anything is deleted that is also a
// recomputation from the runs table itself.
func TestUsageRollUpsEqualRecomputation(t *testing.T) {
	ctx := context.Background()
	s, path := openStore(t)
	rng := rand.New(rand.NewPCG(18, 1))
	var users []int64
	names := map[int64]string{}
	for _, n := range []string{"ada", "bob", "cy", "dee"} {
		u, err := s.CreateUser(ctx, db.SignUp{Username: n, PasswordHash: "x", Open: true})
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, u.ID)
		names[u.ID] = n
	}
	models := []struct {
		provider, model string
		price           bool
	}{{"sim", "sim-reasoning", true}, {"sim", "sim-fast", false}, {"cerebras", "gpt-oss-120b", true}, {"local", "llama", false}, {"xai", "grok-3", true}}
	start := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	var ledger []ledgerRun
	removed := map[int64]bool{}
	finishSome := func(n int) {
		for range n {
			u := users[rng.IntN(len(users))]
			if removed[u] {
				continue
			}
			m := models[rng.IntN(len(models))]
			created := start.Add(time.Duration(rng.IntN(90*24*60)) * time.Minute)
			r := ledgerRun{user: u, userName: names[u], provider: m.provider, model: m.model, priced: m.price,
				finished: created.Add(time.Duration(rng.IntN(600)) * time.Second), failed: rng.IntN(6) == 0,
				input: int64(rng.IntN(4000)), output: int64(rng.IntN(2000))}
			r.cached = int64(rng.IntN(int(r.input) + 1))
			r.reasoning = int64(rng.IntN(int(r.output) + 1))
			if rng.IntN(3) == 0 {
				r.preset = int64(1 + rng.IntN(3))
			}
			if rng.IntN(4) == 0 {
				r.experiment = int64(1 + rng.IntN(2))
			} else if rng.IntN(5) == 0 {
				r.arena = int64(1 + rng.IntN(2))
			}
			result := map[string]any{"choices": []any{}, "usage": map[string]any{"prompt_tokens": r.input, "completion_tokens": r.output,
				"cached_tokens": r.cached, "reasoning_tokens": r.reasoning}}
			if m.price {
				r.cost = float64(rng.IntN(100000)) / 1e5
				result["metrics"] = map[string]any{"cost_usd": r.cost}
				result["price"] = map[string]any{"input": 1, "output": 2, "cached_input": 0.5, "reasoning": 2}
			}
			id, err := s.CreateRun(ctx, db.Run{UserID: u, Provider: m.provider, Endpoint: "chat", Model: m.model, Spec: "{}", CreatedAt: created,
				PresetID: r.preset, ExperimentID: r.experiment, ArenaID: r.arena})
			if err != nil {
				t.Fatal(err)
			}
			r.id = id
			status := db.RunDone
			if r.failed {
				status = db.RunError
			}
			body, _ := json.Marshal(result)
			if err := s.FinishRun(ctx, id, status, "", string(body), nil, r.finished); err != nil {
				t.Fatal(err)
			}
			// A second ending written for the same run counts once.
			if rng.IntN(10) == 0 {
				if err := s.FinishRun(ctx, id, status, "", string(body), nil, r.finished.Add(time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			ledger = append(ledger, r)
		}
	}
	from, to := start.AddDate(0, 0, -1), start.AddDate(0, 4, 0)

	finishSome(400)
	checkUsage(t, s, from, to, ledger, removed, users[0], "after the first runs")
	// Nothing deleted yet: the runs table's own columns give the same.
	var calls, unpriced int64
	var cost float64
	err := rawDB(t, path).QueryRow(`SELECT count(*), total(CASE WHEN priced THEN cost_usd END), total(CASE WHEN NOT priced THEN 1 END) FROM runs`).Scan(&calls, &cost, &unpriced)
	if err != nil {
		t.Fatal(err)
	}
	want := recompute(ledger, nil, db.UsageByMonth)
	var w db.UsageFigures
	for _, f := range want {
		w.Calls += f.Calls
		w.CostUSD += f.CostUSD
		w.UnpricedCalls += f.UnpricedCalls
	}
	if calls != w.Calls || unpriced != w.UnpricedCalls || math.Abs(cost-w.CostUSD) > 1e-9 {
		t.Errorf("runs table: %d calls, %d unpriced, $%g; the ledger: %+v", calls, unpriced, cost, w)
	}

	for round := range 3 {
		for range 20 {
			r := ledger[rng.IntN(len(ledger))]
			if err := s.RemoveRun(ctx, r.user, r.id); err != nil && err != db.ErrNotFound {
				t.Fatal(err)
			}
		}
		if _, err := s.PurgeRuns(ctx, start.AddDate(0, 0, 20*(round+1))); err != nil {
			t.Fatal(err)
		}
		if round == 1 {
			if err := s.RemoveUser(ctx, users[3]); err != nil {
				t.Fatal(err)
			}
			removed[users[3]] = true
		}
		checkUsage(t, s, from, to, ledger, removed, users[round], fmt.Sprintf("after deletes, round %d", round))
		finishSome(100)
		checkUsage(t, s, from, to, ledger, removed, users[3-round], fmt.Sprintf("after more runs, round %d", round))
	}
	var left int
	if err := rawDB(t, path).QueryRow(`SELECT count(*) FROM runs`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left >= len(ledger) {
		t.Fatalf("%d runs left of %d: the deletes deleted nothing", left, len(ledger))
	}

	// SpentSince counts what Usage counts, for the budgets.
	since := start.AddDate(0, 1, 0)
	for _, who := range []struct {
		user     int64
		provider string
	}{{users[0], "sim"}, {users[0], ""}, {0, "sim"}, {0, ""}} {
		var wantUSD float64
		var wantTokens int64
		for _, r := range ledger {
			if (who.user != 0 && r.user != who.user) || (who.provider != "" && r.provider != who.provider) || r.finished.Before(since) {
				continue
			}
			if r.priced {
				wantUSD += r.cost
			} else {
				wantTokens += r.input + r.output
			}
		}
		usd, tokens, err := s.SpentSince(ctx, since, who.user, who.provider)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(usd-wantUSD) > 1e-9 || tokens != wantTokens || wantTokens == 0 {
			t.Errorf("SpentSince(%d, %q): $%g and %d unpriced tokens, want $%g and %d", who.user, who.provider, usd, tokens, wantUSD, wantTokens)
		}
	}

	// SpendByScope, which the budgets' page and API read, gives each
	// scope's figure in two reads: the same as SpentSince's.
	all, err := s.SpendByScope(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	teamUSD, teamTokens, _ := s.SpentSince(ctx, since, 0, "")
	if math.Abs(all.TeamUSD-teamUSD) > 1e-9 || all.TeamTokens != teamTokens {
		t.Errorf("SpendByScope's team: $%g and %d tokens, SpentSince's $%g and %d", all.TeamUSD, all.TeamTokens, teamUSD, teamTokens)
	}
	for _, u := range users {
		usd, _, _ := s.SpentSince(ctx, since, u, "")
		if math.Abs(all.ByUser[u]-usd) > 1e-9 {
			t.Errorf("SpendByScope's user %d: $%g, SpentSince's $%g", u, all.ByUser[u], usd)
		}
	}
	if usd, _, _ := s.SpentSince(ctx, since, 0, "sim"); math.Abs(all.ByProvider["sim"]-usd) > 1e-9 || usd == 0 {
		t.Errorf("SpendByScope's sim: $%g, SpentSince's $%g", all.ByProvider["sim"], usd)
	}
}

// A member's query sees only their own calls.
func TestUsageOfOneUser(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	var ids []int64
	for _, n := range []string{"ann", "ben"} {
		u, err := s.CreateUser(ctx, db.SignUp{Username: n, PasswordHash: "x", Open: true})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
	}
	at := time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC)
	for i, u := range []int64{ids[0], ids[1], ids[1]} {
		id, err := s.CreateRun(ctx, db.Run{UserID: u, Provider: "sim", Endpoint: "chat", Model: "sim-reasoning", Spec: "{}", CreatedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		res := fmt.Sprintf(`{"usage":{"prompt_tokens":%d,"completion_tokens":1},"metrics":{"cost_usd":1},"price":{"input":1,"output":1,"cached_input":1,"reasoning":1}}`, 10*(i+1))
		if err := s.FinishRun(ctx, id, db.RunDone, "", res, nil, at); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := s.Usage(ctx, db.UsageQuery{From: at, To: at, UserID: ids[0], GroupBy: db.UsageByUser})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 || rep.Rows[0].Key != "ann" || rep.Total.Calls != 1 || rep.Total.InputTokens != 10 {
		t.Fatalf("ann's usage: %+v", rep)
	}
	if _, err := s.Usage(ctx, db.UsageQuery{From: at, To: at, GroupBy: "everything"}); err != db.ErrUsageGrouping {
		t.Fatalf("an unknown grouping: %v", err)
	}
}

// Runs finished before the roll-ups existed are rolled up by the
// migration that adds them, with the cost they were stored with; a run
// still running then is counted when it ends.
func TestUsageMigrationRollsUpOlderRuns(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/old.db"
	must(t, db.MigrateTo(ctx, path, db.UsageVersion()-1))
	raw := rawDB(t, path)
	day := time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC).UnixMilli()
	for _, q := range []string{
		`INSERT INTO users (id, username, password_hash, role, created_at) VALUES (1, 'alice', 'x', 'admin', 0)`,
		fmt.Sprintf(`INSERT INTO runs (id, user_id, provider, endpoint, model, spec, status, created_at, finished_at, result, cost_usd, preset_id)
VALUES (1, 1, 'xai', 'chat', 'grok-3', '{}', 'done', %d, %d, '{"usage":{"prompt_tokens":100,"completion_tokens":50,"reasoning_tokens":20,"reasoning_apart":true},"metrics":{"cost_usd":0.25}}', 0.25, 7)`, day, day),
		fmt.Sprintf(`INSERT INTO runs (id, user_id, provider, endpoint, model, spec, status, created_at, finished_at, result)
VALUES (2, 1, 'local', 'chat', 'llama', '{}', 'error', %d, %d, '{"usage":{"prompt_tokens":10,"completion_tokens":5}}')`, day, day),
		fmt.Sprintf(`INSERT INTO runs (id, user_id, provider, endpoint, model, spec, status, created_at) VALUES (3, 1, 'xai', 'chat', 'grok-3', '{}', 'running', %d)`, day),
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	s, err := db.Open(ctx, path)
	must(t, err)
	defer s.Close()
	at := time.UnixMilli(day)
	rep, err := s.Usage(ctx, db.UsageQuery{From: at, To: at, GroupBy: db.UsageByModel})
	must(t, err)
	want := db.UsageFigures{Calls: 2, Errors: 1, InputTokens: 110, OutputTokens: 75, ReasoningTokens: 20, CostUSD: 0.25, UnpricedCalls: 1, UnpricedTokens: 15}
	if !sameFigures(rep.Total, want) || len(rep.Rows) != 2 {
		t.Fatalf("rolled up at migration: %+v, want %+v", rep, want)
	}
	byPreset, err := s.Usage(ctx, db.UsageQuery{From: at, To: at, GroupBy: db.UsageByPreset})
	must(t, err)
	if len(byPreset.Rows) != 2 || byPreset.Rows[0].Key != "#7 (removed)" || byPreset.Rows[0].Calls != 1 || byPreset.Rows[1].Key != "none" {
		t.Fatalf("by preset: %+v", byPreset.Rows)
	}
	// The run left running is counted once, when it ends.
	must(t, s.FinishRun(ctx, 3, db.RunDone, "", `{"usage":{"prompt_tokens":1,"completion_tokens":1},"metrics":{"cost_usd":0.5}}`, nil, at))
	rep, err = s.Usage(ctx, db.UsageQuery{From: at, To: at, GroupBy: db.UsageByDay})
	must(t, err)
	if rep.Total.Calls != 3 || !sameFigures(rep.Rows[0].UsageFigures, rep.Total) || math.Abs(rep.Total.CostUSD-0.75) > 1e-9 {
		t.Fatalf("after the running run ended: %+v", rep)
	}
}

// Runs with long answers are rolled up by the migration from their
// results where they lie: the roll-ups hold their figures, and the runs
// rows are left as they were (their token columns stay empty). An old
// arena answer counts to its arena; an old call that failed before any
// token, at no cost, does not make its model look unpriced.
func TestUsageMigrationLeavesLargeRunsAlone(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/old.db"
	must(t, db.MigrateTo(ctx, path, db.UsageVersion()-1))
	raw := rawDB(t, path)
	day := time.Date(2026, 6, 30, 22, 0, 0, 0, time.UTC)
	long := strings.Repeat("a long answer ", 300_000/14) // about 300 KB
	results := map[int]string{
		// done, priced, reasoning counted within the output
		1: fmt.Sprintf(`{"choices":[{"content":%q}],"usage":{"prompt_tokens":1000,"completion_tokens":400,"reasoning_tokens":100,"cached_tokens":200},"metrics":{"cost_usd":0.5}}`, long),
		// xAI: reasoning apart, the cost in the usage only; an arena answer
		2: fmt.Sprintf(`{"choices":[{"content":%q}],"usage":{"prompt_tokens":10,"completion_tokens":20,"reasoning_tokens":30,"reasoning_apart":true,"cost_usd":0.25}}`, long),
		// failed before any token: no cost, no tokens
		3: `{"choices":[],"error":{"message":"rate limited"}}`,
		// tokens and no cost: unpriced; cached above the input is capped
		4: fmt.Sprintf(`{"choices":[{"content":%q}],"usage":{"prompt_tokens":50,"completion_tokens":5,"cached_tokens":80}}`, long),
		// not JSON: counted as a call with nothing known
		5: `{"choices":[`,
	}
	statuses := map[int]string{1: "done", 2: "done", 3: "error", 4: "cancelled", 5: "done"}
	for _, q := range []string{
		`INSERT INTO users (id, username, password_hash, role, created_at) VALUES (1, 'ada', 'x', 'admin', 0)`,
		`INSERT INTO arenas (id, owner_id, name, token, audience, mode, prompts_kind, status, created_at) VALUES (4, 1, 'duel', 't', 'team', 'pregenerated', 'list', 'ready', 0)`,
		`INSERT INTO arena_answers (arena_id, prompt_idx, contestant, status, run_id) VALUES (4, 0, 0, 'done', 2)`,
	} {
		_, err := raw.Exec(q)
		must(t, err)
	}
	for id := 1; id <= 5; id++ {
		model := "grok-3"
		if id == 4 {
			model = "llama"
		}
		_, err := raw.Exec(`INSERT INTO runs (id, user_id, provider, endpoint, model, spec, status, created_at, finished_at, result, cost_usd)
VALUES (?, 1, 'xai', 'chat', ?, '{}', ?, ?, ?, ?, ?)`, id, model, statuses[id], day.UnixMilli(), day.Add(time.Duration(id)*30*time.Minute).UnixMilli(), results[id],
			map[int]float64{1: 0.5}[id])
		must(t, err)
	}
	before := runRows(t, raw)
	raw.Close()

	s, err := db.Open(ctx, path)
	must(t, err)
	defer s.Close()
	from, to := day, day.AddDate(0, 0, 1)
	// Runs 1 to 3 end on June 30th, 4 and 5 on July 1st (UTC).
	byDay, err := s.Usage(ctx, db.UsageQuery{From: from, To: to, GroupBy: db.UsageByDay})
	must(t, err)
	want := []db.UsageFigures{
		{Calls: 3, Errors: 1, InputTokens: 1010, OutputTokens: 450, CachedTokens: 200, ReasoningTokens: 130, CostUSD: 0.75},
		{Calls: 2, InputTokens: 50, OutputTokens: 5, CachedTokens: 50, UnpricedCalls: 1, UnpricedTokens: 55},
	}
	if len(byDay.Rows) != 2 || byDay.Rows[0].Key != "2026-06-30" || byDay.Rows[1].Key != "2026-07-01" {
		t.Fatalf("by day: %+v", byDay.Rows)
	}
	for i, w := range want {
		if !sameFigures(byDay.Rows[i].UsageFigures, w) {
			t.Errorf("%s: %+v, want %+v", byDay.Rows[i].Key, byDay.Rows[i].UsageFigures, w)
		}
	}
	byModel, err := s.Usage(ctx, db.UsageQuery{From: from, To: to, GroupBy: db.UsageByModel})
	must(t, err)
	for _, r := range byModel.Rows {
		if r.UnpricedCalls > 0 && r.Key != "xai/llama" {
			t.Errorf("%s is listed without a price: %+v", r.Key, r)
		}
	}
	mine, err := s.Usage(ctx, db.UsageQuery{From: from, To: to, GroupBy: db.UsageByUser, UserID: 1})
	must(t, err)
	if len(mine.Rows) != 1 || mine.Rows[0].Key != "ada" || mine.Total.Calls != 5 || math.Abs(mine.Total.CostUSD-0.75) > 1e-9 {
		t.Errorf("ada's usage: %+v", mine)
	}
	byArena, err := s.Usage(ctx, db.UsageQuery{From: from, To: to, GroupBy: db.UsageByArena})
	must(t, err)
	arenaRows := map[string]db.UsageFigures{}
	for _, r := range byArena.Rows {
		arenaRows[r.Key] = r.UsageFigures
	}
	if len(arenaRows) != 2 || arenaRows["#4 duel"].Calls != 1 || arenaRows["#4 duel"].OutputTokens != 50 || arenaRows["none"].Calls != 4 {
		t.Errorf("by arena: %+v", byArena.Rows)
	}
	after := runRows(t, rawDB(t, path))
	for id, b := range before {
		if after[id] != b {
			t.Errorf("run %d was rewritten by the migration:\nbefore %.200s\n after %.200s", id, b, after[id])
		}
	}
	var touched int
	must(t, rawDB(t, path).QueryRow(`SELECT count(*) FROM runs WHERE input_tokens + output_tokens + cached_tokens + reasoning_tokens + priced <> 0`).Scan(&touched))
	if touched != 0 {
		t.Errorf("the migration wrote the token columns of %d old runs", touched)
	}
}

// runRows lists each run's columns as they were before the usage
// migration, as one text per run.
func runRows(t *testing.T, d *sql.DB) map[int64]string {
	t.Helper()
	rows, err := d.Query(`SELECT id, user_id, provider, model, status, created_at, finished_at, cost_usd, length(result), result FROM runs`)
	must(t, err)
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var rest [9]any
		ptrs := []any{&id}
		for i := range rest {
			ptrs = append(ptrs, &rest[i])
		}
		must(t, rows.Scan(ptrs...))
		out[id] = fmt.Sprint(rest)
	}
	must(t, rows.Err())
	return out
}

// A run ends once: a second ending written for it (a retry, a late
// write) changes neither the run nor what it counted.
func TestUsageSecondEndingChangesNothing(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	u, err := s.CreateUser(ctx, db.SignUp{Username: "ada", PasswordHash: "x", Open: true})
	must(t, err)
	at := time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC)
	id, err := s.CreateRun(ctx, db.Run{UserID: u.ID, Provider: "xai", Endpoint: "chat", Model: "grok-3", Spec: "{}", CreatedAt: at})
	must(t, err)
	first := `{"choices":[{"content":"the answer"}],"usage":{"prompt_tokens":10,"completion_tokens":4},"metrics":{"cost_usd":0.5},"price":{"input":1,"output":1,"cached_input":1,"reasoning":1}}`
	must(t, s.FinishRun(ctx, id, db.RunDone, "", first, nil, at))
	second := `{"choices":[{"content":"another"}],"usage":{"prompt_tokens":99,"completion_tokens":99},"metrics":{"cost_usd":9}}`
	must(t, s.FinishRun(ctx, id, db.RunError, "", second, nil, at.Add(48*time.Hour)))

	r, err := s.Run(ctx, u.ID, id)
	must(t, err)
	if r.Status != db.RunDone || r.Result != first || !r.FinishedAt.Equal(at) {
		t.Errorf("after a second ending: status %s, finished %v, result %s", r.Status, r.FinishedAt.UTC(), r.Result)
	}
	rep, err := s.Usage(ctx, db.UsageQuery{From: at, To: at.Add(48 * time.Hour), GroupBy: db.UsageByDay})
	must(t, err)
	want := db.UsageFigures{Calls: 1, InputTokens: 10, OutputTokens: 4, CostUSD: 0.5}
	if len(rep.Rows) != 1 || !sameFigures(rep.Total, want) {
		t.Errorf("usage after a second ending: %+v, want %+v", rep, want)
	}
}
