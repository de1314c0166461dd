// Package diff compares two runs: their texts word by word and their
// parameters key by key.
package diff

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Kind says which side an Op's text comes from.
type Kind int

// The kinds of Op.
const (
	Equal  Kind = iota // in both texts
	Delete             // only in the first text
	Insert             // only in the second text
)

// Op is a run of whole tokens that is in both texts, or in one only.
// Joining the Equal and Delete ops gives back the first text; the Equal
// and Insert ops, the second.
type Op struct {
	Kind Kind
	Text string
}

// maxTokens bounds the distinct tokens Words maps to runes: the runes
// below utf8.MaxRune, less the surrogates, which strings cannot hold.
const maxTokens = utf8.MaxRune + 1 - 0x800

// Words diffs a and b as words: each token is a word, a single mark of
// punctuation or leading space, with the whitespace that follows it, so
// that the ops read as the text does. Like go-diff's line mode, every
// distinct token becomes one rune and the runes are diffed.
func Words(a, b string) []Op {
	if a == b {
		if a == "" {
			return nil
		}
		return []Op{{Equal, a}}
	}
	ta, tb := tokens(a), tokens(b)
	index := map[string]rune{}
	var table []string
	toRunes := func(toks []string) []rune {
		rs := make([]rune, len(toks))
		for i, t := range toks {
			r, ok := index[t]
			if !ok {
				r = tokenRune(len(table))
				index[t] = r
				table = append(table, t)
			}
			rs[i] = r
		}
		return rs
	}
	ra, rb := toRunes(ta), toRunes(tb)
	if len(table) > maxTokens {
		// Not a text anyone reads: say it all changed.
		return merge([]Op{{Delete, a}, {Insert, b}})
	}
	dmp := diffmatchpatch.New()
	var out []piece
	for _, d := range dmp.DiffMainRunes(ra, rb, false) {
		var sb strings.Builder
		n := 0
		for _, r := range d.Text {
			sb.WriteString(table[runeToken(r)])
			n++
		}
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			out = append(out, piece{eq: sb.String(), eqN: n})
		case diffmatchpatch.DiffDelete:
			out = addChange(out, piece{changed: true, del: sb.String(), delN: n})
		case diffmatchpatch.DiffInsert:
			out = addChange(out, piece{changed: true, ins: sb.String(), insN: n})
		}
	}
	var ops []Op
	for _, p := range out {
		if p.changed {
			ops = append(ops, Op{Delete, p.del}, Op{Insert, p.ins})
		} else {
			ops = append(ops, Op{Equal, p.eq})
		}
	}
	return merge(ops)
}

// piece is an equality, or a change: the tokens deleted and inserted
// between two equalities. The counts are in tokens.
type piece struct {
	changed    bool
	eq         string
	eqN        int
	del, ins   string
	delN, insN int
}

// addChange appends change c to out, joining it to a change just before
// it. Then, as go-diff's semantic cleanup does, an equality squeezed
// between two changes at least as long as it goes into both of them, so
// that a diff of two rewordings reads as two phrases and not as a
// scatter of single words.
func addChange(out []piece, c piece) []piece {
	for {
		n := len(out)
		if n > 0 && out[n-1].changed {
			last := &out[n-1]
			last.del, last.delN = last.del+c.del, last.delN+c.delN
			last.ins, last.insN = last.ins+c.ins, last.insN+c.insN
			c = *last
			out = out[:n-1]
			continue
		}
		if n > 1 && out[n-2].changed {
			eq, before := out[n-1], out[n-2]
			if eq.eqN <= max(before.delN, before.insN) && eq.eqN <= max(c.delN, c.insN) {
				c = piece{changed: true,
					del: before.del + eq.eq + c.del, delN: before.delN + eq.eqN + c.delN,
					ins: before.ins + eq.eq + c.ins, insN: before.insN + eq.eqN + c.insN}
				out = out[:n-2]
				continue
			}
		}
		return append(out, c)
	}
}

// tokenRune and runeToken map the i-th distinct token to a rune and back,
// stepping over the surrogate range.
func tokenRune(i int) rune {
	if i >= 0xD800 {
		return rune(i + 0x800)
	}
	return rune(i)
}

func runeToken(r rune) int {
	if r >= 0xE000 {
		return int(r) - 0x800
	}
	return int(r)
}

// tokens splits s into words, single marks of punctuation and a leading
// run of space, each with the whitespace after it. Joined, they are s.
func tokens(s string) []string {
	var out []string
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		end := n
		if isWord(r) {
			for end < len(s) {
				r, n := utf8.DecodeRuneInString(s[end:])
				if !isWord(r) {
					break
				}
				end += n
			}
		}
		for end < len(s) {
			r, n := utf8.DecodeRuneInString(s[end:])
			if !unicode.IsSpace(r) {
				break
			}
			end += n
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

func isWord(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r) || r == '_' || r == '\''
}

// merge drops empty ops and joins neighbours of one kind.
func merge(ops []Op) []Op {
	var out []Op
	for _, op := range ops {
		if op.Text == "" {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Kind == op.Kind {
			out[n-1].Text += op.Text
			continue
		}
		out = append(out, op)
	}
	return out
}
