package grade

import (
	"math"
	"slices"
)

// Summary is what a set of grades adds up to.
type Summary struct {
	Count     int     `json:"count"`      // grades, grading errors not included
	Passed    int     `json:"passed"`     // of them, passes
	PassRate  float64 `json:"pass_rate"`  // Passed / Count; 0 when Count is 0
	MeanScore float64 `json:"mean_score"` // mean of the scores; 0 when Count is 0
}

// Summarize adds up grades. Grading errors are not grades: the caller
// leaves them out, so they neither pass nor fail.
func Summarize(grades []Grade) Summary {
	s := Summary{Count: len(grades)}
	if s.Count == 0 {
		return s
	}
	total := 0.0
	for _, g := range grades {
		if g.Pass {
			s.Passed++
		}
		total += g.Score
	}
	s.PassRate = float64(s.Passed) / float64(s.Count)
	s.MeanScore = total / float64(s.Count)
	return s
}

// Agreement is the share of cells where two raters (a judge and a
// human, two graders) gave the same pass or fail: a[i] against b[i], over
// the pairs both slices have. It is 0 when there are none.
func Agreement(a, b []bool) float64 {
	n := min(len(a), len(b))
	if n == 0 {
		return 0
	}
	same := 0
	for i := range n {
		if a[i] == b[i] {
			same++
		}
	}
	return float64(same) / float64(n)
}

// Percentile is the p-th percentile of xs by the nearest-rank method:
// the smallest value such that at least p percent of the values are at
// or below it, which is always one of the values (sorted ascending, the
// one at rank ⌈p/100 × n⌉, counting from 1). p is in (0, 100]; ok is
// false when xs is empty or p is out of range. NaNs are left out.
func Percentile(xs []float64, p float64) (v float64, ok bool) {
	if !(p > 0 && p <= 100) {
		return 0, false
	}
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return 0, false
	}
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = max(1, min(rank, len(s)))
	return s[rank-1], true
}

// P50 is the median by nearest rank (see Percentile).
func P50(xs []float64) (float64, bool) { return Percentile(xs, 50) }

// P95 is the 95th percentile by nearest rank (see Percentile).
func P95(xs []float64) (float64, bool) { return Percentile(xs, 95) }
