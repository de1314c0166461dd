package handlers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"knobs/arena"
	"knobs/db"
	"knobs/runner"
)

// voterCookie holds a public arena voter's random id; it is the voter's
// only identity, so it is HttpOnly and SameSite=Strict: another site
// cannot vote in a voter's name.
const voterCookie = "knobs_voter"

// arenaVoterName bounds the name a public link's voter may give.
const arenaVoterName = 60

// arenaLiveWait bounds how long a pair waits for live answers.
const arenaLiveWait = 5 * time.Minute

// PairAnswer is a pair as a voter gets it: the prompt and two answers,
// their names, models and providers masked, and nothing else that could
// tell who wrote them (no ids, no timings).
type PairAnswer struct {
	PairID int64      `json:"pair_id" doc:"The pair to vote on, in POST /a/{token}/vote."`
	Prompt string     `json:"prompt" doc:"The prompt both answers answer."`
	A      PairSide   `json:"a" doc:"The answer shown on the left (A)."`
	B      PairSide   `json:"b" doc:"The answer shown on the right (B)."`
	Votes  VoterTally `json:"votes" doc:"The voter's votes so far (in the reveal: zero, not counted)."`
}

// PairSide is one answer of a pair: its text, and the text rendered
// from Markdown as the playground renders a run's answer (sanitized).
type PairSide struct {
	Text string `json:"text" doc:"The answer: with the contestants' names masked before the vote, as written in the reveal."`
	HTML string `json:"html" doc:"The text rendered from Markdown, sanitized."`
	Name string `json:"name,omitempty" doc:"Only in the reveal: the display name of the contestant that wrote this answer."`
}

// VoterTally says how many votes a voter has given and may give.
type VoterTally struct {
	Given int  `json:"given" doc:"Votes the voter has given."`
	Max   *int `json:"max" doc:"Votes a voter may give; null when there is no limit."`
}

// ArenaVoteInput is a vote, as POST /a/{token}/vote takes it.
type ArenaVoteInput struct {
	PairID int64  `json:"pair_id" doc:"The pair GET /a/{token}/pair gave."`
	Choice string `json:"choice" enum:"a,b,tie,both_bad" doc:"The better answer, a tie, or both bad."`
	Reason string `json:"reason" required:"false" maxLength:"1000" doc:"Why, optionally."`
	Name   string `json:"name" required:"false" maxLength:"60" doc:"A public link's voter's name, optionally, kept with their votes."`
}

// ArenaPromptInput is a prompt a voter wrote, as POST /a/{token}/prompt
// takes it.
type ArenaPromptInput struct {
	Text string `json:"text" minLength:"1" doc:"The prompt, up to 8 KiB (in UTF-8)."`
}

// ArenaPromptAdded answers a prompt a voter added.
type ArenaPromptAdded struct {
	Prompt int `json:"prompt" doc:"The prompt's number in the arena; the voter's next pair is on it."`
}

// arenaOf loads the arena behind a voting link that still takes votes:
// 404 for an unknown or revoked link, 410 once voting has ended.
func (h *Handler) arenaOf(c *fiber.Ctx) (db.Arena, error) {
	token := c.Params("token")
	if len(token) > 64 {
		return db.Arena{}, &Problem{Status: fiber.StatusNotFound, Message: "This voting link does not open anything: it is unknown or was revoked."}
	}
	a, err := h.store.ArenaByToken(ctx(c), token)
	if errors.Is(err, db.ErrNotFound) {
		return db.Arena{}, &Problem{Status: fiber.StatusNotFound, Message: "This voting link does not open anything: it is unknown or was revoked."}
	} else if err != nil {
		return db.Arena{}, err
	}
	if !a.Open(time.Now()) {
		return db.Arena{}, &Problem{Status: fiber.StatusGone, Message: "Voting in this arena has ended. Thank you!"}
	}
	return a, nil
}

// arenaVoter is who votes: a team link's signed-in member, or a public
// link's cookie, made when the voter first asks for a pair (create).
func (h *Handler) arenaVoter(c *fiber.Ctx, a db.Arena, create bool) (string, error) {
	u, signedIn := CurrentUser(c)
	if a.Audience == db.ShareTeam {
		if !signedIn {
			return "", &Problem{Status: fiber.StatusUnauthorized, Message: "This arena is for the team: sign in to vote."}
		}
		id := "user:" + strconv.FormatInt(u.ID, 10)
		return id, h.store.EnsureVoter(ctx(c), a.ID, id, u.ID, u.Username)
	}
	id := c.Cookies(voterCookie)
	if len(id) != 22 {
		if !create {
			return "", &Problem{Status: fiber.StatusForbidden, Message: "Open the voting link first: your votes are counted by this browser."}
		}
		b := make([]byte, 16)
		rand.Read(b)
		id = base64.RawURLEncoding.EncodeToString(b)
		c.Cookie(&fiber.Cookie{Name: voterCookie, Value: id, Path: "/a/" + a.Token, MaxAge: 365 * 24 * 3600, HTTPOnly: true,
			Secure: h.cfg.SecureCookies, SameSite: fiber.CookieSameSiteStrictMode})
	}
	var user int64
	if signedIn {
		user = u.ID
	}
	return id, h.store.EnsureVoter(ctx(c), a.ID, id, user, "")
}

// limitVoter bounds what one address asks of the arenas.
func (h *Handler) limitVoter(c *fiber.Ctx) error {
	key := "arena:" + c.IP()
	if ok, wait := h.voters.Reserve(key); !ok {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(wait.Seconds())+1))
		return &Problem{Status: fiber.StatusTooManyRequests, Message: "Too many requests from your address: wait a moment, then go on."}
	}
	return nil
}

// voterTally counts a voter's votes and the pairs they have seen.
func (h *Handler) voterPairs(c *fiber.Ctx, a db.Arena, voter string) (mine []db.ArenaPair, all []db.ArenaPair, err error) {
	all, err = h.store.ArenaPairs(ctx(c), a.ID, false)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range all {
		if p.Voter == voter {
			mine = append(mine, p)
		}
	}
	return mine, all, nil
}

// ArenaPair answers a voter's next pair: the one they were given and have
// not voted on, else a new one drawn to even out the comparisons, its
// sides in random order. Its answers are made ahead, or now for a live
// arena (within its budget).
func (h *Handler) ArenaPair(c *fiber.Ctx) error {
	a, err := h.arenaOf(c)
	if err != nil {
		return err
	}
	if err := h.limitVoter(c); err != nil {
		return err
	}
	voter, err := h.arenaVoter(c, a, true)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	cs, err := h.store.ArenaContestants(ctx(c), a.ID)
	if err != nil {
		return err
	}
	mine, all, err := h.voterPairs(c, a, voter)
	if err != nil {
		return err
	}
	tally := VoterTally{Max: a.MaxVotesPerVoter}
	var open *db.ArenaPair
	for i := range mine {
		if mine[i].VotedAt.IsZero() {
			open = &mine[i]
		} else {
			tally.Given++
		}
	}
	if tally.Max != nil && tally.Given >= *tally.Max {
		return &Problem{Status: fiber.StatusForbidden, Message: fmt.Sprintf("You have given your %d votes. Thank you!", *tally.Max)}
	}
	if open == nil {
		if a.Status == db.ArenaPreparing {
			return &Problem{Status: fiber.StatusConflict, Message: "The answers are still being made; try again in a minute."}
		}
		if a.ShowStreaming && a.Mode == "live" && strings.Contains(c.Get(fiber.HeaderAccept), "text/event-stream") {
			return h.streamPair(c, a, cs, voter, mine, all, tally)
		}
		p, err := h.drawPair(ctx(c), a, cs, voter, mine, all, nil)
		if err != nil {
			return err
		}
		open = &p
	}
	out, err := h.pairAnswer(c.UserContext(), a, cs, *open, false)
	if err != nil {
		return err
	}
	out.Votes = tally
	return c.JSON(out)
}

// answerWatch is told of each live answer of a pair as its run starts,
// with the pair's prompt and the side it is shown on ("a" or "b"), so
// that a speed demo can stream it; nil when no one watches.
type answerWatch func(prompt, side string, run *runner.Run)

// drawPair picks and issues a new pair for a voter.
func (h *Handler) drawPair(ctx context.Context, a db.Arena, cs []db.ArenaContestant, voter string, mine, all []db.ArenaPair, watch answerWatch) (db.ArenaPair, error) {
	prompts, err := h.store.ArenaPrompts(ctx, a.ID)
	if err != nil {
		return db.ArenaPair{}, err
	}
	answers, err := h.store.ArenaAnswers(ctx, a.ID, -1)
	if err != nil {
		return db.ArenaPair{}, err
	}
	made := map[[2]int]bool{}
	for _, x := range answers {
		if x.Status == "done" {
			made[[2]int{x.Prompt, x.Contestant}] = true
		}
	}
	if len(prompts) == 0 {
		return db.ArenaPair{}, &Problem{Status: fiber.StatusConflict, Message: "Write a prompt to get a pair."}
	}
	s, err := arena.NewScheduler(len(cs), len(prompts), uint64(a.ID))
	if err != nil {
		return db.ArenaPair{}, err
	}
	for _, p := range all {
		if !p.VotedAt.IsZero() {
			_ = s.Record(arena.Matchup{Prompt: p.Prompt, A: p.A, B: p.B})
		}
	}
	var seen []arena.Matchup
	for _, p := range mine {
		seen = append(seen, arena.Matchup{Prompt: p.Prompt, A: p.A, B: p.B})
	}
	// An open arena pairs on the voter's own prompts. Answers already
	// made come first (a live arena whose budget is spent still has
	// them); only then does a live arena make new ones.
	for _, makeNew := range []bool{false, a.Mode == "live"} {
		if p, ok, err := h.tryDraw(ctx, a, cs, voter, prompts, s, seen, made, makeNew, watch); err != nil || ok {
			return p, err
		}
	}
	msg := "You have voted on every pair there is. Thank you!"
	if a.PromptsKind == "open" {
		msg = "Write a prompt to get the next pair."
	}
	return db.ArenaPair{}, &Problem{Status: fiber.StatusConflict, Message: msg}
}

// tryDraw draws matchups until one can be shown: its answers made, or
// (makeNew) made now. ok is false when none is left.
func (h *Handler) tryDraw(ctx context.Context, a db.Arena, cs []db.ArenaContestant, voter string, prompts []db.ArenaPrompt,
	s *arena.Scheduler, seen []arena.Matchup, made map[[2]int]bool, makeNew bool, watch answerWatch) (db.ArenaPair, bool, error) {
	// Every matchup that cannot be shown is ruled out at once, so that one
	// draw finds a showable one: a voter's request costs one pass over the
	// prompts and pairs, however few are showable.
	excluded := append([]arena.Matchup(nil), seen...)
	for pi, p := range prompts {
		mine := a.PromptsKind != "open" || p.Voter == voter
		for i := range cs {
			for j := i + 1; j < len(cs); j++ {
				ready := made[[2]int{pi, i}] && made[[2]int{pi, j}]
				if !mine || (!ready && !makeNew) {
					excluded = append(excluded, arena.Matchup{Prompt: pi, A: i, B: j})
				}
			}
		}
	}
	for range 5 { // a pair issued meanwhile by another request of the voter's
		m, ok, err := s.Next(excluded)
		if err != nil || !ok {
			return db.ArenaPair{}, false, err
		}
		if !(made[[2]int{m.Prompt, m.A}] && made[[2]int{m.Prompt, m.B}]) {
			if err := h.liveAnswers(ctx, a, cs, prompts[m.Prompt], made, m, watch); err != nil {
				return db.ArenaPair{}, false, err
			}
		}
		p, err := h.store.IssuePair(ctx, a.ID, voter, m.Prompt, m.A, m.B)
		if errors.Is(err, db.ErrAlreadyVoted) {
			// The same pair, or another open one, issued by a request of
			// the voter's at the same moment: that one is theirs.
			if open, oerr := h.store.OpenPair(ctx, a.ID, voter); oerr == nil {
				return open, true, nil
			}
			excluded = append(excluded, m)
			continue
		}
		return p, err == nil, err
	}
	return db.ArenaPair{}, false, nil
}

// liveAnswers makes the answers a live pair lacks. Each is claimed
// first, so that two voters' requests never make (and pay for) the same
// answer twice: what another request is making is waited for. Each is
// charged to the budget at its most (known prices) before it is asked
// for, and settled at its cost once made.
func (h *Handler) liveAnswers(ctx context.Context, a db.Arena, cs []db.ArenaContestant, p db.ArenaPrompt, made map[[2]int]bool, m arena.Matchup, watch answerWatch) error {
	if err := h.arenaWithinBudget(ctx, a, cs, p, made, m); err != nil {
		return err
	}
	var mine, others []int
	for _, side := range []int{m.A, m.B} {
		if made[[2]int{m.Prompt, side}] {
			continue
		}
		claimed, err := h.store.ClaimArenaAnswer(ctx, a.ID, m.Prompt, side)
		if err != nil {
			return err
		}
		if claimed {
			mine = append(mine, side)
		} else {
			others = append(others, side)
		}
	}
	release := func(sides []int, charged []float64) {
		bg := context.WithoutCancel(ctx)
		for _, side := range sides {
			_ = h.store.SaveArenaAnswer(bg, a.ID, db.ArenaAnswer{Prompt: m.Prompt, Contestant: side, Status: "pending"})
		}
		for _, usd := range charged {
			_ = h.store.RefundArena(bg, a.ID, usd)
		}
	}
	var charged []float64
	for _, side := range mine {
		est, _ := h.answerEstimate(ctx, cs[side], p, a.PromptsKind)
		if err := h.store.ChargeArena(ctx, a.ID, est); err != nil {
			release(mine, charged)
			if errors.Is(err, db.ErrBudgetSpent) {
				return &Problem{Status: fiber.StatusPaymentRequired, Message: "This arena's budget for new answers is spent: no more pairs can be made. Answers already made can still be voted on."}
			}
			return err
		}
		charged = append(charged, est)
	}
	wctx, cancel := context.WithTimeout(h.background, arenaLiveWait)
	defer cancel()
	var wg sync.WaitGroup
	failed := make([]bool, len(mine))
	for i, side := range mine {
		wg.Add(1)
		var started func(*runner.Run)
		if watch != nil {
			shown := "a"
			if side == m.B {
				shown = "b"
			}
			started = func(run *runner.Run) { watch(p.Text, shown, run) }
		}
		go func() {
			defer wg.Done()
			ans, cost := h.arenaAnswer(wctx, a, cs[side], p, started)
			bg := context.WithoutCancel(wctx)
			if err := h.store.SaveArenaAnswer(bg, a.ID, ans); err != nil || ans.Status != "done" {
				failed[i] = true
			}
			if err := h.store.AddArenaSpend(bg, a.ID, cost-charged[i]); err != nil {
				h.log.ErrorContext(ctx, "settling an arena's spend", "arena", a.ID, "err", err)
			}
		}()
	}
	wg.Wait()
	// What another request is making: wait until it is made or failed.
	for _, side := range others {
		for {
			as, err := h.store.ArenaAnswers(wctx, a.ID, m.Prompt)
			if err != nil {
				return &Problem{Status: fiber.StatusBadGateway, Message: "An answer could not be made; ask for another pair."}
			}
			status := ""
			for _, x := range as {
				if x.Contestant == side {
					status = x.Status
				}
			}
			if status == "done" {
				break
			}
			if status == "error" || status == "pending" || wctx.Err() != nil {
				return &Problem{Status: fiber.StatusBadGateway, Message: "An answer could not be made; ask for another pair."}
			}
			select {
			case <-wctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	for _, f := range failed {
		if f {
			return &Problem{Status: fiber.StatusBadGateway, Message: "An answer could not be made; ask for another pair."}
		}
	}
	return nil
}

// arenaWithinBudget refuses a live pair whose answers the owner's
// monthly budgets (the answers are the owner's runs) cannot pay for now,
// before any is claimed or charged: the voter is told the arena cannot
// make more answers now, and pairs already made stay votable.
func (h *Handler) arenaWithinBudget(ctx context.Context, a db.Arena, cs []db.ArenaContestant, p db.ArenaPrompt, made map[[2]int]bool, m arena.Matchup) error {
	var providers []string
	unpriced := false
	for _, side := range []int{m.A, m.B} {
		if made[[2]int{m.Prompt, side}] {
			continue
		}
		setup, err := arenaSetup(cs[side], p, a.PromptsKind)
		if err != nil {
			continue // refused with its own message when made
		}
		providers = append(providers, setup.Spec.Provider)
		if _, known := h.answerEstimate(ctx, cs[side], p, a.PromptsKind); !known {
			unpriced = true
		}
	}
	refused, err := h.budgetUsedUp(ctx, a.OwnerID, providers, unpriced)
	if err != nil {
		return err
	}
	if refused != nil {
		h.log.InfoContext(ctx, "a live arena's answer refused by a budget", "arena", a.ID, "scope", refused.Scope)
		return &Problem{Status: fiber.StatusPaymentRequired, Message: "This arena cannot generate more answers now: its budget for this month is used up. Pairs already made can still be voted on."}
	}
	return nil
}

// pairAnswer is a pair as the voter sees it: masked, or with reveal the
// contestants' names and the answers as written.
func (h *Handler) pairAnswer(ctx context.Context, a db.Arena, cs []db.ArenaContestant, p db.ArenaPair, reveal bool) (PairAnswer, error) {
	prompts, err := h.store.ArenaPrompts(ctx, a.ID)
	if err != nil {
		return PairAnswer{}, err
	}
	answers, err := h.store.ArenaAnswers(ctx, a.ID, p.Prompt)
	if err != nil {
		return PairAnswer{}, err
	}
	text := map[int]string{}
	for _, x := range answers {
		text[x.Contestant] = x.Text
	}
	out := PairAnswer{PairID: p.ID, A: PairSide{Text: text[p.A]}, B: PairSide{Text: text[p.B]}}
	if p.Prompt < len(prompts) {
		out.Prompt = prompts[p.Prompt].Text
	}
	if reveal {
		out.A.Name, out.B.Name = cs[p.A].Name, cs[p.B].Name
	} else {
		m, err := h.arenaMasker(a, cs)
		if err != nil {
			return PairAnswer{}, err
		}
		out.A.Text, out.B.Text = m.Mask(out.A.Text), m.Mask(out.B.Text)
	}
	// Rendered from the text as the voter gets it: masked before the
	// vote, as written in the reveal.
	out.A.HTML, out.B.HTML = h.md.Render(out.A.Text), h.md.Render(out.B.Text)
	return out, nil
}

// ArenaVote records a voter's choice on their pair, once, and answers
// the reveal: who wrote which answer, and the answers as written.
func (h *Handler) ArenaVote(c *fiber.Ctx) error {
	a, err := h.arenaOf(c)
	if err != nil {
		return err
	}
	if err := h.limitVoter(c); err != nil {
		return err
	}
	voter, err := h.arenaVoter(c, a, false)
	if err != nil {
		return err
	}
	var in ArenaVoteInput
	if err := c.BodyParser(&in); err != nil {
		return &Problem{Status: fiber.StatusBadRequest, Message: `Send {"pair_id", "choice", "reason", "name"} as JSON.`}
	}
	fe := map[string]string{}
	switch in.Choice {
	case db.VoteA, db.VoteB, db.VoteTie, db.VoteBothBad:
	default:
		fe["choice"] = `Choose "a", "b", "tie" or "both_bad".`
	}
	in.Reason = strings.TrimSpace(in.Reason)
	if utf8.RuneCountInString(in.Reason) > 1000 {
		fe["reason"] = "A reason is at most 1,000 characters."
	}
	in.Name = strings.TrimSpace(in.Name)
	if utf8.RuneCountInString(in.Name) > arenaVoterName || strings.ContainsFunc(in.Name, unicode.IsControl) {
		fe["name"] = fmt.Sprintf("A name is at most %d characters, on one line.", arenaVoterName)
	}
	if len(fe) > 0 {
		return invalid("The vote was not counted: fix the fields marked.", fe)
	}
	p, err := h.store.Vote(ctx(c), a.ID, voter, in.PairID, in.Choice, in.Reason)
	switch {
	case errors.Is(err, db.ErrNotFound):
		return &Problem{Status: fiber.StatusNotFound, Message: "This pair is not yours to vote on: ask for a pair first."}
	case errors.Is(err, db.ErrAlreadyVoted):
		return &Problem{Status: fiber.StatusConflict, Message: "You have voted on this pair already."}
	case err != nil:
		return err
	}
	// A team link's voter is their account, named already; a refused vote names no one.
	if in.Name != "" && a.Audience != db.ShareTeam {
		if err := h.store.EnsureVoter(ctx(c), a.ID, voter, 0, in.Name); err != nil {
			return err
		}
	}
	cs, err := h.store.ArenaContestants(ctx(c), a.ID)
	if err != nil {
		return err
	}
	out, err := h.pairAnswer(c.UserContext(), a, cs, p, true)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(out)
}

// ArenaPrompt adds a prompt a voter wrote to an open arena; their next
// pair is on it.
func (h *Handler) ArenaPrompt(c *fiber.Ctx) error {
	a, err := h.arenaOf(c)
	if err != nil {
		return err
	}
	if a.PromptsKind != "open" {
		return &Problem{Status: fiber.StatusConflict, Message: "This arena's prompts are set: ask for a pair."}
	}
	if err := h.limitVoter(c); err != nil {
		return err
	}
	voter, err := h.arenaVoter(c, a, false)
	if err != nil {
		return err
	}
	var in ArenaPromptInput
	if err := c.BodyParser(&in); err != nil {
		return &Problem{Status: fiber.StatusBadRequest, Message: `Send {"text"} as JSON.`}
	}
	in.Text = strings.TrimSpace(in.Text)
	if in.Text == "" || len(in.Text) > 8<<10 {
		return invalid("The prompt was not added.", map[string]string{"text": "Write a prompt of up to 8 KiB."})
	}
	p, err := h.store.AddArenaPrompt(ctx(c), a.ID, in.Text, voter, arenaOpenPrompts)
	if errors.Is(err, db.ErrBudgetSpent) {
		return &Problem{Status: fiber.StatusConflict, Message: "This arena has all the prompts it takes."}
	} else if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(ArenaPromptAdded{Prompt: p.Index})
}
