package grade

import (
	"fmt"
	"strings"
	"unicode"
)

// MaxRepeats is the most answers Cluster groups: an experiment's repeats
// of one cell.
const MaxRepeats = 20

// Group is a set of answers to the same cell that are the same or nearly
// the same.
type Group struct {
	Text    string `json:"text"`    // the first answer of the group, as it was
	Count   int    `json:"count"`   // answers in the group
	Members []int  `json:"members"` // their indexes in the answers given, ascending
	// Distinct is how many different texts the group holds: 1 when its
	// answers are all identical.
	Distinct int `json:"distinct"`
	// Similarity is the lowest similarity of a member to Text (1 when
	// all are identical).
	Similarity float64 `json:"similarity"`
}

// Cluster groups repeated answers to one cell. Identical answers form
// one group with their count. Different answers join the first group
// whose first answer is at least threshold similar, by normalised token
// overlap: the Jaccard index of the two sets of words (lowercased runs of
// letters and digits), |A ∩ B| / |A ∪ B|, where two answers without words
// are 1. Groups come in order of their first answer. threshold is in
// (0, 1]; 1 joins answers with the same words in any order or case. At
// most MaxRepeats answers.
func Cluster(outputs []string, threshold float64) ([]Group, error) {
	if len(outputs) > MaxRepeats {
		return nil, fmt.Errorf("Knobs compares at most %d repeats of a cell, not %d", MaxRepeats, len(outputs))
	}
	if !(threshold > 0 && threshold <= 1) {
		return nil, fmt.Errorf("the similarity threshold is above 0 and at most 1, not %g", threshold)
	}
	var groups []Group
	var words []map[string]bool // the words of each group's Text
	seen := map[string]int{}    // an answer's text → its group
	for i, out := range outputs {
		if gi, ok := seen[out]; ok {
			groups[gi].Members = append(groups[gi].Members, i)
			groups[gi].Count++
			continue
		}
		w := tokens(out)
		joined := false
		for gi := range groups {
			if sim := jaccard(words[gi], w); sim >= threshold {
				g := &groups[gi]
				g.Members = append(g.Members, i)
				g.Count++
				g.Distinct++
				g.Similarity = min(g.Similarity, sim)
				seen[out] = gi
				joined = true
				break
			}
		}
		if !joined {
			seen[out] = len(groups)
			groups = append(groups, Group{Text: out, Count: 1, Members: []int{i}, Distinct: 1, Similarity: 1})
			words = append(words, w)
		}
	}
	return groups, nil
}

// tokens is the set of words of s: runs of letters and digits,
// lowercased.
func tokens(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		set[strings.ToLower(w)] = true
	}
	return set
}

// jaccard is |a ∩ b| / |a ∪ b|, and 1 for two empty sets.
func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	both := 0
	for w := range a {
		if b[w] {
			both++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}
