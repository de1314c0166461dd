package grade

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"knobs/field"
)

// exactGrader compares the whole answer with a value or the row's
// expected answer.
type exactGrader struct {
	value    *string // nil: the row's expected answer
	fold     bool
	trim     bool
	collapse bool
}

func parseExact(s Spec, fe field.Errors) Grader {
	g := exactGrader{fold: s.IgnoreCase, trim: s.TrimSpace, collapse: s.CollapseSpace}
	if len(s.Value) > 0 && string(s.Value) != "null" {
		var v string
		switch {
		case len(s.Value) > MaxValueSize:
			fe.Add("value", fmt.Sprintf("value is at most %d KiB.", MaxValueSize>>10))
		case json.Unmarshal(s.Value, &v) != nil:
			fe.Add("value", "value must be a string: the answer is text. Leave it out to compare with the row's expected answer.")
		default:
			g.value = &v
		}
	}
	return g
}

func (g exactGrader) normalize(s string) string {
	if g.collapse {
		s = strings.Join(strings.Fields(s), " ")
	} else if g.trim {
		s = strings.TrimSpace(s)
	}
	if g.fold {
		s = strings.ToLower(s)
	}
	return s
}

func (g exactGrader) Grade(in Input) (Grade, error) {
	var want string
	what := "the expected answer"
	switch {
	case g.value != nil:
		v, err := fill(*g.value, in, nil)
		if err != nil {
			return Grade{}, err
		}
		want, what = v, quoted(v)
	case in.Expected == nil:
		return Grade{}, fmt.Errorf("this row has no expected answer to compare with, and the grader gives no value")
	default:
		want = *in.Expected
	}
	got, w := g.normalize(in.Output), g.normalize(want)
	if got == w {
		return passFail(true, "equals "+what), nil
	}
	at := firstDifference(got, w)
	return passFail(false, fmt.Sprintf("differs from %s at character %d: %s where it has %s",
		what, at+1, quoted(runesFrom(got, at)), quoted(runesFrom(w, at)))), nil
}

// firstDifference is the index, in runes, of the first rune where a and
// b differ.
func firstDifference(a, b string) int {
	i := 0
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			break
		}
		a, b = a[na:], b[nb:]
		i++
	}
	return i
}

func runesFrom(s string, i int) string {
	for ; i > 0 && s != ""; i-- {
		_, n := utf8.DecodeRuneInString(s)
		s = s[n:]
	}
	if s == "" {
		return "(the end)"
	}
	return s
}

// containsGrader looks for terms in the answer; absent says the terms
// must not be there (not_contains).
type containsGrader struct {
	terms  []string
	any    bool
	fold   bool
	absent bool
}

func parseContains(s Spec, fe field.Errors) Grader {
	g := containsGrader{terms: s.Terms, fold: s.IgnoreCase, absent: s.Type == "not_contains"}
	switch s.Mode {
	case "", "all":
	case "any":
		g.any = true
	default:
		fe.Add("mode", fmt.Sprintf(`mode is "all" or "any", not %q.`, s.Mode))
	}
	switch {
	case len(s.Terms) == 0:
		fe.Add("terms", `Give the terms to look for: "terms":["yes"].`)
	case len(s.Terms) > MaxTerms:
		fe.Add("terms", fmt.Sprintf("At most %d terms, not %d.", MaxTerms, len(s.Terms)))
	}
	for i, t := range s.Terms {
		switch {
		case t == "":
			fe.Add("terms", fmt.Sprintf("Term %d is empty.", i+1))
		case utf8.RuneCountInString(t) > MaxTermLength:
			fe.Add("terms", fmt.Sprintf("Term %d is over %d characters.", i+1, MaxTermLength))
		}
	}
	return g
}

func (g containsGrader) Grade(in Input) (Grade, error) {
	out := in.Output
	if g.fold {
		out = strings.ToLower(out)
	}
	var unmet []string
	for i, t := range g.terms {
		t, err := fill(t, in, nil)
		if err != nil {
			return Grade{}, err
		}
		if t == "" {
			return Grade{}, fmt.Errorf("term %d is empty once the row's values are filled in", i+1)
		}
		probe := t
		if g.fold {
			probe = strings.ToLower(t)
		}
		if strings.Contains(out, probe) == g.absent {
			unmet = append(unmet, t)
		}
	}
	met := len(g.terms) - len(unmet)
	pass := met == len(g.terms) || (g.any && met > 0)
	gr := Grade{Pass: pass, Score: float64(met) / float64(len(g.terms))}
	verb, fault := "found", "missing"
	if g.absent {
		verb, fault = "absent", "present"
	}
	gr.Reason = fmt.Sprintf("%d of %d terms %s", met, len(g.terms), verb)
	if len(unmet) > 0 {
		shown := make([]string, 0, 3)
		for _, t := range unmet[:min(3, len(unmet))] {
			shown = append(shown, quoted(t))
		}
		more := ""
		if len(unmet) > 3 {
			more = fmt.Sprintf(" and %d more", len(unmet)-3)
		}
		gr.Reason += fmt.Sprintf("; %s: %s%s", fault, strings.Join(shown, ", "), more)
	}
	return gr, nil
}

// regexGrader matches the answer against an RE2 pattern. A pattern with
// placeholders is compiled per cell, with the row's values quoted.
type regexGrader struct {
	pattern string
	re      *regexp.Regexp // nil when the pattern has placeholders
	fold    bool
	negate  bool
}

func parseRegex(s Spec, fe field.Errors) Grader {
	g := regexGrader{pattern: s.Pattern, fold: s.IgnoreCase, negate: s.MustNotMatch}
	switch {
	case s.Pattern == "":
		fe.Add("pattern", "Give the regular expression the answer must match.")
		return g
	case utf8.RuneCountInString(s.Pattern) > MaxPatternLen:
		fe.Add("pattern", fmt.Sprintf("The pattern is at most %d characters.", MaxPatternLen))
		return g
	}
	// A placeholder stands for text: check the syntax with a plain word in
	// its place.
	probe := placeholder.ReplaceAllString(s.Pattern, "x")
	re, err := g.compile(probe)
	if err != nil {
		fe.Add("pattern", "Not a regular expression Knobs can run (Go RE2 syntax, no lookaround or backreferences): "+strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		return g
	}
	if probe == s.Pattern {
		g.re = re
	}
	return g
}

func (g regexGrader) compile(p string) (*regexp.Regexp, error) {
	if g.fold {
		p = "(?i)" + p
	}
	return regexp.Compile(p)
}

func (g regexGrader) Grade(in Input) (Grade, error) {
	re := g.re
	if re == nil {
		p, err := fill(g.pattern, in, regexp.QuoteMeta)
		if err != nil {
			return Grade{}, err
		}
		if re, err = g.compile(p); err != nil {
			return Grade{}, fmt.Errorf("the pattern with the row's values filled in does not compile: %v", err)
		}
	}
	shown := "/" + clip(g.pattern, 60) + "/"
	loc := re.FindStringIndex(in.Output)
	switch {
	case loc == nil && g.negate:
		return passFail(true, "does not match "+shown), nil
	case loc == nil:
		return passFail(false, "does not match "+shown), nil
	case g.negate:
		return passFail(false, fmt.Sprintf("matches %s at %s, which it must not", shown, quoted(in.Output[loc[0]:loc[1]]))), nil
	}
	return passFail(true, fmt.Sprintf("matches %s at %s", shown, quoted(in.Output[loc[0]:loc[1]]))), nil
}

// lengthGrader bounds the answer's length in characters or words.
type lengthGrader struct {
	min, max *int
	words    bool
}

func parseLength(s Spec, fe field.Errors) Grader {
	g := lengthGrader{min: s.Min, max: s.Max}
	switch s.Unit {
	case "", "chars":
	case "words":
		g.words = true
	default:
		fe.Add("unit", fmt.Sprintf(`unit is "chars" or "words", not %q.`, s.Unit))
	}
	switch {
	case s.Min == nil && s.Max == nil:
		fe.Add("max", "Give min, max or both.")
	case s.Min != nil && *s.Min < 0:
		fe.Add("min", "min cannot be negative.")
	case s.Max != nil && *s.Max < 0:
		fe.Add("max", "max cannot be negative.")
	case s.Min != nil && s.Max != nil && *s.Min > *s.Max:
		fe.Add("max", fmt.Sprintf("max (%d) is below min (%d).", *s.Max, *s.Min))
	}
	return g
}

func (g lengthGrader) Grade(in Input) (Grade, error) {
	n, unit := utf8.RuneCountInString(in.Output), "characters"
	if g.words {
		n, unit = len(strings.Fields(in.Output)), "words"
	}
	switch {
	case g.min != nil && n < *g.min:
		return passFail(false, fmt.Sprintf("%d %s, under the minimum of %d", n, unit, *g.min)), nil
	case g.max != nil && n > *g.max:
		return passFail(false, fmt.Sprintf("%d %s, over the maximum of %d", n, unit, *g.max)), nil
	case g.min != nil && g.max != nil:
		return passFail(true, fmt.Sprintf("%d %s, within %d to %d", n, unit, *g.min, *g.max)), nil
	case g.min != nil:
		return passFail(true, fmt.Sprintf("%d %s, at least %d", n, unit, *g.min)), nil
	}
	return passFail(true, fmt.Sprintf("%d %s, at most %d", n, unit, *g.max)), nil
}

// latencyGrader bounds the run's duration.
type latencyGrader struct{ max float64 }

func parseLatency(s Spec, fe field.Errors) Grader {
	if s.MaxMs == nil || *s.MaxMs <= 0 {
		fe.Add("max_ms", "Give max_ms, the longest a run may take in milliseconds, above 0.")
		return nil
	}
	return latencyGrader{max: *s.MaxMs}
}

func (g latencyGrader) Grade(in Input) (Grade, error) {
	if in.LatencyMs > g.max {
		return passFail(false, fmt.Sprintf("took %.0f ms, over the %g ms bound", in.LatencyMs, g.max)), nil
	}
	return passFail(true, fmt.Sprintf("took %.0f ms, within %g ms", in.LatencyMs, g.max)), nil
}

// costGrader bounds the run's cost.
type costGrader struct{ max float64 }

func parseCost(s Spec, fe field.Errors) Grader {
	if s.MaxUSD == nil || *s.MaxUSD < 0 {
		fe.Add("max_usd", "Give max_usd, the most a run may cost in US dollars, 0 or more.")
		return nil
	}
	return costGrader{max: *s.MaxUSD}
}

func (g costGrader) Grade(in Input) (Grade, error) {
	if !in.CostKnown {
		return Grade{}, fmt.Errorf("the cost of this run is not known (Knobs has no price for its model), so the cost bound cannot be checked")
	}
	if in.CostUSD > g.max {
		return passFail(false, fmt.Sprintf("cost $%s, over the $%s bound", dollars(in.CostUSD), dollars(g.max))), nil
	}
	return passFail(true, fmt.Sprintf("cost $%s, within $%s", dollars(in.CostUSD), dollars(g.max))), nil
}

// dollars writes an amount with enough digits for a fraction of a cent.
func dollars(v float64) string {
	s := fmt.Sprintf("%.6f", v)
	s = strings.TrimRight(s, "0")
	if strings.HasSuffix(s, ".") {
		s += "00"
	} else if i := strings.IndexByte(s, '.'); len(s)-i == 2 {
		s += "0"
	}
	return s
}
