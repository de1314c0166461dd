package sim

import (
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sampler makes every choice the simulator's "model" takes. Options come
// ordered by preference; temperature and top_p shape how far down the list
// it goes, the way they do for a real model's next-token distribution.
type sampler struct {
	rng  *rand.Rand
	temp float64
	topP float64
}

// decay is the drop in logit from one option to the next.
const decay = 0.6

// pick chooses one of n options, skipping those skip rejects (nil skips
// none). It returns the index and every option's probability under the
// model's own temperature-1 distribution, which is what logprobs report.
func (s *sampler) pick(n int, skip func(int) bool) (int, []float64) {
	probs := make([]float64, n)
	var avail []int
	for i := range n {
		if skip == nil || !skip(i) {
			avail = append(avail, i)
		}
	}
	if len(avail) == 0 {
		for i := range n {
			avail = append(avail, i)
		}
	}
	var sum float64
	for rank, i := range avail {
		probs[i] = math.Exp(-decay * float64(rank))
		sum += probs[i]
	}
	for _, i := range avail {
		probs[i] /= sum
	}
	u := s.rng.Float64() // drawn at every temperature, so choices stay aligned
	if s.temp <= 0 {
		return avail[0], probs
	}
	weights := make([]float64, len(avail))
	var total float64
	for rank := range avail {
		weights[rank] = math.Exp(-decay * float64(rank) / s.temp)
		total += weights[rank]
	}
	// top_p keeps the smallest head of the list holding that much mass.
	keep := len(avail)
	if s.topP > 0 && s.topP < 1 {
		var cum float64
		for rank, w := range weights {
			cum += w / total
			if cum >= s.topP {
				keep = rank + 1
				break
			}
		}
		total = 0
		for _, w := range weights[:keep] {
			total += w
		}
	}
	target := u * total
	for rank, w := range weights[:keep] {
		if target < w {
			return avail[rank], probs
		}
		target -= w
	}
	return avail[keep-1], probs
}

// chance is a yes/no choice that favours yes with probability p at
// temperature 1 and always says yes at temperature 0.
func (s *sampler) chance(p float64) bool {
	u := s.rng.Float64()
	if s.temp <= 0 {
		return true
	}
	return u < math.Pow(p, 1/math.Max(s.temp, 0.05))
}

// between picks an integer in [lo, hi]; the low end at temperature 0.
func (s *sampler) between(lo, hi int) int {
	u := s.rng.Float64()
	if hi <= lo {
		return lo
	}
	if s.temp <= 0 {
		return lo + (hi-lo)/2
	}
	return lo + int(u*float64(hi-lo+1))
}

// tokenWriter accumulates output tokens with their logprobs.
type tokenWriter struct {
	toks []token
}

// plain appends text whose tokens involved no choice.
func (w *tokenWriter) plain(text string) {
	for _, t := range tokenize(text) {
		w.toks = append(w.toks, plainToken(t, len(w.toks)))
	}
}

// chosen appends text that was option i of options: its first token
// carries the choice's probability and the other options' first tokens.
func (w *tokenWriter) chosen(lead, text string, i int, probs []float64, options []string) {
	start := len(w.toks)
	w.plain(lead + text)
	if start == len(w.toks) {
		return
	}
	first := &w.toks[start]
	first.lp = math.Log(math.Max(probs[i], 1e-9))
	first.alts = []alt{}
	seen := map[string]bool{first.text: true}
	for j, p := range probs {
		if j == i || p == 0 || len(first.alts) >= 8 {
			continue
		}
		s := lead + options[j]
		ft := s[:tokenLen(s)]
		if seen[ft] {
			continue
		}
		seen[ft] = true
		first.alts = append(first.alts, alt{ft, math.Log(p)})
	}
	// Options that begin alike leave few alternatives; unlikely fillers
	// make up the rest.
	for k, f := range fillers {
		if len(first.alts) >= 8 {
			break
		}
		if !seen[f] {
			seen[f] = true
			first.alts = append(first.alts, alt{f, math.Log(1e-4) - float64(k)*0.1})
		}
	}
}

// topics is what the simulator read in a prompt.
type topics struct {
	keywords []string // most telling first; never empty
	topic    string   // a phrase naming the subject
	lang     string   // language of a code block the prompt asks for; "" for none
}

var (
	wordRE = regexp.MustCompile(`[\p{L}][\p{L}\p{N}_'-]*`)
	codeRE = regexp.MustCompile(`\b(code|coding|function|program|script|snippet|implement|implementation|golang|python|javascript|typescript|sql|query|regex|bash|shell|rust|class|method|compile|bug|refactor)\b`)
	langRE = []struct {
		re   *regexp.Regexp
		lang string
	}{
		{regexp.MustCompile(`\b(python|django|pandas)\b`), "python"},
		{regexp.MustCompile(`\b(javascript|typescript|node|react|js|ts)\b`), "javascript"},
		{regexp.MustCompile(`\b(sql|query|queries|sqlite|postgres|postgresql|mysql)\b`), "sql"},
		{regexp.MustCompile(`\b(bash|shell|script)\b`), "bash"},
		{regexp.MustCompile(`\b(rust|cargo)\b`), "rust"},
	}
)

// readPrompt pulls the subject out of text: key words (no stop words),
// a topic phrase and whether code is wanted.
func readPrompt(text string) topics {
	type seen struct {
		form  string
		count int
		first int
	}
	words := wordRE.FindAllStringIndex(text, -1)
	byKey := map[string]*seen{}
	var order []string
	prevKept := -1
	var bigram string
	for n, loc := range words {
		w := strings.Trim(text[loc[0]:loc[1]], "'-_")
		key := strings.ToLower(w)
		short := utf8.RuneCountInString(key) < 3 && displayForm(w, loc[0], text) == key // "Go", "AI" stay
		if short || key == "" || stopWords[key] {
			continue
		}
		if bigram == "" && prevKept == n-1 && n > 0 {
			prev := strings.Trim(text[words[n-1][0]:words[n-1][1]], "'-_")
			bigram = displayForm(prev, words[n-1][0], text) + " " + displayForm(w, loc[0], text)
		}
		prevKept = n
		if s, ok := byKey[key]; ok {
			s.count++
			continue
		}
		byKey[key] = &seen{form: displayForm(w, loc[0], text), count: 1, first: len(order)}
		order = append(order, key)
	}
	// Frequent and longer words say more about the subject.
	score := func(k string) float64 {
		s := byKey[k]
		return float64(s.count)*2 + math.Min(float64(len(k)), 10)/4 - float64(s.first)*0.05
	}
	sorted := append([]string(nil), order...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && score(sorted[j]) > score(sorted[j-1]); j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	t := topics{}
	for _, k := range sorted[:min(len(sorted), 8)] {
		t.keywords = append(t.keywords, byKey[k].form)
	}
	switch {
	case bigram != "":
		t.topic = bigram
		// The phrase leads; its words alone would read as nonsense ("what garbage does").
		parts := strings.Fields(strings.ToLower(bigram))
		kw := []string{bigram}
		for _, k := range t.keywords {
			if !slices.Contains(parts, strings.ToLower(k)) {
				kw = append(kw, k)
			}
		}
		t.keywords = kw
	case len(t.keywords) > 0:
		t.topic = t.keywords[0]
	default:
		t.topic = "your prompt"
	}
	if len(t.keywords) == 0 {
		t.keywords = []string{"the question", "the context", "the details"}
	} else if len(t.keywords) == 1 {
		t.keywords = append(t.keywords, "the context")
	}
	lower := strings.ToLower(text)
	if codeRE.MatchString(lower) {
		t.lang = "go"
		for _, l := range langRE {
			if l.re.MatchString(lower) {
				t.lang = l.lang
				break
			}
		}
	}
	return t
}

// displayForm keeps the case of names and acronyms (a capital that does
// not merely start a sentence) and lower-cases the rest.
func displayForm(w string, at int, text string) string {
	r, _ := utf8.DecodeRuneInString(w)
	if !unicode.IsUpper(r) {
		return w
	}
	rest := strings.TrimRight(text[:at], " \t")
	sentenceStart := rest == "" || strings.ContainsAny(rest[len(rest)-1:], ".!?\n:#*-")
	if sentenceStart && w[1:] == strings.ToLower(w[1:]) {
		return strings.ToLower(w)
	}
	return w
}

func capitalize(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// writer writes simulated prose about a topic into tokens.
type writer struct {
	s     *sampler
	out   tokenWriter
	t     topics
	used  map[string]map[int]bool
	lastA int
	code  bool // whether the code block was written
}

func newWriter(s *sampler, t topics) *writer {
	return &writer{s: s, t: t, used: map[string]map[int]bool{}, lastA: -1}
}

// fill replaces the slots of a template: {a} and {b} are key words
// ({A} capitalised), {topic}/{Topic} the subject, {lang} the code language.
func (w *writer) fill(tmpl string) string {
	if !strings.Contains(tmpl, "{") {
		return tmpl
	}
	kw := w.t.keywords
	a := w.keyword()
	b, _ := w.s.pick(len(kw), func(i int) bool { return i == a })
	var out strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		j := strings.IndexByte(tmpl[i+1:], '}') + i + 1
		if i < 0 || j <= i {
			out.WriteString(tmpl)
			return out.String()
		}
		out.WriteString(tmpl[:i])
		switch slot := tmpl[i+1 : j]; slot {
		case "a":
			out.WriteString(kw[a])
		case "A":
			out.WriteString(capitalize(kw[a]))
		case "b":
			out.WriteString(kw[b])
		case "topic":
			out.WriteString(w.t.topic)
		case "Topic":
			out.WriteString(capitalize(w.t.topic))
		case "lang":
			out.WriteString(langNames[w.t.lang])
		case "name":
			out.WriteString(identifier(kw[a], w.t.lang))
		default:
			out.WriteString(tmpl[i : j+1])
		}
		tmpl = tmpl[j+1:]
	}
}

// keyword picks a key word other than the one picked last, so that even
// greedy output moves between them.
func (w *writer) keyword() int {
	a, _ := w.s.pick(len(w.t.keywords), func(i int) bool { return i == w.lastA })
	w.lastA = a
	return a
}

// from writes one template from bank, preferring ones not yet used.
func (w *writer) from(name string, bank []string, lead string) {
	used := w.used[name]
	if used == nil || len(used) >= len(bank) {
		used = map[int]bool{}
		w.used[name] = used
	}
	i, probs := w.s.pick(len(bank), func(i int) bool { return used[i] })
	used[i] = true
	w.out.chosen(lead, w.fill(bank[i]), i, probs, bank)
}

// answer writes an answer of about target tokens, and at least least: an
// opening that says what the simulator is, sections of prose, lists,
// headings and code, and a closing line. lead goes before the opening.
func (w *writer) answer(target, least int, lead string, opener []string) []token {
	w.from("opener", opener, lead)
	for range w.s.between(1, 2) {
		w.from("body", bodySentences, " ")
	}
	for len(w.out.toks) < max(target, least)-25 {
		w.section()
	}
	w.from("closer", closers, "\n\n")
	for len(w.out.toks) < least {
		w.section()
	}
	return w.out.toks
}

// sectionKinds are the shapes a section can take, most likely first.
var sectionKinds = []string{"paragraph", "list", "heading", "code", "steps"}

func (w *writer) section() {
	kind, _ := w.s.pick(len(sectionKinds), func(i int) bool {
		return sectionKinds[i] == "code" && (w.t.lang == "" || w.code)
	})
	if w.t.lang != "" && !w.code && len(w.out.toks) > 40 {
		kind = slices.Index(sectionKinds, "code") // asked for code: show it early rather than by luck
	}
	switch sectionKinds[kind] {
	case "paragraph":
		w.from("body", bodySentences, "\n\n")
		for range w.s.between(1, 3) {
			w.from("body", bodySentences, " ")
		}
	case "heading":
		w.from("heading", headings, "\n\n")
		w.out.plain("\n\n")
		w.from("body", bodySentences, "")
		w.from("body", bodySentences, " ")
	case "list":
		w.from("listIntro", listIntros, "\n\n")
		w.out.plain("\n")
		for range w.s.between(3, 5) {
			w.out.plain("\n- **" + capitalize(w.t.keywords[w.keyword()]) + "**:")
			w.from("clause", listClauses, " ")
			w.out.plain(".")
		}
	case "steps":
		w.from("stepsIntro", stepsIntros, "\n\n")
		w.out.plain("\n")
		n := w.s.between(3, 4)
		for i := range n {
			w.out.plain("\n" + string(rune('1'+i)) + ".")
			w.from("step", steps, " ")
		}
	case "code":
		w.code = true
		w.from("codeIntro", codeIntros, "\n\n")
		w.out.plain("\n\n```" + w.t.lang + "\n" + w.fill(codeSamples[w.t.lang]) + "```")
	}
}

// reasoning writes the model's thinking: about target tokens of notes to
// itself about the prompt.
func (w *writer) reasoning(target int) []token {
	w.from("thinkOpen", thinkOpeners, "")
	for len(w.out.toks) < target {
		lead := " "
		if w.s.rng.IntN(6) == 0 {
			lead = "\n\n"
		}
		w.from("think", thinkSentences, lead)
	}
	return w.out.toks
}

var langNames = map[string]string{"": "code", "go": "Go", "python": "Python", "javascript": "JavaScript",
	"sql": "SQL", "bash": "Bash", "rust": "Rust"}

// identifier turns a key word into a name fit for code in lang.
func identifier(word, lang string) string {
	var parts []string
	for _, f := range strings.FieldsFunc(strings.ToLower(word), func(r rune) bool {
		return !(r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	}) {
		parts = append(parts, f)
	}
	if len(parts) == 0 || !unicode.IsLetter(rune(parts[0][0])) {
		parts = append([]string{"handle"}, parts...)
	}
	switch lang {
	case "python", "sql", "bash", "rust":
		return strings.Join(parts, "_")
	}
	for i := 1; i < len(parts); i++ {
		parts[i] = capitalize(parts[i])
	}
	return strings.Join(parts, "")
}
