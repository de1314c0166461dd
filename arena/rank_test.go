package arena

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// tournament draws votes from the Bradley–Terry model with the given true
// scores (400·log10 scale): each vote a random pair, its sides random.
// aBonus adds to the chance the A side wins, to mimic judges who favour
// the first answer.
func tournament(seed uint64, elo []float64, votes int, aBonus float64) []Outcome {
	rng := rand.New(rand.NewPCG(seed, 99))
	outs := make([]Outcome, 0, votes)
	for range votes {
		a := rng.IntN(len(elo))
		b := rng.IntN(len(elo) - 1)
		if b >= a {
			b++
		}
		pa := 1/(1+math.Pow(10, (elo[b]-elo[a])/400)) + aBonus
		res := BWins
		if rng.Float64() < pa {
			res = AWins
		}
		outs = append(outs, Outcome{A: a, B: b, Result: res, Voter: "v", Prompt: rng.IntN(20)})
	}
	return outs
}

func TestRankRecoversKnownOrderWithCoveringIntervals(t *testing.T) {
	elo := []float64{1200, 900, 1100, 800, 1000} // mean 1000, as the scores are
	want := []int{0, 2, 4, 1, 3}
	covered, total := 0, 0
	for seed := range uint64(8) {
		r, err := Rank(len(elo), tournament(seed, elo, 3000, 0), Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for k, i := range want {
			if r.Order[k] != i {
				t.Fatalf("seed %d: order %v, want %v (scores %+v)", seed, r.Order, want, r.Contestants)
			}
		}
		for i, c := range r.Contestants {
			if !(c.Low <= c.Score && c.Score <= c.High) || c.High-c.Low > 120 {
				t.Errorf("seed %d contestant %d: score %.1f outside or with a wide interval [%.1f, %.1f]", seed, i, c.Score, c.Low, c.High)
			}
			total++
			if c.Low <= elo[i] && elo[i] <= c.High {
				covered++
			}
		}
		if !(r.Position.Low < 0.5 && 0.5 < r.Position.High) {
			t.Errorf("seed %d: position bias %.3f [%.3f, %.3f] excludes 0.5 though sides were random", seed, r.Position.Share, r.Position.Low, r.Position.High)
		}
	}
	// 95% intervals: expect about 38 of 40; fewer than 34 means they are too narrow.
	if covered < 34 {
		t.Errorf("intervals covered the true score %d times of %d", covered, total)
	}
	t.Logf("coverage %d/%d", covered, total)
}

func TestRankIsReproducibleWithSeed(t *testing.T) {
	outs := tournament(3, []float64{1050, 950, 1000}, 500, 0)
	a, _ := Rank(3, outs, Options{Seed: 7, Rounds: 200})
	b, _ := Rank(3, outs, Options{Seed: 7, Rounds: 200})
	c, _ := Rank(3, outs, Options{Seed: 8, Rounds: 200})
	for i := range a.Contestants {
		if a.Contestants[i] != b.Contestants[i] {
			t.Fatalf("same seed, different results: %+v vs %+v", a.Contestants[i], b.Contestants[i])
		}
	}
	if a.Contestants[0].Low == c.Contestants[0].Low && a.Contestants[0].High == c.Contestants[0].High {
		t.Errorf("another seed gave the very same interval %+v", a.Contestants[0])
	}
	if a.Rounds != 200 {
		t.Errorf("rounds %d, want 200", a.Rounds)
	}
}

func TestRankCountsAndMatrix(t *testing.T) {
	outs := []Outcome{
		{A: 0, B: 1, Result: AWins},
		{A: 1, B: 0, Result: AWins},
		{A: 1, B: 0, Result: BWins},
		{A: 0, B: 2, Result: Tie},
		{A: 2, B: 0, Result: BothBad},
	}
	r, err := Rank(4, outs, Options{Rounds: 50})
	if err != nil {
		t.Fatal(err)
	}
	c0 := r.Contestants[0]
	if c0.Wins != 2 || c0.Losses != 1 || c0.Ties != 1 || c0.BothBad != 1 || c0.Votes != 5 {
		t.Errorf("contestant 0 = %+v, want 2 wins, 1 loss, 1 tie, 1 both bad, 5 votes", c0)
	}
	if got := r.Matrix[0][1]; got != (Cell{Games: 3, Wins: 2, Losses: 1, Share: 2.0 / 3}) {
		t.Errorf("0 against 1 = %+v", got)
	}
	if got := r.Matrix[1][0]; got.Wins != 1 || got.Losses != 2 || got.Share != 1.0/3 {
		t.Errorf("1 against 0 = %+v", got)
	}
	if got := r.Matrix[2][0]; got != (Cell{Games: 2, Ties: 2, Share: 0.5}) {
		t.Errorf("2 against 0 = %+v, want two ties (one both bad) at 0.5", got)
	}
	if got := r.Matrix[3][1]; got.Games != 0 {
		t.Errorf("3 never played, matrix says %+v", got)
	}
	if c3 := r.Contestants[3]; c3.Votes != 0 || c3.Low != c3.High && (c3.Low > c3.Score || c3.High < c3.Score) {
		t.Errorf("contestant without votes = %+v", c3)
	}
	// Decisive votes: 3, of which the A side won 2.
	if p := r.Position; p.Decisive != 3 || p.AWins != 2 || math.Abs(p.Share-2.0/3) > 1e-12 {
		t.Errorf("position = %+v, want 2 A wins of 3 decisive", p)
	}
}

func TestRankTiesAndBothBadCountAsHalfWins(t *testing.T) {
	split := []Outcome{{A: 0, B: 1, Result: AWins}, {A: 0, B: 1, Result: BWins}}
	tied := []Outcome{{A: 0, B: 1, Result: Tie}, {A: 1, B: 0, Result: BothBad}}
	a, _ := Rank(2, split, Options{Rounds: 10})
	b, _ := Rank(2, tied, Options{Rounds: 10})
	for i := range 2 {
		if math.Abs(a.Contestants[i].Score-1000) > 1e-6 || math.Abs(b.Contestants[i].Score-1000) > 1e-6 {
			t.Errorf("one win each and two ties should both give 1000: %.6f, %.6f", a.Contestants[i].Score, b.Contestants[i].Score)
		}
	}
	// Half a win: a win and a tie against the same opponent scores between
	// a win alone and two wins.
	one, _ := Rank(2, []Outcome{{A: 0, B: 1, Result: AWins}}, Options{Rounds: 10})
	half, _ := Rank(2, []Outcome{{A: 0, B: 1, Result: AWins}, {A: 1, B: 0, Result: Tie}}, Options{Rounds: 10})
	two, _ := Rank(2, []Outcome{{A: 0, B: 1, Result: AWins}, {A: 0, B: 1, Result: AWins}}, Options{Rounds: 10})
	s1, sh, s2 := one.Contestants[0].Score, half.Contestants[0].Score, two.Contestants[0].Score
	if !(sh < s1 && s1 < s2) {
		t.Errorf("win %.1f, win+tie %.1f, two wins %.1f: want win+tie < win < two wins", s1, sh, s2)
	}
	if b.Position.Decisive != 0 || b.Position.Low != 0 || b.Position.High != 1 {
		t.Errorf("no decisive votes should give an empty position figure, got %+v", b.Position)
	}
}

func TestRankUndefeatedIsFinite(t *testing.T) {
	var outs []Outcome
	for k := range 200 {
		outs = append(outs, Outcome{A: k % 3, B: 3, Result: AWins}, Outcome{A: 3, B: k % 3, Result: BWins})
		outs = append(outs, Outcome{A: k % 2, B: 2, Result: AWins})
	}
	r, err := Rank(4, outs, Options{Rounds: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range r.Contestants {
		for _, v := range []float64{c.Score, c.Low, c.High, c.Strength} {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				t.Fatalf("contestant %d has a non-finite figure: %+v", i, c)
			}
		}
	}
	if r.Order[3] != 3 || r.Contestants[3].Score > 700 {
		t.Errorf("contestant 3 lost every game yet scores %.1f (order %v)", r.Contestants[3].Score, r.Order)
	}
	if r.Order[0] != 0 && r.Order[0] != 1 {
		t.Errorf("order %v: an undefeated contestant should lead", r.Order)
	}
}

func TestRankNoVotes(t *testing.T) {
	r, err := Rank(3, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range r.Contestants {
		if c.Score != 1000 || c.Low != 1000 || c.High != 1000 || c.Strength != 1 {
			t.Errorf("contestant %d without votes = %+v, want 1000", i, c)
		}
	}
	if r.Rounds != 0 || r.Votes != 0 {
		t.Errorf("rounds %d votes %d, want 0", r.Rounds, r.Votes)
	}
}

func TestRankRefusesBadInput(t *testing.T) {
	ok := []Outcome{{A: 0, B: 1, Result: AWins}}
	cases := []struct {
		name string
		n    int
		outs []Outcome
		opt  Options
		want string
	}{
		{"one contestant", 1, nil, Options{}, "1 contestants; an arena has 2 to 64"},
		{"too many contestants", 65, nil, Options{}, "65 contestants"},
		{"too many votes", 2, make([]Outcome, MaxOutcomes+1), Options{}, "at most 1000000"},
		{"negative rounds", 2, ok, Options{Rounds: -1}, "-1 bootstrap rounds; use 1 to 10000"},
		{"too many rounds", 2, ok, Options{Rounds: 10_001}, "10001 bootstrap rounds"},
		{"index out of range", 2, []Outcome{{A: 0, B: 2, Result: AWins}}, Options{}, "vote 0 names contestant 0 against 2; contestants are 0 to 1"},
		{"negative index", 2, []Outcome{ok[0], {A: -1, B: 1, Result: AWins}}, Options{}, "vote 1 names contestant -1"},
		{"self", 3, []Outcome{{A: 2, B: 2, Result: Tie}}, Options{}, "vote 0 pits contestant 2 against itself"},
		{"no choice", 2, []Outcome{{A: 0, B: 1}}, Options{}, "vote 0 has no valid choice"},
		{"unknown choice", 2, []Outcome{{A: 0, B: 1, Result: 9}}, Options{}, "vote 0 has no valid choice (Result(9))"},
	}
	for _, c := range cases {
		_, err := Rank(c.n, c.outs, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestRankMeasuresPositionBias(t *testing.T) {
	r, err := Rank(4, tournament(5, []float64{1000, 1000, 1000, 1000}, 2000, 0.1), Options{Rounds: 20})
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Position; p.Low <= 0.5 || p.Share < 0.55 || p.Share > 0.65 {
		t.Errorf("judges favouring A by 10 points: position %+v, want about 0.6 and an interval above 0.5", p)
	}
}

func TestWilson(t *testing.T) {
	// Reference values: Wilson score interval for 8 of 10, z = 1.96.
	s, lo, hi := wilson(8, 10)
	if s != 0.8 || math.Abs(lo-0.4902) > 1e-4 || math.Abs(hi-0.9433) > 1e-4 {
		t.Errorf("wilson(8, 10) = %.4f [%.4f, %.4f], want 0.8 [0.4902, 0.9433]", s, lo, hi)
	}
	if _, lo, hi := wilson(0, 5); lo != 0 || hi >= 1 || hi < 0.4 {
		t.Errorf("wilson(0, 5) = [%.4f, %.4f]", lo, hi)
	}
}

func BenchmarkRank(b *testing.B) {
	for _, n := range []int{8, 64} {
		elo := make([]float64, n)
		for i := range elo {
			elo[i] = 1000 + float64(n/2-i)*400/float64(n)
		}
		outs := tournament(1, elo, 100_000, 0)
		b.Run(fmt.Sprintf("contestants=%d/votes=100k/rounds=1000", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Rank(n, outs, Options{Rounds: 1000}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
