package db

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Spend and deletes: a run's tokens and cost enter the roll-ups when it
// finishes and never leave it. Deleting a run (by hand, with its owner,
// by the retention purge) does not shrink what was spent, as it does not
// shrink the provider's bill; so the roll-ups equal a recomputation from
// the runs only while no finished run has been deleted.

// dayMillis is a UTC day in milliseconds; usage_daily's day is the Unix
// day (days since 1970-01-01 UTC) the run finished on.
const dayMillis = 24 * 60 * 60 * 1000

// unixDay is the UTC day t falls on.
func unixDay(t time.Time) int64 { return floorDiv(t.UnixMilli(), dayMillis) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// dayTime is the start of Unix day d, in UTC.
func dayTime(d int64) time.Time { return time.UnixMilli(d * dayMillis).UTC() }

// runCost is what a finished run used and cost, as its result says.
type runCost struct {
	input, output, cached, reasoning int64
	costUSD                          float64
	// priced says the cost is known: the run had a price, or the
	// provider reported its own figure.
	priced bool
	price  *RunPrice
}

// RunPrice is the price a run is costed at, USD per million tokens, as
// the runner's result keeps it.
type RunPrice struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CachedInput float64 `json:"cached_input"`
	Reasoning   float64 `json:"reasoning"`
}

// costOf reads a run's usage, cost and price out of its result JSON (the
// runner's Result). Output tokens count reasoning once, as the runner
// does; cached tokens are part of the input (and no more than it),
// reasoning part of the output.
func costOf(result string) runCost {
	var r struct {
		Usage *struct {
			PromptTokens     int64   `json:"prompt_tokens"`
			CompletionTokens int64   `json:"completion_tokens"`
			ReasoningTokens  int64   `json:"reasoning_tokens"`
			CachedTokens     int64   `json:"cached_tokens"`
			ReasoningApart   bool    `json:"reasoning_apart"`
			CostUSD          float64 `json:"cost_usd"`
		} `json:"usage"`
		Metrics struct {
			CostUSD float64 `json:"cost_usd"`
		} `json:"metrics"`
		Price *RunPrice `json:"price"`
	}
	if json.Unmarshal([]byte(result), &r) != nil {
		return runCost{}
	}
	c := runCost{costUSD: r.Metrics.CostUSD, price: r.Price}
	if u := r.Usage; u != nil {
		c.input, c.cached, c.reasoning = u.PromptTokens, min(u.CachedTokens, u.PromptTokens), u.ReasoningTokens
		c.output = u.CompletionTokens
		if u.ReasoningApart {
			c.output += u.ReasoningTokens
		}
		c.costUSD = cmp.Or(c.costUSD, u.CostUSD)
	}
	c.priced = c.price != nil || c.costUSD > 0
	return c
}

// finishRun stores a run's final state with what it used and cost, and
// adds it to the roll-ups, when the run is still running: a run ends
// once, however often its ending is written, and a later write changes
// neither what it is nor what it counted.
func finishRun(ctx context.Context, tx *sql.Tx, id int64, status, result string, at time.Time) error {
	var (
		user                  int64
		provider, model, prev string
		preset, exp, arena    int64
	)
	err := tx.QueryRowContext(ctx, `
SELECT user_id, provider, model, ifnull(preset_id, 0), ifnull(experiment_id, 0), ifnull(arena_id, 0), status FROM runs WHERE id = ?`, id).
		Scan(&user, &provider, &model, &preset, &exp, &arena, &prev)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if prev != RunRunning {
		return nil
	}
	c := costOf(result)
	var pi, po, pc, pr any
	if p := c.price; p != nil {
		pi, po, pc, pr = p.Input, p.Output, p.CachedInput, p.Reasoning
	}
	_, err = tx.ExecContext(ctx, `
UPDATE runs SET status = ?, result = ?, finished_at = ?, input_tokens = ?, output_tokens = ?, cached_tokens = ?, reasoning_tokens = ?,
	cost_usd = ?, priced = ?, price_input = ifnull(?, price_input), price_output = ifnull(?, price_output),
	price_cached = ifnull(?, price_cached), price_reasoning = ifnull(?, price_reasoning)
WHERE id = ?`,
		status, result, at.UnixMilli(), c.input, c.output, c.cached, c.reasoning, c.costUSD, c.priced, pi, po, pc, pr, id)
	if err != nil {
		return err
	}
	return addUsage(ctx, tx, usageKey{day: unixDay(at), user: user, provider: provider, model: model, preset: preset, experiment: exp, arena: arena},
		status == RunError, c)
}

// usageKey is where a finished run is rolled up.
type usageKey struct {
	day                       int64
	user                      int64
	provider, model           string
	preset, experiment, arena int64
}

// addUsage adds one finished call to its day's roll-ups: by user and
// model, by model, by user, and by each of its preset, experiment and
// arena.
func addUsage(ctx context.Context, tx *sql.Tx, k usageKey, failed bool, c runCost) error {
	var errs, unpricedCalls, unpricedTokens int64
	if failed {
		errs = 1
	}
	// A call without a price counts as unpriced only when it used tokens:
	// one that failed before any costs nothing whatever its price, and
	// the migration's backfill counts old runs by the same rule.
	if !c.priced && c.input+c.output > 0 {
		unpricedCalls, unpricedTokens = 1, c.input+c.output
	}
	figures := []any{errs, c.input, c.output, c.cached, c.reasoning, c.costUSD, unpricedCalls, unpricedTokens}
	rollUps := []struct {
		table string
		key   []any
	}{
		{"usage_daily (day, user_id, provider, model", []any{k.day, k.user, k.provider, k.model}},
		{"usage_daily_team (day, provider, model", []any{k.day, k.provider, k.model}},
		{"usage_daily_user (day, user_id", []any{k.day, k.user}},
	}
	for _, by := range []struct {
		kind string
		id   int64
	}{{UsageByPreset, k.preset}, {UsageByExperiment, k.experiment}, {UsageByArena, k.arena}} {
		if by.id != 0 {
			rollUps = append(rollUps, struct {
				table string
				key   []any
			}{"usage_daily_by (kind, day, user_id, ref_id", []any{by.kind, k.day, k.user, by.id}})
		}
	}
	for _, r := range rollUps {
		marks := strings.Repeat("?, ", len(r.key))
		_, err := tx.ExecContext(ctx, `INSERT INTO `+r.table+`, calls, errors, input_tokens, output_tokens, cached_tokens, reasoning_tokens,
	cost_usd, unpriced_calls, unpriced_tokens)
VALUES (`+marks+`1, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO UPDATE SET `+addFigures, append(slices.Clone(r.key), figures...)...)
		if err != nil {
			return err
		}
	}
	return nil
}

// addFigures adds a row's figures to the one it conflicts with.
const addFigures = `calls = calls + 1, errors = errors + excluded.errors,
	input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens,
	cached_tokens = cached_tokens + excluded.cached_tokens, reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
	cost_usd = cost_usd + excluded.cost_usd, unpriced_calls = unpriced_calls + excluded.unpriced_calls,
	unpriced_tokens = unpriced_tokens + excluded.unpriced_tokens`

// backfillUsage rolls up every finished run stored before the usage
// migration, inside that migration, in SQL: the results (up to 8 MiB
// each) are read by SQLite's JSON functions where they lie, never loaded
// into Knobs, and the runs rows are left as they are (rewriting them
// would copy the whole table, results and all, into the write-ahead log
// while Knobs waits to start: BENCHMARKS.md). The figures are costOf's:
// output counts reasoning once, cached tokens are capped at the input;
// the cost is the one the run was stored with, its price was not kept
// then. A call counts as unpriced only when it used tokens that have no
// cost: an old call that failed before any token is no sign that its
// model lacks a price. An arena's answers are counted to their arena.
func backfillUsage(ctx context.Context, tx *sql.Tx) error {
	var arenaRuns int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('arena_answers') WHERE name = 'run_id'`).Scan(&arenaRuns)
	if err != nil {
		return fmt.Errorf("db: unable to roll up older runs: %w", err)
	}
	arena, answers := `0`, ``
	if arenaRuns > 0 {
		arena = `ifnull(aa.arena_id, 0)`
		answers = `LEFT JOIN (SELECT run_id, min(arena_id) AS arena_id FROM arena_answers WHERE run_id IS NOT NULL GROUP BY run_id) aa ON aa.run_id = r.id`
	}
	// One row per run, its result parsed once: the usage object, the
	// two costs the runner may have written and the price. A result that
	// is not JSON is a call with nothing else known, as costOf reads it.
	steps := []string{`
CREATE TEMP TABLE usage_backfill AS
WITH parsed AS (
	SELECT r.user_id, r.provider, r.model, ifnull(r.preset_id, 0) AS preset, ifnull(r.experiment_id, 0) AS experiment,
		` + arena + ` AS arena, r.status = '` + RunError + `' AS failed, r.cost_usd AS stored_cost,
		ifnull(r.finished_at, r.created_at) AS at,
		CASE WHEN json_valid(r.result) THEN json_extract(r.result, '$.usage', '$.metrics.cost_usd', '$.price') END AS j
	FROM runs r ` + answers + ` WHERE r.status <> '` + RunRunning + `'
), figures AS (
	SELECT user_id, provider, model, preset, experiment, arena, failed,
		(at - ((at % ` + strconv.Itoa(dayMillis) + `) + ` + strconv.Itoa(dayMillis) + `) % ` + strconv.Itoa(dayMillis) + `) / ` + strconv.Itoa(dayMillis) + ` AS day,
		ifnull(j ->> '$[0].prompt_tokens', 0) AS input,
		ifnull(j ->> '$[0].completion_tokens', 0) + CASE WHEN j ->> '$[0].reasoning_apart' THEN ifnull(j ->> '$[0].reasoning_tokens', 0) ELSE 0 END AS output,
		ifnull(j ->> '$[0].cached_tokens', 0) AS cached,
		ifnull(j ->> '$[0].reasoning_tokens', 0) AS reasoning,
		coalesce(nullif(j ->> '$[1]', 0), nullif(j ->> '$[0].cost_usd', 0), stored_cost, 0) AS cost,
		j ->> '$[2]' IS NOT NULL AS has_price
	FROM parsed
)
SELECT user_id, provider, model, preset, experiment, arena, day, failed, input, output, min(cached, input) AS cached, reasoning, cost,
	CASE WHEN has_price OR cost > 0 OR input + output = 0 THEN 0 ELSE 1 END AS unpriced
FROM figures`,
		`INSERT INTO usage_daily (day, user_id, provider, model, ` + backfillColumns + `)
SELECT day, user_id, provider, model, ` + backfillSums + ` FROM usage_backfill GROUP BY day, user_id, provider, model`,
		`INSERT INTO usage_daily_team (day, provider, model, ` + backfillColumns + `)
SELECT day, provider, model, ` + backfillSums + ` FROM usage_backfill GROUP BY day, provider, model`,
		`INSERT INTO usage_daily_user (day, user_id, ` + backfillColumns + `)
SELECT day, user_id, ` + backfillSums + ` FROM usage_backfill GROUP BY day, user_id`,
	}
	for _, by := range []string{UsageByPreset, UsageByExperiment, UsageByArena} {
		steps = append(steps, `INSERT INTO usage_daily_by (kind, day, user_id, ref_id, `+backfillColumns+`)
SELECT '`+by+`', day, user_id, `+by+`, `+backfillSums+` FROM usage_backfill WHERE `+by+` <> 0 GROUP BY day, user_id, `+by)
	}
	steps = append(steps, `DROP TABLE temp.usage_backfill`)
	for _, q := range steps {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("db: unable to roll up older runs: %w", err)
		}
	}
	return nil
}

// backfillColumns and backfillSums are the roll-ups' figures and how
// backfillUsage sums them from its table of runs.
const (
	backfillColumns = `calls, errors, input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, unpriced_calls, unpriced_tokens`
	backfillSums    = `count(*), sum(failed), sum(input), sum(output), sum(cached), sum(reasoning),
	total(CASE WHEN unpriced THEN 0 ELSE cost END), sum(unpriced), sum(CASE WHEN unpriced THEN input + output ELSE 0 END)`
)

// Usage groupings: what UsageQuery.GroupBy takes.
const (
	UsageByUser       = "user"
	UsageByProvider   = "provider"
	UsageByModel      = "model"
	UsageByPreset     = "preset"
	UsageByExperiment = "experiment"
	UsageByArena      = "arena"
	UsageByDay        = "day"
	UsageByWeek       = "week"
	UsageByMonth      = "month"
)

// UsageGroupings lists every grouping Usage takes, in the order the
// usage page offers them.
var UsageGroupings = []string{UsageByDay, UsageByWeek, UsageByMonth, UsageByUser, UsageByProvider, UsageByModel, UsageByPreset, UsageByExperiment, UsageByArena}

// ErrUsageGrouping is returned by Usage for a GroupBy it does not know.
var ErrUsageGrouping = errors.New("db: unknown usage grouping")

// UsageQuery asks for usage between two UTC days, both counted whole.
type UsageQuery struct {
	From, To time.Time
	UserID   int64  // 0: everyone's
	GroupBy  string // one of UsageGroupings
}

// UsageFigures are the counts of a group of finished calls.
type UsageFigures struct {
	Calls           int64
	Errors          int64
	InputTokens     int64 // cached input included
	OutputTokens    int64 // reasoning included
	CachedTokens    int64
	ReasoningTokens int64
	CostUSD         float64
	// UnpricedCalls and UnpricedTokens are calls to a model without a
	// price, whose cost is not in CostUSD.
	UnpricedCalls  int64
	UnpricedTokens int64
}

// sub takes o's figures from f; a cost left under a billionth of a
// dollar by rounding is 0.
func (f *UsageFigures) sub(o UsageFigures) {
	f.Calls -= o.Calls
	f.Errors -= o.Errors
	f.InputTokens -= o.InputTokens
	f.OutputTokens -= o.OutputTokens
	f.CachedTokens -= o.CachedTokens
	f.ReasoningTokens -= o.ReasoningTokens
	f.CostUSD -= o.CostUSD
	if math.Abs(f.CostUSD) < 1e-9 {
		f.CostUSD = 0
	}
	f.UnpricedCalls -= o.UnpricedCalls
	f.UnpricedTokens -= o.UnpricedTokens
}

func (f *UsageFigures) add(o UsageFigures) {
	f.Calls += o.Calls
	f.Errors += o.Errors
	f.InputTokens += o.InputTokens
	f.OutputTokens += o.OutputTokens
	f.CachedTokens += o.CachedTokens
	f.ReasoningTokens += o.ReasoningTokens
	f.CostUSD += o.CostUSD
	f.UnpricedCalls += o.UnpricedCalls
	f.UnpricedTokens += o.UnpricedTokens
}

// UsageRow is one group: Key names it for people (a user's name, a
// model as provider/model, a day as 2026-12-01, a week by its Monday, a
// month as 2026-12); ID is the user, preset, experiment or arena id (0:
// none); Provider and Model are set when grouped by model.
type UsageRow struct {
	Key      string
	ID       int64
	Provider string
	Model    string
	UsageFigures
}

// UsageReport is Usage's answer: the groups and their total.
type UsageReport struct {
	Rows  []UsageRow
	Total UsageFigures
}

const usageSums = `sum(calls), sum(errors), sum(input_tokens), sum(output_tokens), sum(cached_tokens), sum(reasoning_tokens),
	sum(cost_usd), sum(unpriced_calls), sum(unpriced_tokens)`

// Usage sums the roll-ups between q.From's and q.To's days for one user
// or everyone, grouped by q.GroupBy. Days are listed in order; other
// groups by cost, then calls, most first. Grouped by preset, experiment
// or arena, the calls without one are the row "none".
func (s *Store) Usage(ctx context.Context, q UsageQuery) (UsageReport, error) {
	args := []any{unixDay(q.From), unixDay(q.To)}
	where := `day BETWEEN ? AND ?`
	// Everyone's usage by model comes from the team's roll-up, a user's
	// from the roll-up by user and model.
	byModel := `usage_daily_team`
	if q.UserID != 0 {
		where += ` AND user_id = ?`
		args = append(args, q.UserID)
		byModel = `usage_daily`
	}
	var query string
	switch q.GroupBy {
	case UsageByUser:
		query = `SELECT user_id, '', '', ifnull((SELECT username FROM users WHERE id = user_id), ''), ` + usageSums +
			` FROM usage_daily_user WHERE ` + where + ` GROUP BY user_id`
	case UsageByProvider:
		query = `SELECT 0, provider, '', '', ` + usageSums + ` FROM ` + byModel + ` WHERE ` + where + ` GROUP BY provider`
	case UsageByModel:
		query = `SELECT 0, provider, model, '', ` + usageSums + ` FROM ` + byModel + ` WHERE ` + where + ` GROUP BY provider, model`
	case UsageByDay, UsageByWeek, UsageByMonth:
		query = `SELECT day, '', '', '', ` + usageSums + ` FROM ` + byModel + ` WHERE ` + where + ` GROUP BY day`
	case UsageByPreset, UsageByExperiment, UsageByArena:
		table := map[string]string{UsageByPreset: "presets", UsageByExperiment: "experiments", UsageByArena: "arenas"}[q.GroupBy]
		query = `SELECT ref_id, '', '', ifnull((SELECT name FROM ` + table + ` WHERE id = ref_id), ''), ` + usageSums +
			` FROM usage_daily_by WHERE kind = ? AND ` + where + ` GROUP BY ref_id`
		args = append([]any{q.GroupBy}, args...)
	default:
		return UsageReport{}, ErrUsageGrouping
	}
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return UsageReport{}, fmt.Errorf("db: unable to read usage: %w", err)
	}
	defer rows.Close()
	var rep UsageReport
	periods := map[string]int{} // the row of each day, week or month
	for rows.Next() {
		var r UsageRow
		var name string
		f := &r.UsageFigures
		if err := rows.Scan(&r.ID, &r.Provider, &r.Model, &name, &f.Calls, &f.Errors, &f.InputTokens, &f.OutputTokens,
			&f.CachedTokens, &f.ReasoningTokens, &f.CostUSD, &f.UnpricedCalls, &f.UnpricedTokens); err != nil {
			return UsageReport{}, fmt.Errorf("db: unable to read usage: %w", err)
		}
		rep.Total.add(r.UsageFigures)
		switch q.GroupBy {
		case UsageByDay, UsageByWeek, UsageByMonth:
			r.Key, r.ID = periodKey(q.GroupBy, r.ID), 0
			if i, ok := periods[r.Key]; ok {
				rep.Rows[i].add(r.UsageFigures)
				continue
			}
			periods[r.Key] = len(rep.Rows)
		case UsageByUser:
			r.Key = cmp.Or(name, "removed user #"+strconv.FormatInt(r.ID, 10))
		case UsageByProvider:
			r.Key = r.Provider
		case UsageByModel:
			r.Key = r.Provider + "/" + r.Model
		default:
			r.Key = "#" + strconv.FormatInt(r.ID, 10) + " " + cmp.Or(name, "(removed)")
		}
		rep.Rows = append(rep.Rows, r)
	}
	if err := rows.Err(); err != nil {
		return UsageReport{}, fmt.Errorf("db: unable to read usage: %w", err)
	}
	switch q.GroupBy {
	case UsageByPreset, UsageByExperiment, UsageByArena:
		// The rest of the calls had none: the whole period less these.
		all, err := s.Usage(ctx, UsageQuery{From: q.From, To: q.To, UserID: q.UserID, GroupBy: UsageByMonth})
		if err != nil {
			return UsageReport{}, err
		}
		none := all.Total
		none.sub(rep.Total)
		if none.Calls > 0 {
			rep.Rows = append(rep.Rows, UsageRow{Key: "none", UsageFigures: none})
		}
		rep.Total = all.Total
	}
	switch q.GroupBy {
	case UsageByDay, UsageByWeek, UsageByMonth:
		slices.SortFunc(rep.Rows, func(a, b UsageRow) int { return cmp.Compare(a.Key, b.Key) })
	default:
		slices.SortFunc(rep.Rows, func(a, b UsageRow) int {
			return cmp.Or(cmp.Compare(b.CostUSD, a.CostUSD), cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Key, b.Key))
		})
	}
	return rep, nil
}

// periodKey names the day, week (by its Monday) or month of Unix day d.
func periodKey(by string, d int64) string {
	t := dayTime(d)
	switch by {
	case UsageByWeek:
		back := (int(t.Weekday()) + 6) % 7 // days since Monday
		return t.AddDate(0, 0, -back).Format(time.DateOnly)
	case UsageByMonth:
		return t.Format("2006-01")
	}
	return t.Format(time.DateOnly)
}

// DayModelCost is what one model cost on one UTC day.
type DayModelCost struct {
	Day      time.Time
	Provider string
	Model    string
	UsageFigures
}

// UsageByDayAndModel lists cost and calls per day and model between
// from's and to's days for one user (0: everyone), by day then model:
// the usage page's chart and its list of models without a price.
func (s *Store) UsageByDayAndModel(ctx context.Context, from, to time.Time, userID int64) ([]DayModelCost, error) {
	args := []any{unixDay(from), unixDay(to)}
	where, table := `day BETWEEN ? AND ?`, `usage_daily_team`
	if userID != 0 {
		where, table = where+` AND user_id = ?`, `usage_daily`
		args = append(args, userID)
	}
	rows, err := s.r.QueryContext(ctx, `
SELECT day, provider, model, `+usageSums+` FROM `+table+` WHERE `+where+` GROUP BY day, provider, model ORDER BY day, provider, model`, args...)
	if err != nil {
		return nil, fmt.Errorf("db: unable to read usage by day: %w", err)
	}
	defer rows.Close()
	var out []DayModelCost
	for rows.Next() {
		var d DayModelCost
		var day int64
		f := &d.UsageFigures
		if err := rows.Scan(&day, &d.Provider, &d.Model, &f.Calls, &f.Errors, &f.InputTokens, &f.OutputTokens,
			&f.CachedTokens, &f.ReasoningTokens, &f.CostUSD, &f.UnpricedCalls, &f.UnpricedTokens); err != nil {
			return nil, fmt.Errorf("db: unable to read usage by day: %w", err)
		}
		d.Day = dayTime(day)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: unable to read usage by day: %w", err)
	}
	return out, nil
}

// SpentSince is what was spent from from's UTC day on, by one user (0:
// everyone) on one provider ("": every provider): the cost of priced
// calls, and the tokens of calls without a price. Deleted runs still
// count.
func (s *Store) SpentSince(ctx context.Context, from time.Time, userID int64, provider string) (usd float64, unpricedTokens int64, err error) {
	query, args := `FROM usage_daily_team WHERE day >= ?`, []any{unixDay(from)}
	switch {
	case userID != 0 && provider != "":
		query, args = `FROM usage_daily WHERE user_id = ? AND day >= ? AND provider = ?`, []any{userID, unixDay(from), provider}
	case userID != 0:
		query, args = `FROM usage_daily_user WHERE user_id = ? AND day >= ?`, []any{userID, unixDay(from)}
	case provider != "":
		query, args = query+` AND provider = ?`, append(args, provider)
	}
	err = s.r.QueryRowContext(ctx, `SELECT ifnull(sum(cost_usd), 0), ifnull(sum(unpriced_tokens), 0) `+query, args...).Scan(&usd, &unpricedTokens)
	if err != nil {
		return 0, 0, fmt.Errorf("db: unable to read spend: %w", err)
	}
	return usd, unpricedTokens, nil
}

// MonthSpend is what was spent from a UTC day on, in the shapes the
// budgets' pages and API show: the team's dollars and unpriced tokens,
// and dollars by user and by provider. Two grouped reads, however many
// users and providers there are.
type MonthSpend struct {
	TeamUSD    float64
	TeamTokens int64
	ByUser     map[int64]float64
	ByProvider map[string]float64
}

// SpendByScope is MonthSpend from from's UTC day on; the figures equal
// SpentSince's for each scope.
func (s *Store) SpendByScope(ctx context.Context, from time.Time) (MonthSpend, error) {
	out := MonthSpend{ByUser: map[int64]float64{}, ByProvider: map[string]float64{}}
	day := unixDay(from)
	rows, err := s.r.QueryContext(ctx, `SELECT user_id, sum(cost_usd) FROM usage_daily_user WHERE day >= ? GROUP BY user_id`, day)
	if err != nil {
		return out, fmt.Errorf("db: unable to read spend by user: %w", err)
	}
	for rows.Next() {
		var id int64
		var usd float64
		if err := rows.Scan(&id, &usd); err != nil {
			rows.Close()
			return out, fmt.Errorf("db: unable to read spend by user: %w", err)
		}
		out.ByUser[id] = usd
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("db: unable to read spend by user: %w", err)
	}
	rows, err = s.r.QueryContext(ctx, `SELECT provider, sum(cost_usd), sum(unpriced_tokens) FROM usage_daily_team WHERE day >= ? GROUP BY provider`, day)
	if err != nil {
		return out, fmt.Errorf("db: unable to read spend by provider: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		var usd float64
		var tokens int64
		if err := rows.Scan(&p, &usd, &tokens); err != nil {
			return out, fmt.Errorf("db: unable to read spend by provider: %w", err)
		}
		out.ByProvider[p] = usd
		out.TeamUSD += usd
		out.TeamTokens += tokens
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("db: unable to read spend by provider: %w", err)
	}
	return out, nil
}
