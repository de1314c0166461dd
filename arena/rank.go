package arena

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Result is what a voter chose between the two answers of a pair.
type Result uint8

// The four choices a voter has. The zero Result is not a choice.
const (
	AWins   Result = iota + 1 // the answer shown as A is better
	BWins                     // the answer shown as B is better
	Tie                       // both are as good
	BothBad                   // neither is acceptable
)

// String names the choice as the voting API spells it.
func (r Result) String() string {
	switch r {
	case AWins:
		return "a"
	case BWins:
		return "b"
	case Tie:
		return "tie"
	case BothBad:
		return "both_bad"
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// Outcome is one vote: contestant A was shown on the A side, B on the B side.
type Outcome struct {
	A, B   int // contestant indexes, 0 to n-1
	Result Result
	Voter  string
	Prompt int
}

// Bounds on what Rank accepts.
const (
	MaxContestants = 64
	MaxOutcomes    = 1_000_000
	MaxRounds      = 10_000
	DefaultRounds  = 1000
)

// Options tune Rank.
type Options struct {
	// Rounds is the number of bootstrap resamples behind the intervals:
	// 0 means DefaultRounds, at most MaxRounds.
	Rounds int
	// Seed makes the bootstrap reproducible: the same votes and seed give
	// the same intervals.
	Seed uint64
}

// Contestant is one contestant's record and score in a Ranking.
type Contestant struct {
	Wins, Losses, Ties, BothBad int
	Votes                       int     // every vote the contestant was in
	Strength                    float64 // Bradley–Terry strength; their geometric mean is 1
	Score                       float64 // 1000 + 400·log10(Strength)
	Low, High                   float64 // 95% bootstrap interval of Score
}

// Cell is one entry of the win-rate matrix: how row contestant i did
// against column contestant j. Games is 0 when they never met, and Share
// then means nothing.
type Cell struct {
	Games, Wins, Losses, Ties int     // Ties counts "both bad" too
	Share                     float64 // (Wins + Ties/2) / Games
}

// PositionBias is how often the answer shown as A won among decisive
// votes (A or B, not tie or both bad). Decisive is 0 when there were none;
// the interval is then [0, 1].
type PositionBias struct {
	Decisive, AWins int
	Share           float64 // AWins / Decisive; 0.5 means no bias
	Low, High       float64 // 95% Wilson interval of Share
}

// Ranking is everything Rank finds, contestants by index.
type Ranking struct {
	Contestants []Contestant
	Order       []int // contestant indexes, highest Score first
	Matrix      [][]Cell
	Position    PositionBias
	Votes       int
	Rounds      int // bootstrap rounds run (0 without votes)
}

// Rank fits the Bradley–Terry model to n contestants' outcomes and
// bootstraps 95% intervals of the scores; see the package documentation.
func Rank(n int, outs []Outcome, opt Options) (Ranking, error) {
	if n < 2 || n > MaxContestants {
		return Ranking{}, fmt.Errorf("arena: %d contestants; an arena has 2 to %d", n, MaxContestants)
	}
	if len(outs) > MaxOutcomes {
		return Ranking{}, fmt.Errorf("arena: %d votes; the ranking takes at most %d", len(outs), MaxOutcomes)
	}
	rounds := opt.Rounds
	if rounds == 0 {
		rounds = DefaultRounds
	}
	if rounds < 0 || rounds > MaxRounds {
		return Ranking{}, fmt.Errorf("arena: %d bootstrap rounds; use 1 to %d (0 for %d)", opt.Rounds, MaxRounds, DefaultRounds)
	}
	for k, o := range outs {
		if o.A < 0 || o.A >= n || o.B < 0 || o.B >= n {
			return Ranking{}, fmt.Errorf("arena: vote %d names contestant %d against %d; contestants are 0 to %d", k, o.A, o.B, n-1)
		}
		if o.A == o.B {
			return Ranking{}, fmt.Errorf("arena: vote %d pits contestant %d against itself", k, o.A)
		}
		if o.Result < AWins || o.Result > BothBad {
			return Ranking{}, fmt.Errorf("arena: vote %d has no valid choice (%v)", k, o.Result)
		}
	}

	r := Ranking{Contestants: make([]Contestant, n), Matrix: make([][]Cell, n), Votes: len(outs)}
	for i := range r.Matrix {
		r.Matrix[i] = make([]Cell, n)
	}
	f := newFit(n)
	cells := make([]int32, len(outs)) // each vote's cell, for the bootstrap
	for k, o := range outs {
		a, b := &r.Contestants[o.A], &r.Contestants[o.B]
		ab, ba := &r.Matrix[o.A][o.B], &r.Matrix[o.B][o.A]
		a.Votes++
		b.Votes++
		ab.Games++
		ba.Games++
		switch o.Result {
		case AWins:
			a.Wins++
			b.Losses++
			ab.Wins++
			ba.Losses++
			r.Position.AWins++
			r.Position.Decisive++
		case BWins:
			b.Wins++
			a.Losses++
			ba.Wins++
			ab.Losses++
			r.Position.Decisive++
		case Tie, BothBad:
			if o.Result == Tie {
				a.Ties++
				b.Ties++
			} else {
				a.BothBad++
				b.BothBad++
			}
			ab.Ties++
			ba.Ties++
		}
		cells[k] = int32(f.cell(o))
	}
	for i := range r.Matrix {
		for j := range r.Matrix[i] {
			if c := &r.Matrix[i][j]; c.Games > 0 {
				c.Share = (float64(c.Wins) + float64(c.Ties)/2) / float64(c.Games)
			}
		}
	}
	r.Position.Share, r.Position.Low, r.Position.High = wilson(r.Position.AWins, r.Position.Decisive)

	counts := make([]int32, 3*n*n)
	for _, c := range cells {
		counts[c]++
	}
	p := f.solve(counts, nil)
	scores := make([]float64, n)
	f.scores(p, scores)
	for i := range r.Contestants {
		c := &r.Contestants[i]
		c.Score = scores[i]
		c.Strength = math.Pow(10, (scores[i]-1000)/400)
		c.Low, c.High = c.Score, c.Score
	}

	if len(outs) > 0 {
		r.Rounds = rounds
		boot := make([][]float64, n)
		for i := range boot {
			boot[i] = make([]float64, rounds)
		}
		rng := rand.New(rand.NewPCG(opt.Seed, 0x6b6e6f6273)) // "knobs"
		q := make([]float64, n)
		for round := range rounds {
			clear(counts)
			for range cells {
				counts[cells[rng.IntN(len(cells))]]++
			}
			copy(q, p)
			f.scores(f.solve(counts, q), scores)
			for i := range boot {
				boot[i][round] = scores[i]
			}
		}
		for i := range r.Contestants {
			slices.Sort(boot[i])
			r.Contestants[i].Low = quantile(boot[i], 0.025)
			r.Contestants[i].High = quantile(boot[i], 0.975)
		}
	}

	r.Order = make([]int, n)
	for i := range r.Order {
		r.Order[i] = i
	}
	slices.SortStableFunc(r.Order, func(a, b int) int {
		sa, sb := r.Contestants[a].Score, r.Contestants[b].Score
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	return r, nil
}

// Bounds of the fit: the tolerance is on log-strengths (1e-9 is a millionth
// of a point of score); a Newton step moves a log-strength by at most
// maxStep, which keeps the first steps from overshooting when a contestant
// won (or lost) nearly everything.
const (
	fitIterations = 100
	fitTolerance  = 1e-9
	maxStep       = 2.0
)

// fit holds the scratch space of the Bradley–Terry fit for n contestants.
// A cell is (lo·n + hi)·3 + k for the pair lo < hi, with k 0 when lo won,
// 1 when hi won and 2 for a tie or both bad.
type fit struct {
	n     int
	score []float64 // wins + ties/2 (+ the prior's half)
	games []float64 // per ordered pair i·n+j
	grad  []float64
	hess  []float64 // the negated Hessian, n×n, then its Cholesky factor
}

func newFit(n int) *fit {
	return &fit{n: n, score: make([]float64, n), games: make([]float64, n*n),
		grad: make([]float64, n), hess: make([]float64, n*n)}
}

func (f *fit) cell(o Outcome) int {
	lo, hi, k := o.A, o.B, 0
	switch o.Result {
	case BWins:
		k = 1
	case Tie, BothBad:
		k = 2
	}
	if lo > hi {
		lo, hi = hi, lo
		if k < 2 {
			k = 1 - k
		}
	}
	return (lo*f.n+hi)*3 + k
}

// solve returns the log-strengths that maximise the likelihood of counts
// plus the prior (one tie of each contestant against a reference of
// log-strength 0), by Newton's method. It starts from start when given
// (and overwrites it), else from all 0.
func (f *fit) solve(counts []int32, start []float64) []float64 {
	n := f.n
	for i := range n {
		f.score[i] = 0.5 // the prior tie
	}
	clear(f.games)
	for lo := range n {
		for hi := lo + 1; hi < n; hi++ {
			base := (lo*n + hi) * 3
			w, l, t := float64(counts[base]), float64(counts[base+1]), float64(counts[base+2])
			f.score[lo] += w + t/2
			f.score[hi] += l + t/2
			f.games[lo*n+hi] = w + l + t
			f.games[hi*n+lo] = w + l + t
		}
	}
	th := start
	if th == nil {
		th = make([]float64, n)
	}
	for range fitIterations {
		clear(f.hess)
		for i := range n {
			pr := sigmoid(th[i]) // against the reference
			f.grad[i] = f.score[i] - pr
			f.hess[i*n+i] = pr * (1 - pr)
		}
		for i := range n {
			for j := i + 1; j < n; j++ {
				g := f.games[i*n+j]
				if g == 0 {
					continue
				}
				pij := sigmoid(th[i] - th[j])
				v := g * pij * (1 - pij)
				f.grad[i] -= g * pij
				f.grad[j] -= g * (1 - pij)
				f.hess[i*n+i] += v
				f.hess[j*n+j] += v
				f.hess[i*n+j] -= v
				f.hess[j*n+i] -= v
			}
		}
		step := f.grad
		cholesky(f.hess, n)
		cholSolve(f.hess, n, step)
		moved := 0.0
		for _, d := range step {
			moved = max(moved, math.Abs(d))
		}
		scale := 1.0
		if moved > maxStep {
			scale = maxStep / moved
		}
		for i := range th {
			th[i] += scale * step[i]
		}
		if moved < fitTolerance {
			break
		}
	}
	return th
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// cholesky factors the symmetric positive definite n×n matrix a in place
// into L (lower triangle) with a = L·Lᵀ. The prior's reference makes the
// negated Hessian positive definite, so the pivots stay positive.
func cholesky(a []float64, n int) {
	for j := range n {
		d := a[j*n+j]
		for k := range j {
			d -= a[j*n+k] * a[j*n+k]
		}
		d = math.Sqrt(d)
		a[j*n+j] = d
		for i := j + 1; i < n; i++ {
			s := a[i*n+j]
			for k := range j {
				s -= a[i*n+k] * a[j*n+k]
			}
			a[i*n+j] = s / d
		}
	}
}

// cholSolve solves L·Lᵀ·x = b in place in b.
func cholSolve(l []float64, n int, b []float64) {
	for i := range n {
		s := b[i]
		for k := range i {
			s -= l[i*n+k] * b[k]
		}
		b[i] = s / l[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		s := b[i]
		for k := i + 1; k < n; k++ {
			s -= l[k*n+i] * b[k]
		}
		b[i] = s / l[i*n+i]
	}
}

// scores turns log-strengths into scores with mean 1000.
func (f *fit) scores(th, out []float64) {
	mean := 0.0
	for i, v := range th {
		out[i] = 400 * v / math.Ln10
		mean += out[i]
	}
	mean /= float64(len(th))
	for i := range out {
		out[i] += 1000 - mean
	}
}

// quantile reads the q-quantile of sorted values, interpolating between
// neighbours.
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}

// wilson is the share k/n with its 95% Wilson score interval.
func wilson(k, n int) (share, low, high float64) {
	if n == 0 {
		return 0, 0, 1
	}
	const z = 1.959963984540054
	nf := float64(n)
	share = float64(k) / nf
	den := 1 + z*z/nf
	mid := (share + z*z/(2*nf)) / den
	half := z * math.Sqrt(share*(1-share)/nf+z*z/(4*nf*nf)) / den
	return share, max(0, mid-half), min(1, mid+half)
}
