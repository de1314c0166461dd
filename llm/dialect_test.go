package llm

import (
	"strings"
	"testing"
)

func TestThinkSplitter(t *testing.T) {
	tests := []struct {
		in                      string
		wantReasoning, wantText string
	}{
		{"<think>plan</think>answer", "plan", "answer"},
		{"\n <think>\nplan\n</think>\n\nanswer", "\nplan\n", "\n\nanswer"},
		{"no tags here", "", "no tags here"},
		{"answer then <think>x</think>", "", "answer then <think>x</think>"},
		{"<thinking is not a tag", "", "<thinking is not a tag"},
		{"<think>never closed", "never closed", ""},
		{"<thi", "", "<thi"},
		{"<think>a</thin", "a</thin", ""},
		{"<think>a</think>b</think>", "a", "b</think>"},
		{"   ", "", "   "},
	}
	for _, tt := range tests {
		// Every way of cutting the input in up to three pieces must give the
		// same split: tags arrive cut across chunks.
		for i := 0; i <= len(tt.in); i++ {
			for j := i; j <= len(tt.in); j++ {
				var sp thinkSplitter
				var r, c strings.Builder
				for _, part := range []string{tt.in[:i], tt.in[i:j], tt.in[j:]} {
					pr, pc := sp.feed(part)
					r.WriteString(pr)
					c.WriteString(pc)
				}
				pr, pc := sp.flush()
				r.WriteString(pr)
				c.WriteString(pc)
				if r.String() != tt.wantReasoning || c.String() != tt.wantText {
					t.Fatalf("%q cut at %d,%d: reasoning %q content %q; want %q %q",
						tt.in, i, j, r.String(), c.String(), tt.wantReasoning, tt.wantText)
				}
			}
		}
	}
}

func TestPartialSuffix(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"abc", 0}, {"abc<", 1}, {"abc</thi", 5}, {"</think", 7}, {"</think>", 0}, {"", 0},
	}
	for _, tt := range tests {
		if got := partialSuffix(tt.s, thinkClose); got != tt.want {
			t.Errorf("partialSuffix(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}
