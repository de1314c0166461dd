package handlers

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/views"
)

// ShowArenaPage shows an arena to any member of the team: its status
// and link, spend, and what the votes say so far. While its answers
// are made, the page reloads itself every few seconds.
func (h *Handler) ShowArenaPage(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "arena")
	if err != nil {
		return err
	}
	a, err := h.store.Arena(ctx(c), id)
	if errors.Is(err, db.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "There is no such arena.")
	} else if err != nil {
		return err
	}
	v, err := h.arenaView(c, a, h.page(c, a.Name, "arenas"))
	if err != nil {
		return err
	}
	v.CanRevoke = a.OwnerID == u.ID || u.IsAdmin()
	if a.OwnerID == u.ID {
		shares, err := h.store.Shares(ctx(c), u.ID, db.ShareArena, a.ID)
		if err != nil {
			return err
		}
		box := views.ShareBox{Action: "/arenas/" + strconv.FormatInt(a.ID, 10) + "/shares", What: "arena's results", CSRF: v.Page.CSRF}
		for _, sh := range shares {
			box.Shares = append(box.Shares, shareRow(c, sh))
		}
		v.Share = &box
	}
	if a.Status == db.ArenaPreparing {
		c.Set("Refresh", "3")
	}
	return Render(c, fiber.StatusOK, views.ArenaPage(v))
}

// arenaView lays an arena and its results out for its page.
func (h *Handler) arenaView(c *fiber.Ctx, a db.Arena, page views.Page) (views.ArenaView, error) {
	d, err := h.arenaDetail(ctx(c), a)
	if err != nil {
		return views.ArenaView{}, err
	}
	r, err := h.arenaResults(ctx(c), a)
	if err != nil {
		return views.ArenaView{}, err
	}
	v := views.ArenaView{Page: page, ID: a.ID, Name: a.Name, Owner: a.OwnerName, Status: a.Status, Error: a.Error,
		Audience: a.Audience, Mode: a.Mode, NotBlind: !r.Blind, Link: c.BaseURL() + d.Link, Revoked: d.Revoked,
		Answers: d.Answers.Done, Failed: d.Answers.Failed, Total: d.Answers.Total, Votes: r.Votes, Created: when(a.CreatedAt),
		Prompts: arenaPromptsText(d.PromptsKind, d.Prompts), Spend: arenaSpend(d), CSV: fmt.Sprintf("/api/v1/arenas/%d/votes.csv", a.ID)}
	if d.EndsAt != nil {
		v.Ends = d.EndsAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	for _, x := range d.Contestants {
		v.Contestants = append(v.Contestants, views.ArenaContestantRow{Name: x.Name, Provider: x.Provider, Model: x.Model})
	}
	arenaRanking(&v, r)
	return v, nil
}

// ShowSharedArena shows an arena's results behind a share link,
// read-only: the ranking and its tables, never the voting link (a reader
// of the results must not vote through it), the votes' download or a
// revoke. A team link needs a signed-in member.
func (h *Handler) ShowSharedArena(c *fiber.Ctx) error {
	notFound := fiber.NewError(fiber.StatusNotFound, "This link does not open anything: it is unknown or was revoked.")
	token := c.Params("token")
	if len(token) > 64 {
		return notFound
	}
	a, share, err := h.store.SharedArena(ctx(c), token)
	if errors.Is(err, db.ErrNotFound) {
		return notFound
	} else if err != nil {
		return err
	}
	if _, signedIn := CurrentUser(c); share.Audience == db.ShareTeam && !signedIn {
		return c.Redirect("/login?next="+c.OriginalURL(), fiber.StatusSeeOther)
	}
	v, err := h.arenaView(c, a, h.page(c, a.Name, ""))
	if err != nil {
		return err
	}
	v.Shared, v.Link, v.CSV = true, "", ""
	c.Set("Cache-Control", "private, no-store")
	return Render(c, fiber.StatusOK, views.ArenaPage(v))
}

// CreateArenaShare makes a read-only link to an arena's results: its
// owner's to make.
func (h *Handler) CreateArenaShare(c *fiber.Ctx) error {
	id, err := pathID(c, "arena")
	if err != nil {
		return err
	}
	a, err := h.store.Arena(ctx(c), id)
	if err != nil {
		return err
	}
	return h.shareOwned(c, db.ShareArena, a.ID, a.OwnerID, "/arenas/"+strconv.FormatInt(a.ID, 10), "Only its owner can share this arena's results.")
}

// arenaRanking lays the results out for the page: the ranking with each
// interval placed on one scale, the matrix in the ranking's order,
// position bias in words, and the tables per prompt and per voter.
func arenaRanking(v *views.ArenaView, r ArenaResults) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range r.Contestants {
		lo, hi = min(lo, s.CILow, s.Score), max(hi, s.CIHigh, s.Score)
	}
	// A little room at both ends, and a scale even when every score is
	// the same.
	lo, hi = lo-10, hi+10
	at := func(x float64) float64 { return math.Round(1000*(x-lo)/(hi-lo)) / 10 }
	for place, s := range r.Contestants {
		v.Ranking = append(v.Ranking, views.ArenaRankRow{Place: place + 1, Name: s.Name, Score: arenaScore(s.Score), Low: arenaScore(s.CILow),
			High: arenaScore(s.CIHigh), Wins: s.Wins, Losses: s.Losses, Ties: s.Ties, BothBad: s.BothBad, Votes: s.Votes,
			X1: at(s.CILow), X2: at(s.CIHigh), X: at(s.Score)})
	}
	for _, row := range r.Contestants {
		cells := []views.ArenaMatrixCell{}
		for _, col := range r.Contestants {
			m := views.ArenaMatrixCell{Self: row.Index == col.Index}
			if !m.Self && row.Index < len(r.Matrix) && col.Index < len(r.Matrix[row.Index]) {
				if x := r.Matrix[row.Index][col.Index]; x.Games > 0 {
					m.Share = strconv.Itoa(int(math.Round(100*x.Share))) + "%"
					m.Counts = fmt.Sprintf("%d won, %d tied of %d", x.Wins, x.Ties, x.Games)
				}
			}
			cells = append(cells, m)
		}
		v.Matrix = append(v.Matrix, views.ArenaMatrixRow{Name: row.Name, Cells: cells})
	}
	pb := r.PositionBias
	if pb.Decisive == 0 {
		v.Bias = "No decisive votes yet (votes for A or B), so no position bias to measure."
	} else {
		v.Bias = fmt.Sprintf("A won %s of %d decisive votes (95%%: %s–%s).", arenaPct(pb.Share), pb.Decisive, arenaPct(pb.Low), arenaPct(pb.High))
		if pb.Low > 0.5 || pb.High < 0.5 {
			side := "A"
			if pb.High < 0.5 {
				side = "B"
			}
			v.BiasNote = "The interval leaves out 50%: voters favoured the answer shown as " + side + ". Sides are random and balanced, so this does not favour a contestant, but it is worth knowing."
		}
	}
	names := map[int]string{}
	for _, s := range r.Contestants {
		names[s.Index] = s.Name
	}
	for _, p := range r.PerPrompt {
		var wins []string
		for _, s := range r.Contestants {
			if s.Index < len(p.Wins) && p.Wins[s.Index] > 0 {
				wins = append(wins, fmt.Sprintf("%s %d", names[s.Index], p.Wins[s.Index]))
			}
		}
		text := clip(p.Text, 400)
		if len(text) < len(p.Text) {
			text += "…"
		}
		v.PerPrompt = append(v.PerPrompt, views.ArenaPromptRow{Number: p.Prompt + 1, Text: text, Votes: p.Votes, Wins: strings.Join(wins, ", ")})
	}
	for _, x := range r.PerVoter {
		v.PerVoter = append(v.PerVoter, views.ArenaVoterRow{Voter: x.Voter, Votes: x.Votes, AWins: x.AWins})
	}
}

// arenaScore is a score as the page shows it: a whole number.
func arenaScore(x float64) string { return strconv.Itoa(int(math.Round(x))) }

// arenaPct is a share as a whole percentage.
func arenaPct(x float64) string { return strconv.Itoa(int(math.Round(100*x))) + "%" }

// arenaPromptsText says where an arena's prompts come from.
func arenaPromptsText(kind string, n int) string {
	switch kind {
	case "open":
		return "the voters' own"
	case "dataset":
		return fmt.Sprintf("%d from a dataset", n)
	}
	return fmt.Sprintf("%d from a list", n)
}

// arenaSpend is what live answers have cost against the budget.
func arenaSpend(d ArenaDetail) string {
	s := fmt.Sprintf("$%.4f", d.SpentUSD)
	if d.BudgetUSD != nil {
		s += fmt.Sprintf(" of $%.2f", *d.BudgetUSD)
	}
	s += fmt.Sprintf(" · %d calls", d.Calls)
	if d.BudgetCalls != nil {
		s += fmt.Sprintf(" of %d", *d.BudgetCalls)
	}
	return s
}
