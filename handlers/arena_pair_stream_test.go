package handlers

import (
	"strings"
	"testing"

	"knobs/arena"
)

// A speed demo shows a streaming answer's words only once the name they
// may belong to is whole, so that no half-written name reaches a voter.
func TestSettledTextHoldsBackTheLastWords(t *testing.T) {
	long := strings.Repeat("冰川", 400) // 2,400 bytes, no spaces
	tests := []struct {
		name, in string
		finished bool
		held     int
		want     string
	}{
		{"a name coming in pieces", "Hello there, I am Clau", false, 3, "Hello there,"},
		{"finished: all of it", "Hello there, I am Clau", true, 3, "Hello there, I am Clau"},
		{"spaces at the end", "one two three four  ", false, 2, "one two"},
		{"fewer words than held", "I am", false, 3, ""},
		{"nothing yet", "", false, 3, ""},
		{"lines count as spaces", "first\nsecond\nthird", false, 1, "first\nsecond"},
		{"no spaces: a bounded tail", long, false, 3, long[:(len(long)-arenaStreamTail)/3*3]}, // on a rune's start
		{"no spaces: not inside a Latin name", strings.Repeat("冰", 300) + "我是Claude-3.5" + strings.Repeat("川", 170), false, 3,
			strings.Repeat("冰", 300) + "我是"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := settledText(tc.in, tc.finished, tc.held); got != tc.want {
				t.Errorf("settledText(%q, %v, %d) = %q, want %q", tc.in, tc.finished, tc.held, got, tc.want)
			}
		})
	}
}

func TestArenaHeldWordsCoverTheLongestTerm(t *testing.T) {
	tests := []struct {
		terms []string
		want  int
	}{
		{nil, 3},
		{[]string{"Aurora", "sim-fast"}, 3},
		{[]string{"Team Blue of the North"}, 6},
		{[]string{"a.b_c:d-e f"}, 7},
	}
	for _, tc := range tests {
		if got := arenaHeldWords(tc.terms); got != tc.want {
			t.Errorf("arenaHeldWords(%q) = %d, want %d", tc.terms, got, tc.want)
		}
	}
}

// Every prefix of an answer, masked and settled as a speed demo shows
// it, shows no name, however the tokens fall.
func TestSettledMaskedPrefixesNeverShowAName(t *testing.T) {
	terms := []string{"Aurora Borealis", "sim-fast"}
	m, err := arena.NewMasker(terms)
	if err != nil {
		t.Fatal(err)
	}
	answer := "Hello! I am Aurora Borealis, built on sim-fast 2.1 by the Claude 3.5 Sonnet team, and GPT-4o is my rival. " +
		"Call me Aurora-Borealis or aurora_borealis; Claude's cousin, sim-fast-2."
	held := arenaHeldWords(terms)
	for n := range len(answer) + 1 {
		shown := settledText(m.Mask(answer[:n]), n == len(answer), held)
		for _, name := range []string{"Aur", "Borealis", "sim-", "Claude", "Sonnet", "GPT"} {
			if strings.Contains(shown, name) {
				t.Fatalf("after %d bytes the stream shows %q: %q", n, name, shown)
			}
		}
	}
}

func TestCommonPrefixEndsOnARune(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "abc", 0},
		{"abc", "abd", 2},
		{"I am [model]", "I am [model] and", 12},
		{"é", "è", 0}, // two bytes each, the first the same
		{"xé", "xè", 1},
	}
	for _, tc := range tests {
		if got := commonPrefix(tc.a, tc.b); got != tc.want {
			t.Errorf("commonPrefix(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if n := utf16Len("a😀é"); n != 4 {
		t.Errorf("utf16Len = %d, want 4", n)
	}
}
