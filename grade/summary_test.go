package grade

import (
	"slices"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	s := Summarize([]Grade{{Pass: true, Score: 1}, {Pass: false, Score: 0.5}, {Pass: true, Score: 0.75}, {Pass: false}})
	if s != (Summary{Count: 4, Passed: 2, PassRate: 0.5, MeanScore: 0.5625}) {
		t.Errorf("Summarize = %+v", s)
	}
	if s := Summarize(nil); s != (Summary{}) {
		t.Errorf("Summarize(nil) = %+v", s)
	}
}

func TestAgreement(t *testing.T) {
	cases := []struct {
		a, b []bool
		want float64
	}{
		{[]bool{true, true, false, false}, []bool{true, false, false, true}, 0.5},
		{[]bool{true, false}, []bool{true, false}, 1},
		{[]bool{true}, []bool{false}, 0},
		{[]bool{true, false, true}, []bool{true}, 1},
		{nil, []bool{true}, 0},
	}
	for _, c := range cases {
		if got := Agreement(c.a, c.b); got != c.want {
			t.Errorf("Agreement(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{15, 20, 35, 40, 50}
	cases := []struct {
		xs   []float64
		p    float64
		want float64
		ok   bool
	}{
		{xs, 5, 15, true},
		{xs, 30, 20, true},
		{xs, 40, 20, true},
		{xs, 50, 35, true},
		{xs, 100, 50, true},
		{[]float64{50, 15, 40, 35, 20}, 50, 35, true}, // unsorted
		{[]float64{7}, 95, 7, true},
		{nil, 50, 0, false},
		{xs, 0, 0, false},
		{xs, 101, 0, false},
	}
	for _, c := range cases {
		got, ok := Percentile(c.xs, c.p)
		if got != c.want || ok != c.ok {
			t.Errorf("Percentile(%v, %v) = %v, %v; want %v, %v", c.xs, c.p, got, ok, c.want, c.ok)
		}
	}
	// 1..100: p95 is the 95th value, p50 the 50th.
	var hundred []float64
	for i := 100; i >= 1; i-- {
		hundred = append(hundred, float64(i))
	}
	if v, _ := P95(hundred); v != 95 {
		t.Errorf("P95 = %v", v)
	}
	if v, _ := P50(hundred); v != 50 {
		t.Errorf("P50 = %v", v)
	}
	if hundred[0] != 100 {
		t.Error("Percentile sorted the caller's slice")
	}
}

func TestCluster(t *testing.T) {
	outs := []string{
		"The capital of France is Paris.",      // 0
		"Paris",                                // 1
		"The capital of France is Paris.",      // 2
		"the capital of france is paris",       // 3: same words
		"Paris",                                // 4
		"I don't know.",                        // 5
		"The capital of France is Paris!",      // 6: same words
		"The capital city of France is Paris.", // 7: 6 of 7 words
	}
	groups, err := Cluster(outs, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	type g struct {
		text     string
		members  []int
		distinct int
	}
	want := []g{
		{outs[0], []int{0, 2, 3, 6, 7}, 4},
		{"Paris", []int{1, 4}, 1},
		{"I don't know.", []int{5}, 1},
	}
	if len(groups) != len(want) {
		t.Fatalf("Cluster = %+v", groups)
	}
	for i, w := range want {
		got := groups[i]
		if got.Text != w.text || !slices.Equal(got.Members, w.members) || got.Count != len(w.members) || got.Distinct != w.distinct {
			t.Errorf("group %d = %+v, want %+v", i, got, w)
		}
	}
	if s := groups[0].Similarity; s != 6.0/7 {
		t.Errorf("group 0 similarity = %v, want 6/7", s)
	}
	if groups[1].Similarity != 1 {
		t.Errorf("identical answers have similarity %v", groups[1].Similarity)
	}

	// At threshold 1, 6 of 7 words is not enough.
	groups, _ = Cluster(outs, 1)
	if len(groups) != 4 || !slices.Equal(groups[0].Members, []int{0, 2, 3, 6}) {
		t.Errorf("Cluster at 1 = %+v", groups)
	}

	// Two answers without words are alike.
	groups, _ = Cluster([]string{"", "…", "!"}, 1)
	if len(groups) != 1 || groups[0].Count != 3 {
		t.Errorf("Cluster of wordless answers = %+v", groups)
	}

	if _, err := Cluster(make([]string, 21), 0.8); err == nil || !strings.Contains(err.Error(), "at most 20 repeats") {
		t.Errorf("Cluster of 21 = %v", err)
	}
	for _, th := range []float64{0, -1, 1.5} {
		if _, err := Cluster(outs, th); err == nil {
			t.Errorf("Cluster at threshold %v gave no error", th)
		}
	}
}
