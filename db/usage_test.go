package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
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
