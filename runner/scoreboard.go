package runner

import (
	"encoding/json"
	"slices"

	"knobs/db"
	"knobs/web/sse"
)

// The scoreboard of a comparison: which pane was best at what, made when
// every pane has ended.

// PaneScore is one pane of a comparison in its group_done event.
type PaneScore struct {
	Pane         int     `json:"pane"`
	Run          int64   `json:"run"`
	Status       string  `json:"status"`
	TTFTMs       float64 `json:"ttft_ms"`
	TokensPerSec float64 `json:"tokens_per_sec"`
	Tokens       int     `json:"tokens"`
	CostUSD      float64 `json:"cost_usd"`
	Cut          bool    `json:"cut,omitempty"` // an answer stopped at max tokens
}

// Scores is the data of a comparison's group_done event: each pane's
// final figures and which pane did best on each, -1 when none qualifies;
// ties go to the lowest pane, and Winners lists every pane that tied for
// each award. A pane that failed is not the fastest at anything, and only
// a pane that finished whole (not stopped, not cut at max tokens) counts
// for fewest tokens and lowest cost: a cut answer is short and cheap for
// the wrong reason. Lowest cost is awarded only when
// every pane has a cost: a pane without a price (the simulator, a model
// Knobs has no price for) may well be the cheapest.
type Scores struct {
	Panes               []PaneScore      `json:"panes"`
	FastestFirstToken   int              `json:"fastest_first_token"`
	HighestTokensPerSec int              `json:"highest_tokens_per_sec"`
	FewestTokens        int              `json:"fewest_tokens"`
	LowestCost          int              `json:"lowest_cost"`
	Winners             map[string][]int `json:"winners"`
}

// Scoreboard builds group_done's data from each pane's done frame (nil
// for a pane whose run is gone).
func Scoreboard(runs []int64, dones [][]byte) Scores {
	s := Scores{Panes: make([]PaneScore, len(dones)), FastestFirstToken: -1, HighestTokensPerSec: -1, FewestTokens: -1, LowestCost: -1,
		Winners: map[string][]int{}}
	for i, f := range dones {
		p := PaneScore{Pane: i, Run: runs[i], Status: "gone"}
		if event, data := sse.FrameParts(f); string(event) == "done" {
			var d struct {
				Status        string   `json:"status"`
				FinishReasons []string `json:"finish_reasons"`
				Metrics       Metrics  `json:"metrics"`
			}
			if json.Unmarshal(data, &d) == nil {
				p.Status, p.TTFTMs, p.TokensPerSec, p.Tokens, p.CostUSD = d.Status, d.Metrics.TTFTMs, d.Metrics.TokensPerSec, d.Metrics.Tokens, d.Metrics.CostUSD
				p.Cut = slices.Contains(d.FinishReasons, "length")
			}
		}
		s.Panes[i] = p
	}
	// award returns the best pane (the lowest of a tie) and every pane
	// whose value equals the best.
	award := func(key string, ok func(PaneScore) bool, value func(PaneScore) float64, lower bool) int {
		at := -1
		for i, p := range s.Panes {
			if !ok(p) {
				continue
			}
			if at < 0 || (lower && value(p) < value(s.Panes[at])) || (!lower && value(p) > value(s.Panes[at])) {
				at = i
			}
		}
		if at < 0 {
			return -1
		}
		tied := []int{}
		for i, p := range s.Panes {
			if ok(p) && value(p) == value(s.Panes[at]) {
				tied = append(tied, i)
			}
		}
		s.Winners[key] = tied
		return at
	}
	fast := func(p PaneScore) bool { return p.Status != db.RunError && p.Status != "gone" }
	whole := func(p PaneScore) bool { return p.Status == db.RunDone && !p.Cut }
	s.FastestFirstToken = award("fastest_first_token", func(p PaneScore) bool { return fast(p) && p.TTFTMs > 0 },
		func(p PaneScore) float64 { return p.TTFTMs }, true)
	s.HighestTokensPerSec = award("highest_tokens_per_sec", func(p PaneScore) bool { return fast(p) && p.TokensPerSec > 0 },
		func(p PaneScore) float64 { return p.TokensPerSec }, false)
	s.FewestTokens = award("fewest_tokens", func(p PaneScore) bool { return whole(p) && p.Tokens > 0 },
		func(p PaneScore) float64 { return float64(p.Tokens) }, true)
	priced := true
	for _, p := range s.Panes {
		priced = priced && p.CostUSD > 0
	}
	if priced {
		s.LowestCost = award("lowest_cost", func(p PaneScore) bool { return whole(p) },
			func(p PaneScore) float64 { return p.CostUSD }, true)
	}
	return s
}
