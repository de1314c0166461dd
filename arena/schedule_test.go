package arena

import (
	"strings"
	"testing"
)

func TestSchedulerBalancesPairsPromptsAndSides(t *testing.T) {
	const n, prompts, voters, each = 5, 20, 300, 12
	s, err := NewScheduler(n, prompts, 1)
	if err != nil {
		t.Fatal(err)
	}
	pairs := map[[2]int]int{}
	byPrompt := map[[3]int]int{}
	onA := map[[2]int]int{}
	for v := range voters {
		var voted []Matchup
		for range each {
			m, ok, err := s.Next(voted)
			if err != nil || !ok {
				t.Fatalf("voter %d: Next = %v, %v, %v", v, m, ok, err)
			}
			lo, hi := min(m.A, m.B), max(m.A, m.B)
			for _, old := range voted {
				if old.Prompt == m.Prompt && min(old.A, old.B) == lo && max(old.A, old.B) == hi {
					t.Fatalf("voter %d got %+v again", v, m)
				}
			}
			voted = append(voted, m)
			if err := s.Record(m); err != nil {
				t.Fatal(err)
			}
			pairs[[2]int{lo, hi}]++
			byPrompt[[3]int{m.Prompt, lo, hi}]++
			onA[[2]int{m.A, m.B}]++
		}
	}
	if len(pairs) != n*(n-1)/2 {
		t.Fatalf("%d pairs drawn, want %d", len(pairs), n*(n-1)/2)
	}
	lo, hi := spread(pairs)
	if hi-lo > 1 {
		t.Errorf("pair counts range from %d to %d; want within 1", lo, hi)
	}
	if lo, hi := spread(byPrompt); hi-lo > 1 || len(byPrompt) != prompts*len(pairs) {
		t.Errorf("per prompt and pair: %d slots, counts %d to %d; want all %d slots within 1", len(byPrompt), lo, hi, prompts*len(pairs))
	}
	for p := range pairs {
		a, b := onA[p], onA[[2]int{p[1], p[0]}]
		if a-b > 1 || b-a > 1 {
			t.Errorf("pair %v: %d shown as A, the other %d times", p, a, b)
		}
	}
}

func spread[K comparable](m map[K]int) (lo, hi int) {
	first := true
	for _, c := range m {
		if first || c < lo {
			lo = c
		}
		if first || c > hi {
			hi = c
		}
		first = false
	}
	return lo, hi
}

func TestSchedulerRunsOutForAVoter(t *testing.T) {
	s, _ := NewScheduler(4, 3, 9)
	var voted []Matchup
	seen := map[[3]int]bool{}
	for range 100 {
		m, ok, err := s.Next(voted)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		k := [3]int{m.Prompt, min(m.A, m.B), max(m.A, m.B)}
		if seen[k] {
			t.Fatalf("%+v drawn twice for the same voter", m)
		}
		seen[k] = true
		voted = append(voted, m)
		// Another voter's comparisons make this pair the least compared
		// no longer, but cannot bring back a matchup this voter saw.
		_ = s.Record(m)
		_ = s.Record(Matchup{Prompt: m.Prompt, A: m.B, B: m.A})
	}
	if len(voted) != 3*6 {
		t.Errorf("voter saw %d matchups before running out; there are %d", len(voted), 3*6)
	}
	if _, ok, _ := s.Next(voted); ok {
		t.Error("Next still offers a matchup after everything was voted")
	}
}

func TestSchedulerVotedInEitherSideOrder(t *testing.T) {
	s, _ := NewScheduler(2, 1, 1)
	if _, ok, _ := s.Next([]Matchup{{Prompt: 0, A: 1, B: 0}}); ok {
		t.Error("a voter who voted 1 against 0 was offered 0 against 1 on the same prompt")
	}
}

func TestSchedulerIsDeterministicForASeed(t *testing.T) {
	draw := func(seed uint64) []Matchup {
		s, _ := NewScheduler(6, 10, seed)
		var out []Matchup
		for range 40 {
			m, _, _ := s.Next(nil)
			_ = s.Record(m)
			out = append(out, m)
		}
		return out
	}
	a, b, c := draw(4), draw(4), draw(5)
	same := true
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("draw %d: %+v then %+v with the same seed", i, a[i], b[i])
		}
		same = same && a[i] == c[i]
	}
	if same {
		t.Error("seeds 4 and 5 drew the very same 40 matchups")
	}
}

func TestSchedulerRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		n, prompts int
		want       string
	}{
		{1, 5, "1 contestants; an arena has 2 to 64"},
		{65, 5, "65 contestants"},
		{3, 0, "0 prompts; an arena has 1 to 100000"},
		{3, MaxPrompts + 1, "100001 prompts"},
	} {
		if _, err := NewScheduler(c.n, c.prompts, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewScheduler(%d, %d): %v, want %q", c.n, c.prompts, err, c.want)
		}
	}
	s, _ := NewScheduler(3, 2, 1)
	for _, c := range []struct {
		m    Matchup
		want string
	}{
		{Matchup{Prompt: 0, A: 0, B: 3}, "contestants 0 and 3; they must differ and be 0 to 2"},
		{Matchup{Prompt: 0, A: 1, B: 1}, "contestants 1 and 1"},
		{Matchup{Prompt: 2, A: 0, B: 1}, "prompt 2; prompts are 0 to 1"},
		{Matchup{Prompt: -1, A: 0, B: 1}, "prompt -1"},
	} {
		if err := s.Record(c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Record(%+v): %v, want %q", c.m, err, c.want)
		}
		if _, _, err := s.Next([]Matchup{c.m}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Next with voted %+v: %v, want %q", c.m, err, c.want)
		}
	}
	// Nothing bad was counted: the first draws still cover all three pairs.
	got := map[int]bool{}
	for range 3 {
		m, _, _ := s.Next(nil)
		_ = s.Record(m)
		got[s.pair(m.A, m.B)] = true
	}
	if len(got) != 3 {
		t.Errorf("after refused records, three draws covered %d pairs", len(got))
	}
}
