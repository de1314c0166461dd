package handlers

import (
	"testing"
	"time"
)

// A month is the calendar month in UTC, whatever zone the clock is in.
func TestMonthOf(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	for _, tt := range []struct {
		now          time.Time
		from, resets string
	}{
		{time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), "2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z"},
		// 1 March 08:00 in Tokyo is still February in UTC.
		{time.Date(2027, 3, 1, 8, 0, 0, 0, tokyo), "2027-02-01T00:00:00Z", "2027-03-01T00:00:00Z"},
		{time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC), "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z"},
	} {
		from, resets := monthOf(tt.now)
		if got := from.Format(time.RFC3339); got != tt.from {
			t.Errorf("monthOf(%v) starts %s, want %s", tt.now, got, tt.from)
		}
		if got := resets.Format(time.RFC3339); got != tt.resets {
			t.Errorf("monthOf(%v) resets %s, want %s", tt.now, got, tt.resets)
		}
	}
}

// The message of each cap says which, what was spent and when it resets.
func TestBudgetMessage(t *testing.T) {
	resets := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		r    BudgetRefusal
		want string
	}{
		{BudgetRefusal{Scope: scopeUser, LimitUSD: 50, SpentUSD: 50.25, ResetsAt: resets},
			"Your monthly budget of $50.00 is used up ($50.25 spent this month). Nothing was sent. It resets on 1 January 2027 at 00:00 UTC; an admin can raise it in Settings."},
		{BudgetRefusal{Scope: scopeTeam, LimitUSD: 500, SpentUSD: 499, HeldUSD: 2, ResetsAt: resets},
			"The team's monthly budget of $500.00 is used up ($499.00 spent this month and up to $2.00 in runs still going). Nothing was sent."},
		{BudgetRefusal{Scope: scopeProvider, Provider: "xai", LimitUSD: 20, SpentUSD: 20, ResetsAt: resets},
			"The team's monthly budget for xai of $20.00 is used up ($20.00 spent this month)."},
		{BudgetRefusal{Scope: scopeTokens, LimitTokens: 1000000, SpentTokens: 1000250, ResetsAt: resets},
			"The team's monthly cap of 1,000,000 tokens for models without a price is used up (1,000,250 tokens used this month)."},
	} {
		if got := budgetMessage(tt.r); len(got) < len(tt.want) || got[:len(tt.want)] != tt.want {
			t.Errorf("%s: %q\nwant it to start %q", tt.r.Scope, got, tt.want)
		}
	}
	warn := budgetFigure{BudgetRefusal: BudgetRefusal{Scope: scopeUser, LimitUSD: 50, SpentUSD: 41.5}}.warning()
	if want := "You have used 83% of your monthly budget ($41.50 of $50.00)."; warn != want {
		t.Errorf("warning %q, want %q", warn, want)
	}
}
