package db_test

import (
	"context"
	"errors"
	"testing"

	"knobs/db"
)

func TestArenaPairsVotesAndBudget(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	team := newPresetTeam(t, s)
	budget := 0.002
	calls := 2
	a, err := s.CreateArena(ctx, db.Arena{OwnerID: team.alice, Name: "Which summariser", Audience: db.SharePublic, Mode: "pregenerated",
		PromptsKind: "list", BudgetUSD: &budget, BudgetCalls: &calls, MaskTerms: []string{"Blue"}, Status: db.ArenaPreparing},
		[]db.ArenaContestant{{Index: 0, Name: "Blue", Spec: "{}"}, {Index: 1, Name: "Green", Spec: "{}"}},
		[]db.ArenaPrompt{{Index: 0, Text: "Sum up the Nile"}, {Index: 1, Text: "Sum up the Rhine"}})
	must(t, err)
	if a.ID == 0 || len(a.Token) < 20 || a.Status != db.ArenaPreparing || len(a.MaskTerms) != 1 || *a.BudgetCalls != 2 {
		t.Fatalf("created: %+v", a)
	}
	answers, err := s.ArenaAnswers(ctx, a.ID, -1)
	must(t, err)
	if len(answers) != 4 || answers[0].Status != "pending" {
		t.Fatalf("answers to make: %+v", answers)
	}
	must(t, s.SaveArenaAnswer(ctx, a.ID, db.ArenaAnswer{Prompt: 0, Contestant: 1, Status: "done", RunID: 9, Text: "The Nile is long."}))
	one, err := s.ArenaAnswers(ctx, a.ID, 0)
	must(t, err)
	if len(one) != 2 || one[1].Text != "The Nile is long." || one[1].RunID != 9 {
		t.Errorf("prompt 0's answers: %+v", one)
	}

	// A pair is issued once per voter, prompt and pair, either way round.
	must(t, s.EnsureVoter(ctx, a.ID, "voter-1", 0, "Sam"))
	p, err := s.IssuePair(ctx, a.ID, "voter-1", 0, 1, 0)
	must(t, err)
	if _, err := s.IssuePair(ctx, a.ID, "voter-1", 0, 0, 1); !errors.Is(err, db.ErrAlreadyVoted) {
		t.Errorf("the same pair the other way round: %v", err)
	}
	open, err := s.OpenPair(ctx, a.ID, "voter-1")
	if err != nil || open.ID != p.ID {
		t.Errorf("the open pair: %+v %v", open, err)
	}
	if _, err := s.Vote(ctx, a.ID, "voter-2", p.ID, db.VoteA, ""); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("another voter votes on it: %v", err)
	}
	v, err := s.Vote(ctx, a.ID, "voter-1", p.ID, db.VoteB, "clearer")
	if err != nil || v.Choice != db.VoteB || v.A != 1 || v.B != 0 || v.VotedAt.IsZero() {
		t.Errorf("the vote: %+v %v", v, err)
	}
	if _, err := s.Vote(ctx, a.ID, "voter-1", p.ID, db.VoteA, ""); !errors.Is(err, db.ErrAlreadyVoted) {
		t.Errorf("a second vote: %v", err)
	}
	if _, err := s.OpenPair(ctx, a.ID, "voter-1"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("an open pair after the vote: %v", err)
	}
	voted, err := s.ArenaPairs(ctx, a.ID, true)
	must(t, err)
	got, err := s.Arena(ctx, a.ID)
	must(t, err)
	if len(voted) != 1 || got.Votes != 1 {
		t.Errorf("votes: %d pairs, arena says %d", len(voted), got.Votes)
	}

	// The budget holds: two calls, and never past the dollars.
	must(t, s.ChargeArena(ctx, a.ID, 0.001))
	if err := s.ChargeArena(ctx, a.ID, 0.0015); !errors.Is(err, db.ErrBudgetSpent) {
		t.Errorf("a charge past the dollars: %v", err)
	}
	must(t, s.ChargeArena(ctx, a.ID, 0.0005))
	if err := s.ChargeArena(ctx, a.ID, 0); !errors.Is(err, db.ErrBudgetSpent) {
		t.Errorf("a third call: %v", err)
	}
	got, err = s.Arena(ctx, a.ID)
	must(t, err)
	if got.Calls != 2 || got.SpentUSD != 0.0015 {
		t.Errorf("spent: %d calls, $%v", got.Calls, got.SpentUSD)
	}

	// Revoked, the link opens nothing; only its owner or an admin revokes.
	if _, err := s.ArenaByToken(ctx, a.Token); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeArena(ctx, team.bob, false, a.ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("bob revokes alice's arena: %v", err)
	}
	must(t, s.RevokeArena(ctx, team.alice, false, a.ID))
	if _, err := s.ArenaByToken(ctx, a.Token); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("a revoked link: %v", err)
	}
	// Open prompts are bounded.
	_, err = s.AddArenaPrompt(ctx, a.ID, "Mine", "voter-1", 3)
	must(t, err)
	if _, err := s.AddArenaPrompt(ctx, a.ID, "Too many", "voter-1", 3); !errors.Is(err, db.ErrBudgetSpent) {
		t.Errorf("a fourth prompt of at most 3: %v", err)
	}
	ps, err := s.ArenaPrompts(ctx, a.ID)
	must(t, err)
	if len(ps) != 3 || ps[2].Text != "Mine" || ps[2].Voter != "voter-1" {
		t.Errorf("prompts: %+v", ps)
	}
}
