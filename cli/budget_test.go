package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"knobs/db"
)

// TestRunPastABudgetIsRefused: knobs run past the team's monthly budget
// exits 1 with the server's message saying which cap, and nothing runs.
func TestRunPastABudgetIsRefused(t *testing.T) {
	s := newTestServer(t)
	none := 0.0
	if err := s.store.SaveBudgets(context.Background(), db.Budgets{TeamUSD: &none, WarnAt: db.DefaultWarnAt}, time.Now()); err != nil {
		t.Fatal(err)
	}
	r := s.knobs(t, "run", "--provider", "sim", "--model", "sim-fast", "Tell me about sea otters")
	if r.code != 1 || !strings.Contains(r.stderr, "The team's monthly budget of") || !strings.Contains(r.stderr, "Nothing was sent") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if n := s.runCount(t); n != 0 {
		t.Errorf("%d runs stored", n)
	}
}
