package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"unicode"
	"unicode/utf8"

	"knobs/llm"
)

// token is one output token with what logprobs reports about it.
type token struct {
	text string
	lp   float64
	alts []alt  // other likely tokens at this position; nil: fillers drawn from key
	key  uint64 // seeds the filler alternatives, which are only made when asked for
}

// alt is one alternative token at a position.
type alt struct {
	text string
	lp   float64
}

// top returns the k most likely tokens at t's position, t itself among
// them when it ranks.
func (t token) top(k int) []alt {
	alts := t.alts
	if alts == nil {
		alts = fillerAlts(rand.New(rand.NewPCG(t.key, t.key>>17)), t.text, t.lp, 8)
	}
	all := make([]alt, 0, len(alts)+1)
	all = append(all, alt{t.text, t.lp})
	for _, a := range alts {
		if a.text != t.text {
			all = append(all, a)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].lp > all[j].lp })
	return all[:min(k, len(all))]
}

// tokenize splits text the way BPE tokenizers roughly do: words carry
// their leading space, punctuation stands alone, long words and numbers
// break into pieces. Joining the result gives text back unchanged.
func tokenize(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		n := tokenLen(s[i:])
		out = append(out, s[i:i+n])
		i += n
	}
	return out
}

// countTokens is len(tokenize(s)) without the allocations.
func countTokens(s string) int {
	n := 0
	for i := 0; i < len(s); n++ {
		i += tokenLen(s[i:])
	}
	return n
}

// tokenLen is the byte length of the token at the start of s.
func tokenLen(s string) int {
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case r == '\n':
		return runLen(s, func(r rune) bool { return r == '\n' })
	case r == ' ':
		n := runLen(s, func(r rune) bool { return r == ' ' })
		if n == len(s) || s[n] == '\n' {
			return n
		}
		if n > 1 {
			// Indentation: the last space goes with the word after it.
			return n - 1
		}
		return 1 + wordLen(s[1:])
	case r == '\t':
		return runLen(s, func(r rune) bool { return r == '\t' })
	default:
		return max(size, wordLen(s))
	}
}

// wordLen is the length of the word, number piece or punctuation run at
// the start of s (after any leading space).
func wordLen(s string) int {
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case unicode.IsLetter(r):
		// Words up to 12 letters are one token; longer ones lose 8 at a time.
		n, runes, cut := 0, 0, 0
		for n < len(s) && runes < 13 {
			r, sz := utf8.DecodeRuneInString(s[n:])
			if !unicode.IsLetter(r) {
				break
			}
			n += sz
			if runes++; runes == 8 {
				cut = n
			}
		}
		if runes > 12 {
			return cut
		}
		return n
	case unicode.IsDigit(r):
		n := 0
		for n < len(s) && n < 3 && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		return max(n, size)
	case r == ' ' || r == '\n' || r == '\t' || r == utf8.RuneError && size == 0:
		return 0
	default:
		// Runs of the same mark (**, ##, ```) are common single tokens.
		n := size
		for k := 1; k < 3 && n+size <= len(s) && s[n:n+size] == s[:size]; k++ {
			n += size
		}
		return n
	}
}

func runLen(s string, in func(rune) bool) int {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		if !in(r) {
			break
		}
		n += size
	}
	return n
}

// fillers are the alternatives offered at positions where the text had no
// real choice to make.
var fillers = []string{" the", " a", " and", " of", " to", " in", " is", " it", " that", " for",
	" this", " with", " as", " on", " be", " or", " by", " an", " can", " more",
	",", ".", " not", " are", " but", " when", " how", " what", " one", " your",
	" some", " each", " most", " then", " so", " its", " from", " at", " all", "\n\n"}

// plainToken gives a token the simulator emitted without a choice a
// logprob and alternatives that depend only on its text and position, so
// logprobs never change the text and never depend on the seed.
func plainToken(text string, pos int) token {
	x := uint64(14695981039346656037) // FNV-1a
	for i := range len(text) {
		x = (x ^ uint64(text[i])) * 1099511628211
	}
	x ^= uint64(pos) * 0x9e3779b97f4a7c15
	// splitmix64 finaliser: a uniform draw from the hash.
	z := x + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	u := float64(z>>11) / (1 << 53)
	return token{text: text, lp: -0.0005 - 0.9*u*u*u, key: x}
}

// fillerAlts spreads the probability left over by lp over n filler tokens.
func fillerAlts(r *rand.Rand, text string, lp float64, n int) []alt {
	rest := 1 - math.Exp(lp)
	alts := make([]alt, 0, n)
	for len(alts) < n {
		f := fillers[r.IntN(len(fillers))]
		if f == text || slices.ContainsFunc(alts, func(a alt) bool { return a.text == f }) {
			continue
		}
		alts = append(alts, alt{f, math.Log(max(rest*0.55, 1e-9))})
		rest -= rest * 0.55
	}
	return alts
}

// PromptTokens is the prompt tokens the simulator would report for a
// request body to endpoint: Knobs' estimate of a prompt's size for any
// model. ok is false when the simulator would refuse the body.
func PromptTokens(endpoint llm.Endpoint, body []byte) (n int, ok bool) {
	r, apiErr := parseRequest(endpoint, body)
	if apiErr != nil {
		return 0, false
	}
	j, apiErr := newJob(r)
	if apiErr != nil {
		return 0, false
	}
	return j.promptTokens, true
}

// EstimatePromptTokens is Knobs' estimate of the prompt tokens a request
// body to endpoint costs on any provider: what the simulator would report
// when it can read the body, else a count of the body's own tokens (a
// model the simulator does not serve, a field it does not know). Budgets'
// holds and the usage of runs that ended before the provider's usage
// count prompts with it, so that the same body is counted the same.
func EstimatePromptTokens(endpoint llm.Endpoint, body []byte) int {
	if n, ok := PromptTokens(endpoint, body); ok {
		return n
	}
	return CountTokens(string(body))
}
