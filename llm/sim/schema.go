package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"knobs/ordered"
)

// instance writes a JSON value that satisfies a JSON Schema: it walks the
// schema (types, properties and required, items and array bounds, enum,
// const, string formats and patterns, number ranges, anyOf/oneOf/allOf,
// $ref into $defs) and fills strings from the prompt's key words.
//
// The schema comes from a user, so the walk is bounded three ways: by
// depth, by how often one $ref is followed inside itself, and by room, the
// bytes the value may take before max_tokens would cut it anyway. Past a
// bound the generator writes the simplest value of the schema's type and
// notes that it cut the value short.
type instance struct {
	s     *sampler
	root  any
	words []string
	room  int            // bytes left to write; at 0 or below, only simplest values
	refs  map[string]int // the $refs being followed now, with how deep each
	cut   bool           // a bound made the value smaller than the schema asks
}

// newInstance returns a generator for schema with room for about limit
// tokens.
func newInstance(s *sampler, schema any, words []string, limit int) *instance {
	return &instance{s: s, root: schema, words: words, room: roomFor(limit), refs: map[string]int{}}
}

// roomFor is the bytes a value of limit tokens may take while it is built:
// generously more than limit tokens of indented JSON hold, so that what
// max_tokens then cuts reads the same as if the whole value had been
// built, and little enough that a schema asking for millions of items
// builds kilobytes, not gigabytes.
func roomFor(limit int) int { return 16*max(limit, 1) + 1024 }

// maxDepth bounds recursion through self-referencing schemas; from
// shallowDepth on only what the schema requires is written. maxRefDepth is
// how often one $ref is followed inside itself; maxRefHops how long a chain
// of $refs to $refs deref follows.
const (
	maxDepth     = 24
	shallowDepth = 5
	maxRefDepth  = 3
	maxRefHops   = 8
)

func (g *instance) value(s any, depth int, name string) any {
	if depth > maxDepth {
		g.cut = true
		return nil
	}
	m, ok := s.(*ordered.Object)
	if !ok {
		return g.spend(g.word()) // true or {}: anything goes
	}
	if ref, ok := m.Get("$ref"); ok {
		if r, ok := g.resolve(ref); ok {
			merged := merge(without(m, "$ref"), r)
			key, _ := ref.(string)
			if g.room <= 0 || g.refs[key] >= maxRefDepth {
				g.cut = true
				return g.simplest(merged)
			}
			g.refs[key]++
			defer func() { g.refs[key]-- }()
			return g.value(merged, depth+1, name)
		}
	}
	if g.room <= 0 {
		g.cut = true
		return g.simplest(m)
	}
	if c, ok := m.Get("const"); ok {
		return g.spend(c)
	}
	if e, ok := m.Get("enum"); ok {
		if vals, ok := e.([]any); ok && len(vals) > 0 {
			i, _ := g.s.pick(len(vals), nil)
			return g.spend(vals[i])
		}
	}
	if all, ok := m.Get("allOf"); ok {
		var merged any = without(m, "allOf")
		for _, sub := range asList(all) {
			merged = merge(merged, g.deref(sub))
		}
		return g.value(merged, depth+1, name)
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		if branches := asList(m.Vals[key]); len(branches) > 0 {
			i, _ := g.s.pick(len(branches), func(i int) bool {
				return typeName(g.deref(branches[i])) == "null" // a value says more than null
			})
			return g.value(merge(without(m, key), g.deref(branches[i])), depth+1, name)
		}
	}
	switch typeName(m) {
	case "object":
		return g.object(m, depth, name)
	case "array":
		return g.array(m, depth, name)
	case "integer":
		return g.spend(g.number(m, name, true))
	case "number":
		return g.spend(g.number(m, name, false))
	case "boolean":
		i, _ := g.s.pick(2, nil)
		return g.spend(i == 0)
	case "null":
		return g.spend(nil)
	}
	return g.spend(g.str(m, name))
}

// spend takes the bytes of scalar v from the room left and returns v.
func (g *instance) spend(v any) any {
	switch x := v.(type) {
	case string:
		g.room -= len(x) + 2
	case json.Number:
		g.room -= len(x)
	default:
		g.room -= 5 // null, true, false; or a const or enum value, counted small
	}
	return v
}

// simplest is the smallest value of the type schema s asks for, written
// when a bound stops the walk: it may not satisfy s, as an answer cut by
// max_tokens would not either.
func (g *instance) simplest(s any) any {
	g.room -= 2
	m, ok := s.(*ordered.Object)
	if !ok {
		return nil
	}
	if c, ok := m.Get("const"); ok {
		return c
	}
	if vals := asList(m.Vals["enum"]); len(vals) > 0 {
		return vals[0]
	}
	switch typeName(m) {
	case "object":
		return ordered.NewObject()
	case "array":
		return []any{}
	case "integer", "number":
		return json.Number("0")
	case "boolean":
		return false
	case "string":
		return ""
	}
	return nil
}

func (g *instance) object(m *ordered.Object, depth int, name string) any {
	out := ordered.NewObject()
	props, _ := m.Vals["properties"].(*ordered.Object)
	required := map[string]bool{}
	for _, r := range asList(m.Vals["required"]) {
		if k, ok := r.(string); ok {
			required[k] = true
		}
	}
	maxProps := intKeyword(m, "maxProperties", math.MaxInt)
	g.room -= 2
	if props != nil {
		for _, k := range props.Keys {
			if !required[k] && (depth >= shallowDepth || len(out.Keys) >= maxProps || g.room <= 0 || !g.s.chance(0.8)) {
				continue
			}
			g.room -= len(k) + 4
			out.Set(k, g.value(props.Vals[k], depth+1, k))
		}
	}
	extra, _ := m.Get("additionalProperties")
	for _, r := range asList(m.Vals["required"]) {
		if k, ok := r.(string); ok {
			if _, done := out.Get(k); !done {
				g.room -= len(k) + 4
				out.Set(k, g.value(extra, depth+1, k))
			}
		}
	}
	if deps, ok := m.Vals["dependentRequired"].(*ordered.Object); ok {
		for _, k := range append([]string(nil), out.Keys...) {
			for _, d := range asList(deps.Vals[k]) {
				if dk, ok := d.(string); ok {
					if _, done := out.Get(dk); !done {
						sub, _ := props.Get(dk)
						g.room -= len(dk) + 4
						out.Set(dk, g.value(sub, depth+1, dk))
					}
				}
			}
		}
	}
	for minProps := intKeyword(m, "minProperties", 0); len(out.Keys) < minProps; {
		if g.room <= 0 {
			g.cut = true // a real model runs out of tokens here too
			break
		}
		added := false
		if props != nil {
			for _, k := range props.Keys {
				if _, done := out.Get(k); !done {
					g.room -= len(k) + 4
					out.Set(k, g.value(props.Vals[k], depth+1, k))
					added = true
					break
				}
			}
		}
		if !added {
			if extra == false {
				break
			}
			k := fmt.Sprintf("extra_%d", len(out.Keys)+1)
			g.room -= len(k) + 4
			out.Set(k, g.value(extra, depth+1, k))
		}
	}
	return out
}

func (g *instance) array(m *ordered.Object, depth int, name string) any {
	lo := intKeyword(m, "minItems", 0)
	hi := intKeyword(m, "maxItems", math.MaxInt)
	n := lo
	if depth < shallowDepth {
		n = max(lo, g.s.between(1, 3))
	}
	n = min(n, hi)
	prefix := asList(m.Vals["prefixItems"])
	items, _ := m.Get("items")
	if tuple, ok := items.([]any); ok { // draft 2019-09 and earlier
		prefix = tuple
		items, _ = m.Get("additionalItems")
	}
	if items == false {
		n = min(n, len(prefix))
	}
	unique := m.Vals["uniqueItems"] == true
	out := []any{}
	seen := map[string]bool{}
	g.room -= 2
	for i := 0; len(out) < n && i < n+8; i++ {
		if g.room <= 0 {
			g.cut = true // minItems in the millions: as many as max_tokens lets out
			break
		}
		g.room -= 2
		sub := items
		if len(out) < len(prefix) {
			sub = prefix[len(out)]
		}
		v := g.value(sub, depth+1, singular(name))
		if unique {
			b, _ := json.Marshal(v)
			if str, ok := v.(string); ok && seen[string(b)] {
				// Greedy choices repeat themselves: number the repeats.
				v = numbered(str, len(out)+1, sub)
				b, _ = json.Marshal(v)
			}
			if seen[string(b)] {
				continue
			}
			seen[string(b)] = true
		}
		out = append(out, v)
	}
	if c, ok := m.Get("contains"); ok {
		need := max(1, intKeyword(m, "minContains", 1))
		for i := range need {
			if g.room <= 0 {
				g.cut = true
				break
			}
			v := g.value(c, depth+1, singular(name))
			if i < len(out) {
				out[i] = v
			} else {
				out = append(out, v)
			}
		}
	}
	return out
}

// numbered makes s distinct by ending it with k, within the item's
// maxLength.
func numbered(s string, k int, item any) string {
	suffix := " " + strconv.Itoa(k)
	limit := math.MaxInt
	if m, ok := item.(*ordered.Object); ok {
		limit = intKeyword(m, "maxLength", math.MaxInt)
	}
	r := []rune(s)
	if len(r)+len(suffix) > limit {
		r = r[:max(0, limit-len(suffix))]
	}
	return string(r) + suffix
}

func (g *instance) number(m *ordered.Object, name string, integer bool) any {
	lo, hi := math.Inf(-1), math.Inf(1)
	if v, ok := num(m.Vals["minimum"]); ok {
		lo = v
	}
	if v, ok := num(m.Vals["maximum"]); ok {
		hi = v
	}
	// Exclusive bounds are numbers since draft 6 and flags in draft 4.
	step := 0.01
	if integer {
		step = 1
	}
	if v, ok := num(m.Vals["exclusiveMinimum"]); ok {
		lo = math.Max(lo, v+step)
	} else if m.Vals["exclusiveMinimum"] == true {
		lo += step
	}
	if v, ok := num(m.Vals["exclusiveMaximum"]); ok {
		hi = math.Min(hi, v-step)
	} else if m.Vals["exclusiveMaximum"] == true {
		hi -= step
	}
	dlo, dhi := numberHint(name)
	switch {
	case math.IsInf(lo, -1) && math.IsInf(hi, 1):
		lo, hi = dlo, dhi
	case math.IsInf(lo, -1) && dlo <= hi:
		lo = dlo
	case math.IsInf(lo, -1):
		lo = hi - (dhi - dlo)
	case math.IsInf(hi, 1) && dhi >= lo:
		hi = dhi
	case math.IsInf(hi, 1):
		hi = lo + (dhi - dlo)
	}
	if integer {
		lo, hi = math.Ceil(lo), math.Floor(hi)
	}
	u := g.s.rng.Float64()
	if g.s.temp <= 0 {
		u = 0.5
	}
	v := lo + u*(hi-lo)
	if mult, ok := num(m.Vals["multipleOf"]); ok && mult > 0 {
		k := math.Round(v / mult)
		if k*mult < lo {
			k = math.Ceil(lo / mult)
		}
		if k*mult > hi {
			k = math.Floor(hi / mult)
		}
		// Written with mult's own decimals, so the value is an exact multiple.
		dec := decimals(m.Vals["multipleOf"])
		return json.Number(strconv.FormatFloat(k*mult, 'f', dec, 64))
	}
	if integer {
		return json.Number(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	}
	r := math.Round(v*100) / 100
	if r < lo || r > hi {
		r = v
	}
	return json.Number(strconv.FormatFloat(r, 'f', -1, 64))
}

// numberHint is a plausible range for a number named name.
func numberHint(name string) (float64, float64) {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "age"):
		return 18, 80
	case strings.Contains(n, "year"):
		return 1990, 2026
	case strings.Contains(n, "rating") || strings.Contains(n, "score") || strings.Contains(n, "stars"):
		return 1, 5
	case strings.Contains(n, "count") || strings.Contains(n, "quantity") || strings.Contains(n, "limit") || strings.HasPrefix(n, "num"):
		return 1, 10
	case strings.Contains(n, "lat"):
		return -60, 60
	case strings.Contains(n, "lon") || strings.Contains(n, "lng"):
		return -150, 150
	case strings.Contains(n, "temp"):
		return -5, 35
	case strings.Contains(n, "percent") || strings.Contains(n, "probability") || strings.Contains(n, "confidence"):
		return 0, 1
	}
	return 1, 100
}

func (g *instance) str(m *ordered.Object, name string) any {
	minLen := intKeyword(m, "minLength", 0)
	maxLen := intKeyword(m, "maxLength", math.MaxInt)
	if f, ok := m.Vals["format"].(string); ok {
		if v, ok := g.format(f); ok {
			return v
		}
	}
	if p, ok := m.Vals["pattern"].(string); ok {
		if re, err := regexp.Compile(p); err == nil {
			for range 20 {
				v, ok := g.fromRegexp(p)
				if n := utf8.RuneCountInString(v); ok && re.MatchString(v) && n >= minLen && n <= maxLen {
					return v
				}
			}
		}
	}
	v := g.named(name)
	if n := utf8.RuneCountInString(v); n < minLen {
		// Words up to minLength, or up to the room left: a minLength in the
		// millions is cut as max_tokens would cut it.
		var b strings.Builder
		b.WriteString(v)
		for ; n < minLen; n += utf8.RuneCountInString(v) + 1 {
			if b.Len() >= g.room {
				g.cut = true
				break
			}
			v = g.word()
			b.WriteString(" " + v)
		}
		v = b.String()
	}
	if utf8.RuneCountInString(v) > maxLen {
		v = string([]rune(v)[:maxLen])
	}
	return v
}

// named is a string fit for a property called name.
func (g *instance) named(name string) string {
	n := strings.ToLower(name)
	has := func(parts ...string) bool {
		for _, p := range parts {
			if strings.Contains(n, p) {
				return true
			}
		}
		return false
	}
	switch {
	case n == "id" || strings.HasSuffix(n, "_id") || strings.HasSuffix(name, "Id"):
		return fmt.Sprintf("sim-%06x", g.s.rng.IntN(1<<24))
	case has("email"):
		return slug(g.word()) + "@example.com"
	case has("url", "link", "website", "homepage"):
		return "https://example.com/" + slug(g.word())
	case has("date"):
		v, _ := g.format("date")
		return v
	case has("city", "location", "place", "town", "where"):
		return g.proper(cities)
	case has("country"):
		return g.proper(countries)
	case has("lang"):
		return g.pickOf(languages)
	case has("color", "colour"):
		return g.pickOf(colors)
	case has("description", "summary", "reason", "explanation", "text", "content", "message", "comment", "answer", "note", "body"):
		return fmt.Sprintf("Generated by the Knobs simulator about %s.", g.word())
	case has("name", "title", "label", "topic", "subject"):
		return capitalize(g.word())
	}
	return g.word()
}

var (
	cities    = []string{"Lisbon", "Paris", "Nairobi", "Osaka", "Toronto", "Santiago", "Oslo", "Melbourne"}
	countries = []string{"Portugal", "France", "Kenya", "Japan", "Canada", "Chile", "Norway", "Australia"}
	languages = []string{"English", "French", "Portuguese", "Japanese", "Spanish"}
	colors    = []string{"blue", "green", "red", "orange", "purple"}
)

// proper prefers a capitalised key word of the prompt (a name the user
// gave) over the stock list.
func (g *instance) proper(stock []string) string {
	for _, w := range g.words {
		if r, _ := utf8.DecodeRuneInString(w); r >= 'A' && r <= 'Z' && !strings.Contains(w, " ") {
			return w
		}
	}
	return g.pickOf(stock)
}

func (g *instance) pickOf(list []string) string {
	i, _ := g.s.pick(len(list), nil)
	return list[i]
}

func (g *instance) word() string { return g.pickOf(g.words) }

func (g *instance) format(f string) (string, bool) {
	r := g.s.rng
	w := slug(g.word())
	switch f {
	case "date-time":
		return fmt.Sprintf("2026-%02d-%02dT%02d:%02d:%02dZ", 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60)), true
	case "date":
		return fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28)), true
	case "time":
		return fmt.Sprintf("%02d:%02d:%02dZ", r.IntN(24), r.IntN(60), r.IntN(60)), true
	case "duration":
		return fmt.Sprintf("PT%dM", 1+r.IntN(90)), true
	case "email", "idn-email":
		return w + "@example.com", true
	case "hostname", "idn-hostname":
		return w + ".example.com", true
	case "ipv4":
		return fmt.Sprintf("192.0.2.%d", 1+r.IntN(254)), true
	case "ipv6":
		return fmt.Sprintf("2001:db8::%x", 1+r.IntN(0xfffe)), true
	case "uri", "iri", "url":
		return "https://example.com/" + w, true
	case "uri-reference", "iri-reference":
		return "/docs/" + w, true
	case "uri-template":
		return "https://example.com/{id}", true
	case "uuid":
		b := make([]byte, 16)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]), true
	case "json-pointer":
		return "/" + w, true
	case "relative-json-pointer":
		return "0/" + w, true
	case "regex":
		return "^[a-z]+$", true
	}
	return "", false
}

// fromRegexp writes a string that the regular expression matches.
func (g *instance) fromRegexp(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	ok := g.writeRegexp(&b, re.Simplify())
	return b.String(), ok
}

func (g *instance) writeRegexp(b *strings.Builder, re *syntax.Regexp) bool {
	r := g.s.rng
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return false
		}
		// Prefer printable ASCII ranges: negated classes cover control runes too.
		var ranges [][2]rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= '~' && hi >= ' ' {
				ranges = append(ranges, [2]rune{max(lo, ' '), min(hi, '~')})
			}
		}
		if len(ranges) == 0 {
			ranges = append(ranges, [2]rune{re.Rune[0], re.Rune[1]})
		}
		rg := ranges[r.IntN(len(ranges))]
		b.WriteRune(rg[0] + rune(r.IntN(int(rg[1]-rg[0])+1)))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte(byte('a' + r.IntN(26)))
	case syntax.OpCapture:
		return g.writeRegexp(b, re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !g.writeRegexp(b, sub) {
				return false
			}
		}
	case syntax.OpAlternate:
		return g.writeRegexp(b, re.Sub[r.IntN(len(re.Sub))])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 3
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + 3
			}
		}
		for range lo + r.IntN(hi-lo+1) {
			if !g.writeRegexp(b, re.Sub[0]) {
				return false
			}
		}
	case syntax.OpNoMatch:
		return false
	}
	// Anchors, boundaries and the empty match write nothing.
	return true
}

// resolve follows a local $ref ("#", "#/$defs/x", any JSON pointer).
func (g *instance) resolve(ref any) (any, bool) {
	s, ok := ref.(string)
	if !ok || !strings.HasPrefix(s, "#") {
		return nil, false
	}
	cur := g.root
	ptr := strings.TrimPrefix(s, "#")
	if ptr == "" {
		return cur, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	for _, part := range strings.Split(ptr[1:], "/") {
		if p, err := url.PathUnescape(part); err == nil {
			part = p
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case *ordered.Object:
			if cur, ok = c.Get(part); !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// deref follows s's $ref, and the $ref of what it points to, and so on
// for at most maxRefHops: a $ref that leads back to itself stops there,
// still a $ref, for value to bound.
func (g *instance) deref(s any) any {
	return g.derefHops(s, maxRefHops)
}

func (g *instance) derefHops(s any, hops int) any {
	if m, ok := s.(*ordered.Object); ok && hops > 0 {
		if ref, ok := m.Get("$ref"); ok {
			if r, ok := g.resolve(ref); ok {
				return merge(without(m, "$ref"), g.derefHops(r, hops-1))
			}
		}
	}
	return s
}

// typeName is the JSON type a schema asks for, inferred from its keywords
// when "type" is absent; with a list of types, the first that is not null.
func typeName(s any) string {
	m, ok := s.(*ordered.Object)
	if !ok {
		return ""
	}
	switch t := m.Vals["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if n, ok := x.(string); ok && n != "null" {
				return n
			}
		}
		if len(t) > 0 {
			return "null"
		}
	}
	for _, k := range []string{"properties", "required", "additionalProperties", "minProperties"} {
		if _, ok := m.Get(k); ok {
			return "object"
		}
	}
	for _, k := range []string{"items", "prefixItems", "minItems", "contains"} {
		if _, ok := m.Get(k); ok {
			return "array"
		}
	}
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
		if _, ok := m.Get(k); ok {
			return "number"
		}
	}
	return ""
}

// merge combines two schemas as allOf does: properties and required are
// joined; for other keywords the first schema's value stands.
func merge(a, b any) any {
	ma, okA := a.(*ordered.Object)
	mb, okB := b.(*ordered.Object)
	if !okB {
		return a
	}
	if !okA || len(ma.Keys) == 0 {
		return b
	}
	out := ordered.NewObject()
	for _, k := range ma.Keys {
		out.Set(k, ma.Vals[k])
	}
	for _, k := range mb.Keys {
		v := mb.Vals[k]
		cur, exists := out.Get(k)
		switch {
		case !exists:
			out.Set(k, v)
		case k == "properties":
			pa, _ := cur.(*ordered.Object)
			pb, _ := v.(*ordered.Object)
			joined := ordered.NewObject()
			for _, p := range []*ordered.Object{pa, pb} {
				if p != nil {
					for _, pk := range p.Keys {
						prev, _ := joined.Get(pk)
						joined.Set(pk, merge(prev, p.Vals[pk]))
					}
				}
			}
			out.Set(k, joined)
		case k == "required":
			out.Set(k, append(append([]any(nil), asList(cur)...), asList(v)...))
		}
	}
	return out
}

// without is m less one keyword.
func without(m *ordered.Object, key string) *ordered.Object {
	out := ordered.NewObject()
	for _, k := range m.Keys {
		if k != key {
			out.Set(k, m.Vals[k])
		}
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func num(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func intKeyword(m *ordered.Object, key string, def int) int {
	if f, ok := num(m.Vals[key]); ok {
		return int(f)
	}
	return def
}

// decimals is the number of digits after the point in a schema number.
func decimals(v any) int {
	n, _ := v.(json.Number)
	s := string(n)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, _ := strconv.Atoi(s[i+1:])
		return max(0, decimals(json.Number(s[:i]))-exp)
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// singular names an array's items after the array: "tags" -> "tag".
func singular(name string) string {
	if strings.HasSuffix(name, "ies") {
		return strings.TrimSuffix(name, "ies") + "y"
	}
	return strings.TrimSuffix(name, "s")
}

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "sim"
	}
	return out
}
