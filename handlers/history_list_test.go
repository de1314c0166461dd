package handlers

import (
	"slices"
	"testing"
	"time"

	"knobs/db"
)

func TestHistoryNumbers(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {274266, "274,266"}, {1234567, "1,234,567"}, {-12345, "-12,345"}} {
		if got := grouped(c.n); got != c.want {
			t.Errorf("grouped(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		usd  float64
		want string
	}{{0.00001, "< $0.0001"}, {0.00123, "$0.0012"}, {0.5, "$0.5000"}, {1.999, "$2.00"}, {1234.5, "$1,234.50"}} {
		if got := dollars(c.usd); got != c.want {
			t.Errorf("dollars(%v) = %q, want %q", c.usd, got, c.want)
		}
	}
}

func TestHistoryWhenAlwaysNamesTheDay(t *testing.T) {
	now := time.Now()
	at := func(days int) time.Time {
		y, m, d := now.AddDate(0, 0, -days).Date()
		return time.Date(y, m, d, 14, 2, 0, 0, time.Local)
	}
	if got := when(at(0)); got != "Today 14:02" {
		t.Errorf("today: %q", got)
	}
	if got := when(at(1)); got != "Yesterday 14:02" {
		t.Errorf("yesterday: %q", got)
	}
	old := time.Date(now.Year()-1, time.March, 5, 9, 30, 0, 0, time.Local)
	if got := when(old); got != "5 Mar "+old.Format("2006") {
		t.Errorf("last year: %q", got)
	}
}

func TestHistoryShowsTheParametersThatTellRunsApart(t *testing.T) {
	runs := []db.RunSummary{
		{Params: map[string]string{"temperature": "0.7", "max_completion_tokens": "256", "seed": "1", "top_p": "0.5"}},
		{Params: map[string]string{"temperature": "0.2", "max_completion_tokens": "256", "seed": "1"}},
		{Params: map[string]string{"max_completion_tokens": "256", "seed": "1", "n": "2"}},
	}
	// temperature and max tokens always; seed is the same everywhere; top_p
	// and n are set on one run only.
	want := []string{"temperature", "max_completion_tokens", "n", "top_p"}
	if got := telling(runs); !slices.Equal(got, want) {
		t.Errorf("telling = %v, want %v", got, want)
	}
	row := historyRow(runs[0], want)
	var chips []string
	for _, c := range row.Params {
		chips = append(chips, c.Label+" "+c.Value)
	}
	if !slices.Equal(chips, []string{"t 0.7", "max 256", "top_p 0.5"}) {
		t.Errorf("chips of the first run = %q", chips)
	}
}
