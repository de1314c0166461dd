package runner_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"knobs/runner"
)

// done is a pane's done frame with its status, first token, rate, tokens and cost.
func done(status string, ttft, tps float64, tokens int, cost float64) []byte {
	return fmt.Appendf(nil, "id: 9\nevent: done\ndata: {\"status\":%q,\"metrics\":{\"ttft_ms\":%g,\"tokens_per_sec\":%g,\"tokens\":%d,\"cost_usd\":%g}}\n\n",
		status, ttft, tps, tokens, cost)
}

// cut makes a done frame's only choice end at max tokens.
func cut(frame []byte) []byte {
	return []byte(strings.Replace(string(frame), `{"status":`, `{"finish_reasons":["length"],"status":`, 1))
}

func TestSummaryAwards(t *testing.T) {
	tests := []struct {
		name    string
		dones   [][]byte
		lowest  int
		fewest  int
		winners map[string][]int
	}{
		{
			name:    "a pane without a price: no lowest cost",
			dones:   [][]byte{done("done", 10, 100, 50, 0.002), done("done", 20, 90, 60, 0)},
			lowest:  -1,
			fewest:  0,
			winners: map[string][]int{"fastest_first_token": {0}, "highest_tokens_per_sec": {0}, "fewest_tokens": {0}},
		},
		{
			name:    "every pane priced: the cheapest wins",
			dones:   [][]byte{done("done", 10, 100, 50, 0.002), done("done", 20, 90, 60, 0.001)},
			lowest:  1,
			fewest:  0,
			winners: map[string][]int{"fastest_first_token": {0}, "highest_tokens_per_sec": {0}, "fewest_tokens": {0}, "lowest_cost": {1}},
		},
		{
			name:    "ties: every pane with the best value wins",
			dones:   [][]byte{done("done", 10, 100, 40, 0.001), done("done", 30, 100, 60, 0.003), done("done", 10, 80, 40, 0.001)},
			lowest:  0,
			fewest:  0,
			winners: map[string][]int{"fastest_first_token": {0, 2}, "highest_tokens_per_sec": {0, 1}, "fewest_tokens": {0, 2}, "lowest_cost": {0, 2}},
		},
		{
			name:    "a failed pane wins nothing and leaves no cost to compare",
			dones:   [][]byte{done("error", 5, 0, 0, 0), done("done", 20, 90, 60, 0.001)},
			lowest:  -1,
			fewest:  1,
			winners: map[string][]int{"fastest_first_token": {1}, "highest_tokens_per_sec": {1}, "fewest_tokens": {1}},
		},
		{
			name:    "an answer cut at max tokens is short and cheap for the wrong reason",
			dones:   [][]byte{cut(done("done", 10, 100, 30, 0.0005)), done("done", 20, 90, 60, 0.001)},
			lowest:  1,
			fewest:  1,
			winners: map[string][]int{"fastest_first_token": {0}, "highest_tokens_per_sec": {0}, "fewest_tokens": {1}, "lowest_cost": {1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := runner.Scoreboard(make([]int64, len(tt.dones)), tt.dones)
			if s.LowestCost != tt.lowest || s.FewestTokens != tt.fewest {
				t.Errorf("lowest cost %d, fewest tokens %d; want %d, %d", s.LowestCost, s.FewestTokens, tt.lowest, tt.fewest)
			}
			if !reflect.DeepEqual(s.Winners, tt.winners) {
				t.Errorf("winners %v, want %v", s.Winners, tt.winners)
			}
		})
	}
}
