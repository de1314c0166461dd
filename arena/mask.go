package arena

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Token replaces every name Mask hides.
const Token = "[model]"

// Bounds on an arena's own mask terms.
const (
	MaxMaskTerms     = 256
	MaxMaskTermBytes = 200
	maxTermPieces    = 16
)

// builtinTerms are the providers, model families and products that give a
// contestant away. A term is matched as whole words, case-insensitively,
// with separators (space, -, _, ., :) or nothing between its words, so
// "x.ai" also matches "x ai" and "xai" is a term of its own.
var builtinTerms = []string{
	"OpenAI", "ChatGPT", "GPT", "DALL-E", "Sora",
	"Anthropic", "Claude", "ClaudeAI", "AnthropicAI",
	"Meta", "Meta AI", "MetaAI", "Llama", "CodeLlama", "Code Llama",
	"Google", "GoogleAI", "Google DeepMind", "DeepMind", "Gemini", "Gemma", "Bard",
	"xAI", "x.ai", "Grok",
	"Mistral", "Mistral AI", "Mixtral", "Codestral", "Ministral", "Magistral", "Pixtral",
	"Qwen", "QwQ", "Alibaba", "Tongyi",
	"DeepSeek",
	"Cerebras",
	"Cohere", "Command R",
	"Microsoft", "Phi", "Copilot", "Bing",
	"Nvidia", "Nemotron",
	"Amazon", "Nova",
	"Moonshot", "Kimi", "Zhipu", "ChatGLM", "Baichuan", "Hunyuan", "ByteDance", "Doubao",
	"AI21", "Jamba", "Reka", "Groq", "OpenRouter", "Hugging Face", "HuggingFace",
	"OLMo", "AllenAI", "Vicuna", "LLaVA", "StarCoder",
	"Knobs simulator",
	// In scripts written without spaces these match anywhere in a run of letters.
	"通义千问", "通义", "千问", "文心一言", "深度求索", "智谱", "阿里巴巴", "阿里云", "月之暗面", "字节跳动", "百度",
}

// tailTerms are names masked only with a version after them ("o3-mini",
// "GLM-4", "sim-fast"): alone they are ordinary words or symbols.
var tailTerms = []string{"o1", "o3", "o4", "GLM", "Yi", "PaLM", "sim"}

// variants are the words of model names that follow a family name after a
// space ("Claude 3.5 Sonnet", "Gemini Pro") and, with the extra ones,
// after - _ . or : ("gemma-2-9b-it", "deepseek-chat").
var (
	spaceVariants = words("sonnet opus haiku pro flash mini nano turbo instruct ultra lite preview vision coder large small medium nemo")
	joinVariants  = words("it chat code base latest exp max plus reasoner reasoning thinking distill fast instant online omni audio realtime search embed embedding hf gguf awq fp8 high low experimental")
)

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// head is one term, as lowercased pieces.
type head struct {
	pieces   []string
	needTail bool // only with a version after it
	anyTail  bool // any joined word is a version ("sim-fast")
}

// Masker hides the names of contestants, providers and model families in
// answers while voters vote. It is safe for concurrent use.
type Masker struct {
	heads map[string][]head // by first piece, longest first
	dense []string          // terms in scripts without spaces, longest first
}

// NewMasker builds a Masker from the built-in names and the arena's own
// terms (its contestants' names, model ids, anything else to hide).
func NewMasker(custom []string) (*Masker, error) {
	if len(custom) > MaxMaskTerms {
		return nil, fmt.Errorf("arena: %d mask terms; an arena has at most %d", len(custom), MaxMaskTerms)
	}
	m := &Masker{heads: map[string][]head{}}
	for _, t := range builtinTerms {
		m.add(t, head{})
	}
	for _, t := range tailTerms {
		m.add(t, head{needTail: true, anyTail: t == "sim"})
	}
	for i, t := range custom {
		if len(t) > MaxMaskTermBytes {
			return nil, fmt.Errorf("arena: mask term %d is %d bytes long; at most %d", i+1, len(t), MaxMaskTermBytes)
		}
		if !utf8.ValidString(t) {
			return nil, fmt.Errorf("arena: mask term %d is not valid UTF-8", i+1)
		}
		switch n := m.add(t, head{}); {
		case n == 0:
			return nil, fmt.Errorf("arena: mask term %d (%q) has no letters or digits", i+1, t)
		case n > maxTermPieces:
			return nil, fmt.Errorf("arena: mask term %d (%q) has %d words; at most %d", i+1, t, n, maxTermPieces)
		}
	}
	for k := range m.heads {
		slices.SortStableFunc(m.heads[k], func(a, b head) int { return len(b.pieces) - len(a.pieces) })
	}
	slices.SortStableFunc(m.dense, func(a, b string) int { return len(b) - len(a) })
	return m, nil
}

// add adds a term and says how many pieces it has.
func (m *Masker) add(term string, h head) int {
	ps := pieces(term)
	if len(ps) == 0 || len(ps) > maxTermPieces {
		return len(ps)
	}
	if len(ps) == 1 && ps[0].class == dense {
		m.dense = append(m.dense, strings.ToLower(term[ps[0].start:ps[0].end]))
		return 1
	}
	for _, p := range ps {
		h.pieces = append(h.pieces, strings.ToLower(term[p.start:p.end]))
	}
	m.heads[h.pieces[0]] = append(m.heads[h.pieces[0]], h)
	return len(ps)
}

// Mask returns text with every name replaced by Token.
func (m *Masker) Mask(text string) string {
	spans := m.find(text)
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, s := range spans {
		b.WriteString(text[at:s[0]])
		b.WriteString(Token)
		at = s[1]
	}
	b.WriteString(text[at:])
	return b.String()
}

// Leaks lists, in order, the names Mask would hide in text.
func (m *Masker) Leaks(text string) []string {
	var out []string
	for _, s := range m.find(text) {
		out = append(out, text[s[0]:s[1]])
	}
	return out
}

// Character classes: Latin letters and digits make the words terms are
// matched against; letters of other scripts make words too, but are never
// part of a Latin word, so "我是Claude" holds the word "Claude".
const (
	none = iota
	latin
	dense
)

func class(r rune) int {
	r = narrow(r)
	switch {
	case r < utf8.RuneSelf:
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return latin
		}
		return none
	case unicode.Is(unicode.Latin, r):
		return latin
	case unicode.IsLetter(r) || unicode.IsDigit(r):
		return dense
	}
	return none
}

// piece is a run of same-class letters and digits, a Latin one split
// where a digit follows a letter ("llama3" is "llama" and "3"). joined
// says it continues the piece before it with nothing between.
type piece struct {
	start, end int
	class      int
	joined     bool
	digit      bool // starts with a digit
}

func pieces(text string) []piece {
	var out []piece
	prevClass, prevEnd, prevDigit := none, -1, false
	for i, r := range text {
		c := class(r)
		size := utf8.RuneLen(r)
		if r == utf8.RuneError {
			size = 1
		}
		d := '0' <= narrow(r) && narrow(r) <= '9'
		if c != none && c == prevClass && prevEnd == i && !(c == latin && d && !prevDigit) {
			out[len(out)-1].end = i + size
		} else if c != none {
			out = append(out, piece{start: i, end: i + size, class: c, digit: d,
				joined: c == prevClass && prevEnd == i})
		}
		prevClass, prevEnd, prevDigit = c, i+size, d
	}
	return out
}

// scan is one text being searched, with its pieces and a buffer for
// lowercasing them.
type scan struct {
	text string
	ps   []piece
	buf  []byte
}

// low is piece i lowercased, valid until the next call.
func (s *scan) low(i int) []byte {
	s.buf = appendLower(s.buf[:0], s.text[s.ps[i].start:s.ps[i].end])
	return s.buf
}

// is says whether piece i is word, or its plural when plural is set.
func (s *scan) is(i int, word string, plural bool) bool {
	w := s.low(i)
	return string(w) == word || plural && len(w) == len(word)+1 && w[len(word)] == 's' && string(w[:len(word)]) == word
}

// find returns the spans to mask, in order, not overlapping.
func (m *Masker) find(text string) [][2]int {
	s := &scan{text: text, ps: pieces(text)}
	var spans [][2]int
	for k := 0; k < len(s.ps); {
		p := s.ps[k]
		if p.class == dense {
			spans = m.findDense(text, p, spans)
			k++
			continue
		}
		if p.joined {
			k++
			continue
		}
		end, next := -1, k+1
		for _, h := range m.heads[string(s.low(k))] {
			if e, n, ok := m.match(s, k, h); ok {
				end, next = e, n
				break
			}
		}
		if w := s.low(k); end < 0 && len(w) > 1 && w[len(w)-1] == 's' { // "GPTs", "Llamas"
			for _, h := range m.heads[string(w[:len(w)-1])] {
				if len(h.pieces) > 1 {
					continue
				}
				if e, n, ok := m.match(s, k, h); ok {
					end, next = e, n
					break
				}
			}
		}
		if end < 0 || p.start > 0 && strings.HasPrefix(text[p.start-1:], Token) {
			k++ // nothing, or the mask itself (an arena's term "model")
			continue
		}
		if end < len(text) && text[end] == '+' {
			if r, _ := utf8.DecodeRuneInString(text[end+1:]); class(r) != latin {
				end++ // "Command R+", "GPT-4+"
			}
		}
		spans = append(spans, [2]int{p.start, end})
		k = next
	}
	return spans
}

// match tries the head h at piece k, whose first piece matched already,
// returning where the match ends in the text and the piece after it.
func (m *Masker) match(s *scan, k int, h head) (end, next int, ok bool) {
	ps, text := s.ps, s.text
	for j := 1; j < len(h.pieces); j++ {
		i := k + j
		if i >= len(ps) || ps[i].class != latin || !ps[i].joined && !separator(text[ps[i-1].end:ps[i].start], 2) {
			return 0, 0, false
		}
		if !s.is(i, h.pieces[j], j == len(h.pieces)-1) {
			return 0, 0, false
		}
	}
	i := k + len(h.pieces)
	// The version after the name.
	tail := i
version:
	for i < len(ps) && ps[i].class == latin {
		p := ps[i]
		if p.joined { // digits right after letters: "gpt4", "qwen2"
			i++
			continue
		}
		gap := text[ps[i-1].end:p.start]
		if !separator(gap, 1) {
			break
		}
		space := gap == " " || gap == "\t" || gap == "\u00a0"
		w := s.low(i)
		switch {
		case p.digit:
		case len(w) <= 2 && i+1 < len(ps) && ps[i+1].joined: // "r1", "v3", "o3"
		case spaceVariants[string(w)]:
		case !space && (joinVariants[string(w)] || h.anyTail):
		default:
			break version
		}
		i++
	}
	if h.needTail && i == tail {
		return 0, 0, false
	}
	return ps[i-1].end, i, true
}

// separator says whether gap is 1 to most characters that may stand
// between the words of a name: spaces, or - _ . : and the Unicode hyphens
// and dash that typeset text uses ("GPT‑4o" with a non-breaking hyphen).
func separator(gap string, most int) bool {
	n := 0
	for _, r := range gap {
		n++
		if n > most || !strings.ContainsRune(" \t\u00a0-_.:\u2010\u2011\u2013", r) {
			return false
		}
	}
	return n > 0
}

// findDense finds the terms of scripts without spaces inside the piece p.
func (m *Masker) findDense(text string, p piece, spans [][2]int) [][2]int {
	if len(m.dense) == 0 {
		return spans
	}
	s := text[p.start:p.end]
	low := strings.ToLower(s)
	if len(low) != len(s) { // lowering changed the length: match as written
		low = s
	}
	for at := 0; at < len(low); {
		best, bestLen := -1, 0
		for _, t := range m.dense {
			if i := strings.Index(low[at:], t); i >= 0 && (best < 0 || i < best || i == best && len(t) > bestLen) {
				best, bestLen = i, len(t)
			}
		}
		if best < 0 {
			break
		}
		spans = append(spans, [2]int{p.start + at + best, p.start + at + best + bestLen})
		at += best + bestLen
	}
	return spans
}

// narrow turns fullwidth forms of ASCII ("ＧＰＴ") into ASCII.
func narrow(r rune) rune {
	if 0xFF01 <= r && r <= 0xFF5E {
		return r - 0xFEE0
	}
	return r
}

// appendLower appends s lowercased and narrowed: bytes for ASCII, runes
// otherwise.
func appendLower(buf []byte, s string) []byte {
	for _, r := range s {
		r = narrow(r)
		if 'A' <= r && r <= 'Z' {
			buf = append(buf, byte(r-'A'+'a'))
		} else if r < utf8.RuneSelf {
			buf = append(buf, byte(r))
		} else {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		}
	}
	return buf
}
