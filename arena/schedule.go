package arena

import (
	"fmt"
	"math/rand/v2"
	"sync"
)

// MaxPrompts bounds the prompts a Scheduler draws from (a dataset's rows).
const MaxPrompts = 100_000

// Matchup is one pair put to a voter: prompt, the contestant shown as A
// and the one shown as B.
type Matchup struct {
	Prompt, A, B int
}

// Scheduler picks the next matchup for a voter so that comparisons spread
// evenly: the pair compared least so far first, then the prompt that pair
// was compared on least, and the contestant shown as A less often in that
// pair on the A side. Ties are broken at random, from the seed. It is safe
// for concurrent use.
type Scheduler struct {
	mu       sync.Mutex
	n        int
	prompts  int
	pairs    []int         // comparisons per pair, at lo·n+hi
	onA      []int         // times i was shown as A against j, at i·n+j
	byPrompt map[int64]int // comparisons per (prompt, pair)
	rng      *rand.Rand
}

// NewScheduler makes a Scheduler for n contestants and the given number
// of prompts, with no comparisons yet.
func NewScheduler(n, prompts int, seed uint64) (*Scheduler, error) {
	if n < 2 || n > MaxContestants {
		return nil, fmt.Errorf("arena: %d contestants; an arena has 2 to %d", n, MaxContestants)
	}
	if prompts < 1 || prompts > MaxPrompts {
		return nil, fmt.Errorf("arena: %d prompts; an arena has 1 to %d", prompts, MaxPrompts)
	}
	return &Scheduler{
		n: n, prompts: prompts,
		pairs:    make([]int, n*n),
		onA:      make([]int, n*n),
		byPrompt: make(map[int64]int),
		rng:      rand.New(rand.NewPCG(seed, 0x70616972)), // "pair"
	}, nil
}

func (s *Scheduler) check(m Matchup) error {
	if m.A < 0 || m.A >= s.n || m.B < 0 || m.B >= s.n || m.A == m.B {
		return fmt.Errorf("arena: matchup of contestants %d and %d; they must differ and be 0 to %d", m.A, m.B, s.n-1)
	}
	if m.Prompt < 0 || m.Prompt >= s.prompts {
		return fmt.Errorf("arena: matchup on prompt %d; prompts are 0 to %d", m.Prompt, s.prompts-1)
	}
	return nil
}

// pair is the index of the unordered pair {a, b}.
func (s *Scheduler) pair(a, b int) int {
	return min(a, b)*s.n + max(a, b)
}

func (s *Scheduler) slot(prompt, pair int) int64 {
	return int64(prompt)*int64(s.n*s.n) + int64(pair)
}

// Record counts a comparison that was made (shown to a voter, or voted
// on: the arena decides which it counts, and counts it once).
func (s *Scheduler) Record(m Matchup) error {
	if err := s.check(m); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pair(m.A, m.B)
	s.pairs[p]++
	s.onA[m.A*s.n+m.B]++
	s.byPrompt[s.slot(m.Prompt, p)]++
	return nil
}

// Next picks the next matchup for a voter who has already voted on the
// matchups in voted (in either order of sides): never one of those
// (prompt, pair)s again. ok is false when the voter has voted on every
// prompt for every pair. Next does not record what it picks.
func (s *Scheduler) Next(voted []Matchup) (m Matchup, ok bool, err error) {
	seen := make(map[int64]bool, len(voted))
	perPair := make([]int, s.n*s.n)
	for _, v := range voted {
		if err := s.check(v); err != nil {
			return Matchup{}, false, err
		}
		p := s.pair(v.A, v.B)
		if k := s.slot(v.Prompt, p); !seen[k] {
			seen[k] = true
			perPair[p]++
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	best, ties := -1, 0
	for lo := range s.n {
		for hi := lo + 1; hi < s.n; hi++ {
			p := lo*s.n + hi
			if perPair[p] >= s.prompts {
				continue
			}
			switch {
			case best < 0 || s.pairs[p] < s.pairs[best]:
				best, ties = p, 1
			case s.pairs[p] == s.pairs[best]:
				ties++
				if s.rng.IntN(ties) == 0 {
					best = p
				}
			}
		}
	}
	if best < 0 {
		return Matchup{}, false, nil
	}

	prompt, least := -1, 0
	ties = 0
	for q := range s.prompts {
		k := s.slot(q, best)
		if seen[k] {
			continue
		}
		c := s.byPrompt[k]
		switch {
		case prompt < 0 || c < least:
			prompt, least, ties = q, c, 1
		case c == least:
			ties++
			if s.rng.IntN(ties) == 0 {
				prompt = q
			}
		}
	}

	a, b := best/s.n, best%s.n
	ab, ba := s.onA[a*s.n+b], s.onA[b*s.n+a]
	if ba < ab || ba == ab && s.rng.IntN(2) == 0 {
		a, b = b, a
	}
	return Matchup{Prompt: prompt, A: a, B: b}, true, nil
}
