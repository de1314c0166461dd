package db_test

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"knobs/db"
)

func TestShares(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	alice, bob := historyUser(t, s, "alice"), historyUser(t, s, "bob")
	run := storeRun(t, s, alice, testRun{prompt: "share me", output: "shared output", events: "event: done\ndata: {}\n\n"})
	other := storeRun(t, s, alice, testRun{prompt: "not shared"})

	team, err := s.CreateShare(ctx, alice, db.ShareRun, run, db.ShareTeam)
	must(t, err)
	public, err := s.CreateShare(ctx, alice, db.ShareRun, run, db.SharePublic)
	must(t, err)
	token := regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`) // 128 bits, URL-safe
	for _, sh := range []db.Share{team, public} {
		if !token.MatchString(sh.Token) || sh.ID == 0 || sh.OwnerID != alice || sh.TargetID != run || sh.Kind != db.ShareRun || sh.CreatedAt.IsZero() || !sh.Active() {
			t.Errorf("new share: %+v", sh)
		}
	}
	if team.Token == public.Token {
		t.Error("two shares got the same token")
	}

	for _, tt := range []struct {
		sh       db.Share
		audience string
	}{{team, db.ShareTeam}, {public, db.SharePublic}} {
		r, sh, err := s.SharedRun(ctx, tt.sh.Token)
		if err != nil {
			t.Fatalf("SharedRun(%s): %v", tt.audience, err)
		}
		if r.ID != run || r.UserID != alice || string(r.Events) != "event: done\ndata: {}\n\n" || r.Result == "" || r.Spec == "" {
			t.Errorf("shared run: %+v", r)
		}
		if sh.Audience != tt.audience || sh.ID != tt.sh.ID {
			t.Errorf("share of SharedRun: %+v, want audience %s", sh, tt.audience)
		}
	}

	list, err := s.Shares(ctx, alice, db.ShareRun, run)
	must(t, err)
	if len(list) != 2 || list[0].ID != public.ID || list[1].ID != team.ID {
		t.Errorf("Shares = %+v, want public then team", list)
	}
	if list, err := s.Shares(ctx, alice, db.ShareRun, other); err != nil || len(list) != 0 {
		t.Errorf("shares of an unshared run: %v %v", list, err)
	}

	// Another owner cannot revoke it; it keeps working.
	if err := s.RevokeShare(ctx, bob, public.ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("bob revoking alice's share: %v, want ErrNotFound", err)
	}
	if _, _, err := s.SharedRun(ctx, public.Token); err != nil {
		t.Errorf("after bob's attempt: %v", err)
	}

	must(t, s.RevokeShare(ctx, alice, public.ID))
	if _, _, err := s.SharedRun(ctx, public.Token); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("a revoked share: %v, want ErrNotFound", err)
	}
	if _, _, err := s.SharedRun(ctx, team.Token); err != nil {
		t.Errorf("revoking one share stopped another: %v", err)
	}
	list, err = s.Shares(ctx, alice, db.ShareRun, run)
	must(t, err)
	if len(list) != 2 || list[0].Active() || !list[1].Active() {
		t.Errorf("after revoking: %+v", list)
	}
	revokedAt := list[0].RevokedAt
	must(t, s.RevokeShare(ctx, alice, public.ID))
	list, _ = s.Shares(ctx, alice, db.ShareRun, run)
	if !list[0].RevokedAt.Equal(revokedAt) {
		t.Errorf("revoking twice moved the revocation time")
	}
	if err := s.RevokeShare(ctx, alice, 9999); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("revoking an unknown share: %v", err)
	}

	for _, tok := range []string{"", "nope", team.Token + "x", "' OR 1=1 --"} {
		if _, _, err := s.SharedRun(ctx, tok); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("SharedRun(%q): %v, want ErrNotFound", tok, err)
		}
	}
	if _, err := s.CreateShare(ctx, alice, db.ShareRun, run, "everyone"); err == nil || errors.Is(err, db.ErrNotFound) {
		t.Errorf("an unknown audience: %v", err)
	}
	if _, err := s.CreateShare(ctx, alice, "snapshot", run, db.ShareTeam); err == nil || errors.Is(err, db.ErrNotFound) {
		t.Errorf("an unknown kind: %v", err)
	}
	if _, err := s.CreateShare(ctx, alice, db.ShareRun, 9999, db.ShareTeam); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("sharing a run that does not exist: %v", err)
	}
	// No comparison groups exist yet: a group share has nothing to point to.
	if _, err := s.CreateShare(ctx, alice, db.ShareGroup, 1, db.ShareTeam); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("sharing a group alice has no run in: %v", err)
	}

	// A removed owner's shares go with their runs.
	must(t, s.SetUserRole(ctx, bob, db.RoleAdmin, ""))
	must(t, s.RemoveUser(ctx, alice))
	if _, _, err := s.SharedRun(ctx, team.Token); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("share of a removed user: %v", err)
	}
}
