package runner

import (
	"strings"
	"testing"
	"time"

	"knobs/llm"
)

// TestTokensCountReasoningOncePerDialect: completion tokens include the
// reasoning tokens on Cerebras, OpenAI-compatible servers and the
// simulator, and leave them out on xAI (issue 12, item 7).
func TestTokensCountReasoningOncePerDialect(t *testing.T) {
	for _, tt := range []struct {
		name  string
		usage llm.Usage
		want  int
	}{
		{"included (Cerebras, OpenAI, sim)", llm.Usage{CompletionTokens: 100, ReasoningTokens: 30}, 100},
		{"apart (xAI)", llm.Usage{CompletionTokens: 100, ReasoningTokens: 30, ReasoningApart: true}, 130},
		{"no reasoning", llm.Usage{CompletionTokens: 7}, 7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			u := tt.usage
			run := &Run{started: start, result: Result{Usage: &u}, chunks: 3,
				firstToken: start.Add(time.Second), lastToken: start.Add(2 * time.Second)}
			m := run.metrics(start.Add(3 * time.Second))
			if m.Tokens != tt.want {
				t.Fatalf("Tokens = %d, want %d", m.Tokens, tt.want)
			}
			if want := float64(tt.want - 1); m.TokensPerSec != want {
				t.Fatalf("Tokens/s = %v, want %v", m.TokensPerSec, want)
			}
		})
	}
}

// TestResponseAndTokensAreKeptAndSent: the answer's labels and raw token
// ids reach the result and an SSE frame each (issue 12, item 8).
func TestResponseAndTokensAreKeptAndSent(t *testing.T) {
	run := &Run{changed: make(chan struct{})}
	resp := &llm.Response{ID: "r1", Model: "m", SystemFingerprint: "fp", ServiceTier: "flex", Created: 5, Streamed: true}
	run.apply(llm.Event{Kind: llm.EventResponse, Response: resp}, time.Now(), 1<<20)
	run.apply(llm.Event{Kind: llm.EventTokens, Choice: 1, Tokens: []int{9, 8}}, time.Now(), 1<<20)
	if run.result.Response != resp || len(run.result.Choices) != 2 || len(run.result.Choices[1].Tokens) != 2 {
		t.Fatalf("result = %+v", run.result)
	}
	if len(run.frames) != 2 {
		t.Fatalf("frames = %q", run.frames)
	}
	for i, want := range []string{`event: response`, `event: tokens`} {
		if got := string(run.frames[i]); !strings.Contains(got, want) {
			t.Errorf("frame %d = %q, want %s", i, got, want)
		}
	}
}
