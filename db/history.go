package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
)

// SettingRetentionDays is how many days runs are kept; "" or "0" keeps
// them forever.
const SettingRetentionDays = "retention_days"

// RunFilter selects a user's runs for the history list. Zero values mean "any".
type RunFilter struct {
	UserID   int64
	Provider string
	Model    string
	Status   string
	PresetID int64 // 0 = any
	// Experiment keeps the runs of one experiment (its cells and its
	// judges' gradings); 0 = any. HideExperiments leaves out every run
	// made by an experiment.
	Experiment      int64
	HideExperiments bool
	From, To        time.Time // created_at range, inclusive From, exclusive To; zero = open
	Starred         bool      // true = only starred
	Query           string    // full-text search over prompts and outputs; "" = no search
	Before          int64     // keyset paging: only runs with id < Before; 0 = from the newest
	Limit           int       // 0 = 50; capped at 200
}

// Segment is a piece of text, marked when it matched the search.
type Segment struct {
	Text  string
	Match bool
}

// RunSummary is one row of the history list.
type RunSummary struct {
	ID        int64
	CreatedAt time.Time
	Provider  string
	Model     string
	Endpoint  string
	Status    string
	// Prompt is the first line of the last user message or of the prompt.
	// When searching, matches are marked, and when the match is elsewhere
	// in the prompt it is the text around the match instead.
	Prompt []Segment
	// Output is the first line of choice 0's content, else its reasoning,
	// else its first tool call's name; the same rule applies when searching.
	Output       []Segment
	Tokens       int
	TTFTMs       float64
	TokensPerSec float64
	CostUSD      float64
	Starred      bool
	Note         string
	GroupID      int64 // 0 = not part of a comparison
	// Params are the request's top-level numeric parameters (temperature,
	// max_completion_tokens, top_p...), each as JSON writes it, so that
	// the list can show what tells two runs apart.
	Params map[string]string
}

// Search markers: snippet() wraps matches in them; clean() keeps them out
// of stored text.
const (
	markOpen  = "\x02"
	markClose = "\x03"
	ellipsis  = "…"
	// maxTerms bounds the work one search can ask of FTS5.
	maxTerms = 16
)

const summaryColumns = `r.id, r.created_at, r.provider, r.model, r.endpoint, r.status, r.prompt_line, r.output_line,
	r.tokens, r.ttft_ms, r.tokens_per_sec, r.cost_usd, r.starred, r.note, ifnull(r.group_id, 0),
	(SELECT json_group_object(key, value) FROM json_each(r.spec, '$.body') WHERE type IN ('integer', 'real'))`

// Runs lists a user's runs newest first, one page at a time; next is the
// Before of the following page, 0 after the last. Paging by id neither
// repeats nor skips rows while new runs arrive, since they get higher ids.
func (s *Store) Runs(ctx context.Context, f RunFilter) (runs []RunSummary, next int64, err error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 200)

	where, args := []string{"r.user_id = ?"}, []any{f.UserID}
	if f.Provider != "" {
		where, args = append(where, "r.provider = ?"), append(args, f.Provider)
	}
	if f.Model != "" {
		where, args = append(where, "r.model = ?"), append(args, f.Model)
	}
	if f.Status != "" {
		where, args = append(where, "r.status = ?"), append(args, f.Status)
	}
	if f.PresetID != 0 {
		where, args = append(where, "r.preset_id = ?"), append(args, f.PresetID)
	}
	if f.Experiment != 0 {
		where, args = append(where, "r.experiment_id = ?"), append(args, f.Experiment)
	} else if f.HideExperiments {
		where = append(where, "r.experiment_id IS NULL")
	}
	if !f.From.IsZero() {
		where, args = append(where, "r.created_at >= ?"), append(args, f.From.UnixMilli())
	}
	if !f.To.IsZero() {
		where, args = append(where, "r.created_at < ?"), append(args, f.To.UnixMilli())
	}
	if f.Starred {
		// A literal, so that the partial index on starred runs applies.
		where = append(where, "r.starred = 1")
	}

	var q string
	search := strings.TrimSpace(f.Query) != ""
	if search {
		match := ftsQuery(f.Query)
		if match == "" {
			// Nothing in the query can be a word: nothing can match it.
			return nil, 0, nil
		}
		// The searcher's own range of the index (see ftsOwnerShift).
		low := f.UserID << ftsOwnerShift
		before := low | (1<<ftsOwnerShift - 1)
		if f.Before > 0 && f.Before < 1<<ftsOwnerShift {
			before = low | f.Before
		}
		// CROSS JOIN keeps FTS5 in the outer loop: it yields matches newest
		// first, so the LIMIT stops it early.
		q = `SELECT ` + summaryColumns + `,
	snippet(runs_fts, 0, '` + markOpen + `', '` + markClose + `', '` + ellipsis + `', 24),
	snippet(runs_fts, 1, '` + markOpen + `', '` + markClose + `', '` + ellipsis + `', 16),
	snippet(runs_fts, 2, '` + markOpen + `', '` + markClose + `', '` + ellipsis + `', 24),
	snippet(runs_fts, 3, '` + markOpen + `', '` + markClose + `', '` + ellipsis + `', 16)
FROM runs_fts CROSS JOIN runs r ON r.id = runs_fts.rowid & ` + ftsIDMask + `
WHERE runs_fts MATCH ? AND runs_fts.rowid > ? AND runs_fts.rowid < ? AND ` + strings.Join(where, " AND ") + `
ORDER BY runs_fts.rowid DESC LIMIT ?`
		args = append([]any{match, low, before}, args...)
	} else {
		if f.Before > 0 {
			where, args = append(where, "r.id < ?"), append(args, f.Before)
		}
		// The page's ids first, from the indexes alone where they can; the
		// summary columns sit at the end of wide rows, so only read them
		// for the rows shown.
		q = `SELECT ` + summaryColumns + ` FROM runs r WHERE r.id IN (
	SELECT r.id FROM runs r WHERE ` + strings.Join(where, " AND ") + ` ORDER BY r.id DESC LIMIT ?
) ORDER BY r.id DESC`
	}
	args = append(args, limit+1)

	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("db: unable to list runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r RunSummary
		var created int64
		var promptLine, outputLine string
		var params sql.NullString
		dest := []any{&r.ID, &created, &r.Provider, &r.Model, &r.Endpoint, &r.Status, &promptLine, &outputLine,
			&r.Tokens, &r.TTFTMs, &r.TokensPerSec, &r.CostUSD, &r.Starred, &r.Note, &r.GroupID, &params}
		var snippets [4]string
		if search {
			dest = append(dest, &snippets[0], &snippets[1], &snippets[2], &snippets[3])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, 0, fmt.Errorf("db: unable to list runs: %w", err)
		}
		r.CreatedAt = time.UnixMilli(created)
		r.Prompt = pickSegments(promptLine, snippets[0], snippets[1])
		r.Output = pickSegments(outputLine, snippets[2], snippets[3])
		r.Params = numberParams(params.String)
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("db: unable to list runs: %w", err)
	}
	if len(runs) > limit {
		runs = runs[:limit]
		next = runs[limit-1].ID
	}
	return runs, next, nil
}

// ftsQuery turns what a user typed into an FTS5 query that cannot be a
// syntax error: every whitespace-separated word becomes a quoted string
// (a phrase, when FTS5 splits it further), the words are AND-ed, and a
// word ending in * is a prefix. Quotes, *, -, :, ^, parentheses, NEAR,
// AND, OR and NOT are thus only text. Words without a letter or digit are
// dropped, since FTS5 indexes nothing of them; "" means no word is left.
func ftsQuery(q string) string {
	var terms []string
	for _, w := range strings.Fields(clean(q)) {
		prefix := strings.HasSuffix(w, "*")
		w = strings.TrimRight(w, "*")
		if !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) {
			continue
		}
		t := `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
		if prefix {
			t += "*"
		}
		if !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
		if len(terms) == maxTerms {
			break
		}
	}
	return strings.Join(terms, " AND ")
}

// pickSegments chooses what a list row shows of a prompt or an output:
// the line with its matches marked, else the text around the first match
// further in, else the plain line.
func pickSegments(line, lineSnippet, textSnippet string) []Segment {
	if seg := segments(lineSnippet); hasMatch(seg) {
		return seg
	}
	if seg := segments(textSnippet); hasMatch(seg) {
		return seg
	}
	if line == "" {
		return nil
	}
	return []Segment{{Text: line}}
}

// segments splits snippet() output at its markers, on one line.
func segments(s string) []Segment {
	if s == "" {
		return nil
	}
	s = strings.Join(strings.Fields(s), " ")
	var out []Segment
	for s != "" {
		open := strings.Index(s, markOpen)
		if open < 0 {
			out = append(out, Segment{Text: s})
			break
		}
		if open > 0 {
			out = append(out, Segment{Text: s[:open]})
		}
		s = s[open+len(markOpen):]
		end := strings.Index(s, markClose)
		if end < 0 {
			end = len(s)
		}
		if end > 0 {
			out = append(out, Segment{Text: s[:end], Match: true})
		}
		s = s[min(end+len(markClose), len(s)):]
	}
	return out
}

func hasMatch(seg []Segment) bool {
	return slices.ContainsFunc(seg, func(s Segment) bool { return s.Match })
}

// RunFacets returns the distinct providers and models of a user's runs,
// for the filter lists. Each distinct value costs one index seek.
func (s *Store) RunFacets(ctx context.Context, user int64) (providers, models []string, err error) {
	if providers, err = s.distinct(ctx, user, "provider"); err != nil {
		return nil, nil, err
	}
	if models, err = s.distinct(ctx, user, "model"); err != nil {
		return nil, nil, err
	}
	return providers, models, nil
}

// distinct lists the values of column (a constant, never user input) in
// user's runs by skipping from one value to the next along its index.
func (s *Store) distinct(ctx context.Context, user int64, column string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `
WITH RECURSIVE v(x) AS (
	SELECT (SELECT min(`+column+`) FROM runs WHERE user_id = ?1)
	UNION ALL
	SELECT (SELECT min(`+column+`) FROM runs WHERE user_id = ?1 AND `+column+` > v.x) FROM v WHERE v.x IS NOT NULL
)
SELECT x FROM v WHERE x IS NOT NULL`, user)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list %ss of runs: %w", column, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var x string
		if err := rows.Scan(&x); err != nil {
			return nil, fmt.Errorf("db: unable to list %ss of runs: %w", column, err)
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// SetRunStarred stars or unstars one of user's runs.
func (s *Store) SetRunStarred(ctx context.Context, user, id int64, starred bool) error {
	res, err := s.w.ExecContext(ctx, `UPDATE runs SET starred = ? WHERE id = ? AND user_id = ?`, starred, id, user)
	if err != nil {
		return fmt.Errorf("db: unable to star run %d: %w", id, err)
	}
	return affectedOne(res)
}

// SetRunNote keeps a free-text note on one of user's runs.
func (s *Store) SetRunNote(ctx context.Context, user, id int64, note string) error {
	res, err := s.w.ExecContext(ctx, `UPDATE runs SET note = ? WHERE id = ? AND user_id = ?`, note, id, user)
	if err != nil {
		return fmt.Errorf("db: unable to save the note of run %d: %w", id, err)
	}
	return affectedOne(res)
}

// RemoveRun deletes one of user's runs; the runs_forget trigger takes it
// out of search and removes its share links in the same statement. What
// it cost stays in the usage roll-ups: spent is spent.
func (s *Store) RemoveRun(ctx context.Context, user, id int64) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM runs WHERE id = ? AND user_id = ?`, id, user)
	if err != nil {
		return fmt.Errorf("db: unable to remove run %d: %w", id, err)
	}
	return affectedOne(res)
}

// exportBatch is how many runs ExportRuns reads per query, and
// exportBytes about how many bytes of them it holds at once: a page ends
// at whichever comes first, and always has at least one run.
const (
	exportBatch = 50
	exportBytes = 2 << 20
)

// ExportRuns calls fn with each of user's runs, oldest first: those in
// ids (others' ids are skipped), or all when ids is nil. A run's stored
// events and raw response are not read: an export has no place for them.
// Runs are read a page at a time (keyset on id), and no read transaction
// stays open while fn runs, so a slow reader holds neither memory nor the
// WAL.
func (s *Store) ExportRuns(ctx context.Context, user int64, ids []int64, fn func(Run) error) error {
	if ids != nil {
		ids = slices.Clone(ids)
		slices.Sort(ids)
		ids = slices.Compact(ids)
	}
	var after int64
	for {
		q := `SELECT ` + runColumns + ` FROM runs WHERE user_id = ? AND id > ?`
		args := []any{user, after}
		var chunk []int64
		if ids != nil {
			i, _ := slices.BinarySearch(ids, after+1)
			chunk = ids[i:min(i+exportBatch, len(ids))]
			if len(chunk) == 0 {
				return nil
			}
			q += ` AND id IN (?` + strings.Repeat(", ?", len(chunk)-1) + `)`
			for _, id := range chunk {
				args = append(args, id)
			}
		}
		q += ` ORDER BY id LIMIT ?`
		args = append(args, exportBatch)
		page, full, err := s.exportPage(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("db: unable to export runs: %w", err)
		}
		var last int64
		for i := range page {
			last = page[i].ID
			if err := fn(page[i]); err != nil {
				return err
			}
			page[i] = Run{} // let it go before the next is encoded
		}
		switch {
		case len(page) > 0 && (full || ids == nil):
			// Cut short by size, or more may follow: go on after the
			// last run read.
			after = last
		case ids != nil:
			// The chunk was read whole; the next starts after it even
			// when none of it was the user's.
			after = chunk[len(chunk)-1]
		default:
			return nil
		}
		if ids == nil && !full && len(page) < exportBatch {
			return nil
		}
	}
}

// exportPage reads runs for an export until exportBytes are held; full
// reports that it stopped there, before the query's end.
func (s *Store) exportPage(ctx context.Context, q string, args ...any) (page []Run, full bool, err error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	held := 0
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, false, err
		}
		page = append(page, r)
		held += len(r.Spec) + len(r.RawRequest) + len(r.Result) + len(r.Variables) + len(r.Note)
		if held >= exportBytes {
			return page, true, nil
		}
	}
	return page, false, rows.Err()
}

// purgeBatch is how many runs one PurgeRuns transaction deletes, so that
// the writer is never held long.
const purgeBatch = 500

// PurgeRuns deletes every user's runs created before before, except runs
// still running, and returns how many went. It deletes purgeBatch runs
// per transaction, so that runs ending meanwhile still save at full rate
// while a long history is purged. What the runs cost stays in the usage
// roll-ups.
func (s *Store) PurgeRuns(ctx context.Context, before time.Time) (int64, error) {
	return s.PurgeRunsInBatches(ctx, before, purgeBatch, nil)
}

// PurgeRunsInBatches is PurgeRuns with batch runs per transaction;
// afterBatch, when not nil, is called after each transaction that
// deleted something, with the writer free for others.
func (s *Store) PurgeRunsInBatches(ctx context.Context, before time.Time, batch int, afterBatch func(deleted int64)) (int64, error) {
	batch = max(batch, 1)
	var total int64
	for {
		// One statement is one transaction: between two of them the
		// writer's connection goes back to its pool, and database/sql
		// hands it to a waiting writer first.
		res, err := s.w.ExecContext(ctx, `
DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE created_at < ? AND status != ? LIMIT ?)`,
			before.UnixMilli(), RunRunning, batch)
		if err != nil {
			return total, fmt.Errorf("db: unable to purge runs: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("db: unable to purge runs: %w", err)
		}
		total += n
		if n > 0 && afterBatch != nil {
			afterBatch(n)
		}
		if n < int64(batch) {
			return total, nil
		}
	}
}

// numberParams reads the parameters json_group_object gathered, each
// number as JSON writes it.
func numberParams(obj string) map[string]string {
	var raw map[string]json.RawMessage
	if obj == "" || json.Unmarshal([]byte(obj), &raw) != nil || len(raw) == 0 {
		return nil
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		out[k] = string(v)
	}
	return out
}
