package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Arena statuses.
const (
	ArenaPreparing = "preparing" // pregenerated answers are being made
	ArenaReady     = "ready"
	ArenaError     = "error"
)

// Vote choices.
const (
	VoteA       = "a"
	VoteB       = "b"
	VoteTie     = "tie"
	VoteBothBad = "both_bad"
)

// ErrAlreadyVoted is returned for a second vote on a pair.
var ErrAlreadyVoted = errors.New("db: this pair has its vote already")

// ErrBudgetSpent is returned by ChargeArena when the arena's budget for
// live answers is spent.
var ErrBudgetSpent = errors.New("db: the arena's budget is spent")

// Arena is a blind head-to-head vote between contestants.
type Arena struct {
	ID               int64
	OwnerID          int64
	OwnerName        string // loaded
	Name             string
	Token            string // the voting link's: /a/{token}
	Audience         string // ShareTeam or SharePublic
	Mode             string // "pregenerated" or "live"
	ShowStreaming    bool   // live answers streamed side by side: not blind
	PromptsKind      string // "dataset", "list" or "open"
	DatasetID        int64
	DatasetVersion   int
	BudgetUSD        *float64
	BudgetCalls      *int
	SpentUSD         float64
	Calls            int
	MaxVotesPerVoter *int
	EndsAt           time.Time // zero: no end
	MaskTerms        []string
	Status           string
	Error            string
	RevokedAt        time.Time
	CreatedAt        time.Time
	Votes            int // loaded
}

// Open reports whether the arena takes votes at now.
func (a Arena) Open(now time.Time) bool {
	return a.RevokedAt.IsZero() && (a.EndsAt.IsZero() || now.Before(a.EndsAt)) && a.Status != ArenaError
}

// ArenaContestant is one side an arena's votes choose between.
type ArenaContestant struct {
	Index         int
	Name          string // revealed after a vote only
	Spec          string // a RunSpec JSON, with {{placeholders}}
	Variables     string
	PresetID      int64
	PresetVersion int
	PresetLabel   string
}

// ArenaPrompt is one prompt the contestants answer.
type ArenaPrompt struct {
	Index int
	Text  string            // what the voter reads
	Vars  map[string]string // the values filled into the contestants' specs
	Voter string            // the voter who typed it, for open arenas
}

// ArenaAnswer is a contestant's answer to a prompt.
type ArenaAnswer struct {
	Prompt, Contestant int
	Status             string // "pending", "running", "done", "error"
	RunID              int64
	Text               string
	Error              string
}

// ArenaPair is a pair of answers shown to a voter, and its vote.
type ArenaPair struct {
	ID      int64
	Voter   string
	Prompt  int
	A, B    int // contestants, as shown
	Choice  string
	Reason  string
	VotedAt time.Time
}

const arenaColumns = `a.id, a.owner_id, u.username, a.name, a.token, a.audience, a.mode, a.show_streaming, a.prompts_kind,
	ifnull(a.dataset_id, 0), a.dataset_version, a.budget_usd, a.budget_calls, a.spent_usd, a.calls, a.max_votes_per_voter,
	ifnull(a.ends_at, 0), a.mask_terms, a.status, a.error, ifnull(a.revoked_at, 0), a.created_at,
	(SELECT count(*) FROM arena_pairs p WHERE p.arena_id = a.id AND p.voted_at IS NOT NULL)`

func scanArena(row interface{ Scan(...any) error }) (Arena, error) {
	var a Arena
	var budget sql.NullFloat64
	var calls, perVoter sql.NullInt64
	var ends, revoked, created int64
	var terms string
	err := row.Scan(&a.ID, &a.OwnerID, &a.OwnerName, &a.Name, &a.Token, &a.Audience, &a.Mode, &a.ShowStreaming, &a.PromptsKind,
		&a.DatasetID, &a.DatasetVersion, &budget, &calls, &a.SpentUSD, &a.Calls, &perVoter, &ends, &terms, &a.Status, &a.Error,
		&revoked, &created, &a.Votes)
	if budget.Valid {
		a.BudgetUSD = &budget.Float64
	}
	if calls.Valid {
		n := int(calls.Int64)
		a.BudgetCalls = &n
	}
	if perVoter.Valid {
		n := int(perVoter.Int64)
		a.MaxVotesPerVoter = &n
	}
	if ends != 0 {
		a.EndsAt = time.UnixMilli(ends)
	}
	if revoked != 0 {
		a.RevokedAt = time.UnixMilli(revoked)
	}
	a.CreatedAt = time.UnixMilli(created)
	_ = json.Unmarshal([]byte(terms), &a.MaskTerms)
	return a, err
}

const arenaFrom = ` FROM arenas a JOIN users u ON u.id = a.owner_id`

// CreateArena stores an arena with its contestants and prompts, and for
// a pregenerated one an answer to make for every prompt and contestant.
func (s *Store) CreateArena(ctx context.Context, a Arena, cs []ArenaContestant, ps []ArenaPrompt) (Arena, error) {
	now := time.Now()
	a.Token = NewToken()
	var out Arena
	err := s.tx(ctx, func(tx *sql.Tx) error {
		terms, err := json.Marshal(nonNilStrings(a.MaskTerms))
		if err != nil {
			return err
		}
		var ends any
		if !a.EndsAt.IsZero() {
			ends = a.EndsAt.UnixMilli()
		}
		err = tx.QueryRowContext(ctx, `
INSERT INTO arenas (owner_id, name, token, audience, mode, show_streaming, prompts_kind, dataset_id, dataset_version, budget_usd,
	budget_calls, max_votes_per_voter, ends_at, mask_terms, status, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			a.OwnerID, a.Name, a.Token, a.Audience, a.Mode, a.ShowStreaming, a.PromptsKind, nullID(a.DatasetID), a.DatasetVersion,
			a.BudgetUSD, a.BudgetCalls, a.MaxVotesPerVoter, ends, string(terms), a.Status, now.UnixMilli()).Scan(&a.ID)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if _, err := tx.ExecContext(ctx, `
INSERT INTO arena_contestants (arena_id, idx, name, spec, variables, preset_id, preset_version, preset_label) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				a.ID, c.Index, c.Name, c.Spec, c.Variables, nullID(c.PresetID), c.PresetVersion, c.PresetLabel); err != nil {
				return err
			}
		}
		for _, p := range ps {
			if err := insertPrompt(ctx, tx, a.ID, p, now); err != nil {
				return err
			}
			if a.Mode != "pregenerated" {
				continue
			}
			for _, c := range cs {
				if _, err := tx.ExecContext(ctx, `INSERT INTO arena_answers (arena_id, prompt_idx, contestant, status) VALUES (?, ?, ?, 'pending')`,
					a.ID, p.Index, c.Index); err != nil {
					return err
				}
			}
		}
		out, err = scanArena(tx.QueryRowContext(ctx, `SELECT `+arenaColumns+arenaFrom+` WHERE a.id = ?`, a.ID))
		return err
	})
	if err != nil {
		return Arena{}, fmt.Errorf("db: unable to create arena: %w", err)
	}
	return out, nil
}

func insertPrompt(ctx context.Context, tx *sql.Tx, arena int64, p ArenaPrompt, at time.Time) error {
	vars := ""
	if len(p.Vars) > 0 {
		b, err := json.Marshal(p.Vars)
		if err != nil {
			return err
		}
		vars = string(b)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO arena_prompts (arena_id, idx, text, vars, voter_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		arena, p.Index, p.Text, vars, p.Voter, at.UnixMilli())
	return err
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Arena loads an arena; every member of the team sees it.
func (s *Store) Arena(ctx context.Context, id int64) (Arena, error) {
	a, err := scanArena(s.r.QueryRowContext(ctx, `SELECT `+arenaColumns+arenaFrom+` WHERE a.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Arena{}, ErrNotFound
	}
	if err != nil {
		return Arena{}, fmt.Errorf("db: unable to load arena %d: %w", id, err)
	}
	return a, nil
}

// ArenaByToken loads the arena behind a voting link that is not
// revoked; ErrNotFound otherwise.
func (s *Store) ArenaByToken(ctx context.Context, token string) (Arena, error) {
	a, err := scanArena(s.r.QueryRowContext(ctx, `SELECT `+arenaColumns+arenaFrom+` WHERE a.token = ? AND a.revoked_at IS NULL`, token))
	if errors.Is(err, sql.ErrNoRows) {
		return Arena{}, ErrNotFound
	}
	if err != nil {
		return Arena{}, fmt.Errorf("db: unable to load an arena: %w", err)
	}
	return a, nil
}

// Arenas lists arenas newest first, at most limit with ids below before
// (0: from the newest).
func (s *Store) Arenas(ctx context.Context, before int64, limit int) ([]Arena, error) {
	if before <= 0 {
		before = 1 << 62
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+arenaColumns+arenaFrom+` WHERE a.id < ? ORDER BY a.id DESC LIMIT ?`, before, limit)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list arenas: %w", err)
	}
	defer rows.Close()
	var out []Arena
	for rows.Next() {
		a, err := scanArena(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to list arenas: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// RevokeArena ends an arena's voting link at once: its owner's or an
// admin's to do.
func (s *Store) RevokeArena(ctx context.Context, user int64, isAdmin bool, id int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE arenas SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL AND (owner_id = ? OR ?)`,
		time.Now().UnixMilli(), id, user, isAdmin)
	if err != nil {
		return fmt.Errorf("db: unable to revoke arena %d: %w", id, err)
	}
	return affectedOne(res)
}

// SetArenaStatus records that an arena's answers are made (ready) or
// could not be (error, with why).
func (s *Store) SetArenaStatus(ctx context.Context, id int64, status, msg string) error {
	if _, err := s.w.ExecContext(ctx, `UPDATE arenas SET status = ?, error = ? WHERE id = ?`, status, msg, id); err != nil {
		return fmt.Errorf("db: unable to set the status of arena %d: %w", id, err)
	}
	return nil
}

// ArenaContestants loads an arena's contestants, in order.
func (s *Store) ArenaContestants(ctx context.Context, id int64) ([]ArenaContestant, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT idx, name, spec, variables, ifnull(preset_id, 0), preset_version, preset_label
FROM arena_contestants WHERE arena_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, fmt.Errorf("db: unable to load the contestants of arena %d: %w", id, err)
	}
	defer rows.Close()
	var out []ArenaContestant
	for rows.Next() {
		var c ArenaContestant
		if err := rows.Scan(&c.Index, &c.Name, &c.Spec, &c.Variables, &c.PresetID, &c.PresetVersion, &c.PresetLabel); err != nil {
			return nil, fmt.Errorf("db: unable to load the contestants of arena %d: %w", id, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ArenaPrompts loads an arena's prompts, in order.
func (s *Store) ArenaPrompts(ctx context.Context, id int64) ([]ArenaPrompt, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT idx, text, vars, voter_id FROM arena_prompts WHERE arena_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, fmt.Errorf("db: unable to load the prompts of arena %d: %w", id, err)
	}
	defer rows.Close()
	var out []ArenaPrompt
	for rows.Next() {
		var p ArenaPrompt
		var vars string
		if err := rows.Scan(&p.Index, &p.Text, &vars, &p.Voter); err != nil {
			return nil, fmt.Errorf("db: unable to load the prompts of arena %d: %w", id, err)
		}
		if vars != "" {
			_ = json.Unmarshal([]byte(vars), &p.Vars)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// ArenaPromptsPerVoter bounds the prompts one voter adds to an open
// arena, so that no voter takes every place.
const ArenaPromptsPerVoter = 20

// AddArenaPrompt adds a prompt a voter typed to an open arena, at the
// end, at most max prompts in all and ArenaPromptsPerVoter of one
// voter's; answers are then made live.
func (s *Store) AddArenaPrompt(ctx context.Context, arena int64, text, voter string, max int) (ArenaPrompt, error) {
	var p ArenaPrompt
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var n, theirs int
		if err := tx.QueryRowContext(ctx, `SELECT count(*), ifnull(sum(voter_id = ?), 0) FROM arena_prompts WHERE arena_id = ?`, voter, arena).Scan(&n, &theirs); err != nil {
			return err
		}
		if n >= max || theirs >= ArenaPromptsPerVoter {
			return ErrBudgetSpent
		}
		p = ArenaPrompt{Index: n, Text: text, Voter: voter}
		return insertPrompt(ctx, tx, arena, p, time.Now())
	})
	if err != nil && !errors.Is(err, ErrBudgetSpent) {
		return ArenaPrompt{}, fmt.Errorf("db: unable to add a prompt to arena %d: %w", arena, err)
	}
	return p, err
}

// ArenaAnswers loads an arena's answers: all of them when prompt < 0,
// else those to one prompt.
func (s *Store) ArenaAnswers(ctx context.Context, arena int64, prompt int) ([]ArenaAnswer, error) {
	q := `SELECT prompt_idx, contestant, status, ifnull(run_id, 0), text, error FROM arena_answers WHERE arena_id = ?`
	args := []any{arena}
	if prompt >= 0 {
		q += ` AND prompt_idx = ?`
		args = append(args, prompt)
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY prompt_idx, contestant`, args...)
	if err != nil {
		return nil, fmt.Errorf("db: unable to load the answers of arena %d: %w", arena, err)
	}
	defer rows.Close()
	var out []ArenaAnswer
	for rows.Next() {
		var a ArenaAnswer
		if err := rows.Scan(&a.Prompt, &a.Contestant, &a.Status, &a.RunID, &a.Text, &a.Error); err != nil {
			return nil, fmt.Errorf("db: unable to load the answers of arena %d: %w", arena, err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// SaveArenaAnswer records an answer's state: started with its run, or
// ended with its text or error. It is made when it does not exist yet
// (a live answer).
func (s *Store) SaveArenaAnswer(ctx context.Context, arena int64, a ArenaAnswer) error {
	_, err := s.w.ExecContext(ctx, `
INSERT INTO arena_answers (arena_id, prompt_idx, contestant, status, run_id, text, error) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (arena_id, prompt_idx, contestant) DO UPDATE SET status = excluded.status, run_id = excluded.run_id,
	text = excluded.text, error = excluded.error`,
		arena, a.Prompt, a.Contestant, a.Status, nullID(a.RunID), a.Text, a.Error)
	if err != nil {
		return fmt.Errorf("db: unable to save an answer of arena %d: %w", arena, err)
	}
	return nil
}

// ChargeArena takes one call and usd from a live arena's budget before
// the call is made: ErrBudgetSpent, and nothing taken, once either limit
// is reached.
func (s *Store) ChargeArena(ctx context.Context, arena int64, usd float64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE arenas SET spent_usd = spent_usd + ?, calls = calls + 1
WHERE id = ? AND (budget_usd IS NULL OR spent_usd + ? <= budget_usd) AND (budget_calls IS NULL OR calls < budget_calls)`, usd, arena, usd)
	if err != nil {
		return fmt.Errorf("db: unable to charge arena %d: %w", arena, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrBudgetSpent
	}
	return nil
}

// EnsureVoter records a voter of an arena (a cookie's random id, the
// signed-in user when there is one, the name they gave).
func (s *Store) EnsureVoter(ctx context.Context, arena int64, voter string, user int64, name string) error {
	_, err := s.w.ExecContext(ctx, `
INSERT INTO arena_voters (arena_id, id, user_id, name, created_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (arena_id, id) DO UPDATE SET name = CASE WHEN excluded.name != '' THEN excluded.name ELSE arena_voters.name END`,
		arena, voter, nullID(user), strings.TrimSpace(name), time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("db: unable to record a voter of arena %d: %w", arena, err)
	}
	return nil
}

const pairColumns = `id, voter_id, prompt_idx, a, b, ifnull(choice, ''), reason, ifnull(voted_at, 0)`

func scanPair(row interface{ Scan(...any) error }) (ArenaPair, error) {
	var p ArenaPair
	var voted int64
	err := row.Scan(&p.ID, &p.Voter, &p.Prompt, &p.A, &p.B, &p.Choice, &p.Reason, &voted)
	if voted != 0 {
		p.VotedAt = time.UnixMilli(voted)
	}
	return p, err
}

// IssuePair gives a voter a pair to vote on: the one they were given and
// have not voted on yet when there is one (a reload shows it again), else
// a new one. ErrAlreadyVoted when the voter already has that prompt and
// pair, either way round.
func (s *Store) IssuePair(ctx context.Context, arena int64, voter string, prompt, a, b int) (ArenaPair, error) {
	p, err := scanPair(s.w.QueryRowContext(ctx, `
INSERT INTO arena_pairs (arena_id, voter_id, prompt_idx, a, b, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING `+pairColumns,
		arena, voter, prompt, a, b, time.Now().UnixMilli()))
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		return ArenaPair{}, ErrAlreadyVoted
	}
	if err != nil {
		return ArenaPair{}, fmt.Errorf("db: unable to issue a pair of arena %d: %w", arena, err)
	}
	return p, nil
}

// OpenPair is the pair a voter was given and has not voted on;
// ErrNotFound when there is none.
func (s *Store) OpenPair(ctx context.Context, arena int64, voter string) (ArenaPair, error) {
	p, err := scanPair(s.r.QueryRowContext(ctx, `SELECT `+pairColumns+` FROM arena_pairs
WHERE arena_id = ? AND voter_id = ? AND voted_at IS NULL ORDER BY id DESC LIMIT 1`, arena, voter))
	if errors.Is(err, sql.ErrNoRows) {
		return ArenaPair{}, ErrNotFound
	}
	if err != nil {
		return ArenaPair{}, fmt.Errorf("db: unable to load a pair of arena %d: %w", arena, err)
	}
	return p, nil
}

// Vote records a voter's choice on a pair they were given, once:
// ErrAlreadyVoted for a second vote, ErrNotFound for a pair that is not
// theirs.
func (s *Store) Vote(ctx context.Context, arena int64, voter string, pair int64, choice, reason string) (ArenaPair, error) {
	var out ArenaPair
	err := s.tx(ctx, func(tx *sql.Tx) error {
		p, err := scanPair(tx.QueryRowContext(ctx, `SELECT `+pairColumns+` FROM arena_pairs WHERE id = ? AND arena_id = ? AND voter_id = ?`,
			pair, arena, voter))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		} else if err != nil {
			return err
		}
		if !p.VotedAt.IsZero() {
			return ErrAlreadyVoted
		}
		now := time.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE arena_pairs SET choice = ?, reason = ?, voted_at = ? WHERE id = ?`,
			choice, reason, now.UnixMilli(), pair); err != nil {
			return err
		}
		p.Choice, p.Reason, p.VotedAt = choice, reason, now
		out = p
		return nil
	})
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrAlreadyVoted) {
		return ArenaPair{}, fmt.Errorf("db: unable to record a vote in arena %d: %w", arena, err)
	}
	return out, err
}

// ArenaPairs lists an arena's pairs, voted ones only when voted, oldest
// first: the results and the scheduler read them.
func (s *Store) ArenaPairs(ctx context.Context, arena int64, voted bool) ([]ArenaPair, error) {
	q := `SELECT ` + pairColumns + ` FROM arena_pairs WHERE arena_id = ?`
	if voted {
		q += ` AND voted_at IS NOT NULL`
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY id`, arena)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list the pairs of arena %d: %w", arena, err)
	}
	defer rows.Close()
	var out []ArenaPair
	for rows.Next() {
		p, err := scanPair(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to list the pairs of arena %d: %w", arena, err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// AddArenaSpend adds what a call an arena made cost, once it is known.
func (s *Store) AddArenaSpend(ctx context.Context, arena int64, usd float64) error {
	if _, err := s.w.ExecContext(ctx, `UPDATE arenas SET spent_usd = spent_usd + ? WHERE id = ?`, usd, arena); err != nil {
		return fmt.Errorf("db: unable to record the spend of arena %d: %w", arena, err)
	}
	return nil
}

// PreparingArenas lists the arenas whose answers were being made ahead
// when Knobs stopped.
func (s *Store) PreparingArenas(ctx context.Context) ([]Arena, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+arenaColumns+arenaFrom+` WHERE a.status = 'preparing' ORDER BY a.id`)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list preparing arenas: %w", err)
	}
	defer rows.Close()
	var out []Arena
	for rows.Next() {
		a, err := scanArena(rows)
		if err != nil {
			return nil, fmt.Errorf("db: unable to list preparing arenas: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// ClaimArenaAnswer takes the making of a contestant's answer to a prompt
// for the caller: true when no one has made it or is making it (or the
// last try failed), false when another request has it.
func (s *Store) ClaimArenaAnswer(ctx context.Context, arena int64, prompt, contestant int) (bool, error) {
	res, err := s.w.ExecContext(ctx, `
INSERT INTO arena_answers (arena_id, prompt_idx, contestant, status) VALUES (?, ?, ?, 'running')
ON CONFLICT (arena_id, prompt_idx, contestant) DO UPDATE SET status = 'running', error = '' WHERE arena_answers.status IN ('pending', 'error')`,
		arena, prompt, contestant)
	if err != nil {
		return false, fmt.Errorf("db: unable to claim an answer of arena %d: %w", arena, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// RefundArena gives back a charge whose call was not made.
func (s *Store) RefundArena(ctx context.Context, arena int64, usd float64) error {
	if _, err := s.w.ExecContext(ctx, `UPDATE arenas SET spent_usd = max(spent_usd - ?, 0), calls = max(calls - 1, 0) WHERE id = ?`, usd, arena); err != nil {
		return fmt.Errorf("db: unable to refund arena %d: %w", arena, err)
	}
	return nil
}

// ArenaVoterNames gives the names an arena's voters gave, by voter id
// (those who gave none are left out).
func (s *Store) ArenaVoterNames(ctx context.Context, arena int64) (map[string]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, name FROM arena_voters WHERE arena_id = ? AND name != ''`, arena)
	if err != nil {
		return nil, fmt.Errorf("db: unable to list the voters of arena %d: %w", arena, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, fmt.Errorf("db: unable to list the voters of arena %d: %w", arena, err)
		}
		out[id] = name
	}
	return out, rows.Err()
}
