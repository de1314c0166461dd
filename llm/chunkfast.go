package llm

import (
	"bytes"
	"unicode/utf8"
)

// The fast path of chunk decoding.
//
// Almost every chunk of a stream is a text delta:
//
//	{"id":"…","choices":[{"delta":{"content":" tok"},"index":0}],"created":…,"model":"…","object":"chat.completion.chunk"}
//
// Decoding it with json v2 costs a few microseconds and three allocations,
// the largest part of what relaying a token costs (BENCHMARKS.md, demand
// 1). fastChunk decodes exactly that shape with a hand-written scanner and
// says "not mine" for anything else, which then goes to the full decoder.
//
// The rule that keeps it correct: the fast path accepts a chunk only when
// json v2 would decode it without any error, and then fills the Chunk
// exactly as json v2 would. json v2 (default options) is strict: names
// match case-sensitively, a duplicate name is an error, so is invalid UTF-8
// or an unpaired surrogate escape, and unknown members are skipped. So the
// fast path gives up on:
//
//   - any name with an escape (it might spell a known name);
//   - any duplicate name it cannot rule out, at any depth;
//   - any string it would have to repair (control characters, invalid
//     UTF-8, bad or unpaired escapes);
//   - any known field of a type or value it does not handle: tool calls,
//     logprobs, usage, timings, errors, token lists, a message, a negative
//     or non-integer index. These are null or absent in a text delta; a
//     chunk that has them goes the full way, where they are rare.
//
// Unknown members are skipped only after validating their whole value the
// way json v2 does. Since an accepted chunk is one json v2 accepts,
// encoding/json (the second chance of the full path) never comes into
// play for it. TestChunkFastPathMatchesFull and FuzzChunkFastPath check
// that the two paths agree.

// fastChunk holds what the fast path reuses from chunk to chunk. Nothing
// of the Chunk it fills outlives Stream.add, which copies the strings it
// keeps, so the choice and delta buffers can be reused.
type fastChunk struct {
	choices []ChunkChoice
	deltas  []ChunkDelta
	// Strings that repeat in every chunk (id, model, ...), kept so that
	// the same bytes do not allocate a new string per chunk.
	interned [internSlots]string
	buf      []byte // unescaping scratch
}

// Slots of fastChunk.interned; noIntern for text that changes per chunk.
const (
	internID = iota
	internObject
	internModel
	internFingerprint
	internTier
	internRole
	internFinish
	internSlots
	noIntern = -1
)

// Bounds past which the fast path gives up rather than do more work for
// a chunk that is surely not a plain text delta.
const (
	fastMaxDepth   = 32 // nesting inside an unknown member's value
	fastMaxMembers = 16 // unknown members of one object (duplicate check)
	fastMaxDigits  = 18 // an integer that fits int64 without checking
)

// decode fills c from data when data is a chunk the fast path handles with
// certainty, and reports whether it did. When it returns false, c holds
// garbage and must be reset before any other decoding.
func (f *fastChunk) decode(data []byte, c *Chunk) bool {
	*c = Chunk{}
	sc := scanner{b: data, f: f}
	if !sc.chunk(c) {
		return false
	}
	sc.ws()
	return sc.i == len(sc.b)
}

// scanner reads one JSON text; every method reports false to give up.
type scanner struct {
	b []byte
	i int
	f *fastChunk
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// consume skips whitespace and then c, if that is the next byte.
func (s *scanner) consume(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

// literal consumes the literal lit (null, true, false).
func (s *scanner) literal(lit string) bool {
	if s.peek() == 0 || !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return false
	}
	s.i += len(lit)
	return true
}

// object walks the members of an object, calling member with each name
// (the raw bytes between the quotes) after its colon; member consumes the
// value. It gives up on names with escapes, which might spell a known
// name. Duplicate names are member's to catch: known ones with the
// callers' bit sets (once), unknown ones with unknown.
func (s *scanner) object(member func(name []byte) bool) bool {
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	for {
		if s.peek() != '"' {
			return false
		}
		name, ok := s.plainName()
		if !ok || !s.consume(':') {
			return false
		}
		s.ws()
		if !member(name) {
			return false
		}
		if s.consume(',') {
			continue
		}
		return s.consume('}')
	}
}

// plainName reads a member name without escapes, as valid UTF-8.
func (s *scanner) plainName() ([]byte, bool) {
	raw, simple, ok := s.rawString()
	if !ok || !simple {
		return nil, false
	}
	return raw, true
}

// rawString reads a string and returns its bytes between the quotes,
// whether they hold no escape, and whether the string is valid for json
// v2: no control characters, valid UTF-8, only valid escapes, every
// surrogate escape paired.
func (s *scanner) rawString() (raw []byte, simple, ok bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, false
	}
	start := s.i + 1
	i := start
	ascii := true
	simple = true
	for {
		if i >= len(s.b) {
			return nil, false, false
		}
		c := s.b[i]
		switch {
		case c == '"':
			raw = s.b[start:i]
			s.i = i + 1
			if !ascii && !utf8.Valid(raw) {
				return nil, false, false
			}
			return raw, simple, true
		case c < 0x20:
			return nil, false, false
		case c == '\\':
			simple = false
			n := escapeLen(s.b[i:])
			if n == 0 {
				return nil, false, false
			}
			i += n
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			i++
		}
	}
}

// escapeLen returns the length of the valid escape at the start of b
// (including a \uD8xx\uDCxx pair as one), or 0 if it is not one json v2
// takes without repair.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		r, ok := hex4(b[2:])
		if !ok {
			return 0
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return 0 // a low surrogate alone
		case r >= 0xD800 && r <= 0xDBFF:
			if len(b) < 12 || b[6] != '\\' || b[7] != 'u' {
				return 0
			}
			lo, ok := hex4(b[8:])
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return 0
			}
			return 12
		}
		return 6
	}
	return 0
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// unescape decodes the body of a string rawString validated.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			j := bytes.IndexByte(raw[i:], '\\')
			if j < 0 {
				return append(dst, raw[i:]...)
			}
			dst = append(dst, raw[i:i+j]...)
			i += j
			continue
		}
		switch raw[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(raw[i+2:])
			if r >= 0xD800 && r <= 0xDBFF {
				lo, _ := hex4(raw[i+8:])
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			i += 6
			continue
		default: // " \ /
			dst = append(dst, raw[i+1])
		}
		i += 2
	}
	return dst
}

// str reads a string or null (which json v2 leaves as "") for a string
// field. slot names the interned string to reuse when the bytes repeat.
func (s *scanner) str(slot int) (string, bool) {
	if s.b[s.i] == 'n' {
		return "", s.literal("null")
	}
	raw, simple, ok := s.rawString()
	if !ok {
		return "", false
	}
	if !simple {
		s.f.buf = unescape(s.f.buf[:0], raw)
		raw = s.f.buf
	}
	if slot == noIntern {
		return string(raw), true
	}
	if p := &s.f.interned[slot]; *p != string(raw) {
		*p = string(raw)
	}
	return s.f.interned[slot], true
}

// uint reads a non-negative integer without fraction or exponent, or null
// (zero). Anything else (a negative number, 1.0, 1e3, a huge number) is
// left to the full decoder, which knows how json v2 takes it.
func (s *scanner) uint() (int64, bool) {
	if s.b[s.i] == 'n' {
		return 0, s.literal("null")
	}
	start := s.i
	if s.b[s.i] == '0' {
		s.i++
	} else {
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
	}
	n := s.i - start
	if n == 0 || n > fastMaxDigits {
		return 0, false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return 0, false // a fraction, an exponent or a leading zero
		}
	}
	var v int64
	for _, c := range s.b[start:s.i] {
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// unknown skips the value of a member the Chunk has no field for, after
// checking that its name was not seen before in this object.
func (s *scanner) unknown(seen *[fastMaxMembers][]byte, n *int, name []byte) bool {
	for _, prev := range seen[:*n] {
		if bytes.Equal(prev, name) {
			return false
		}
	}
	if *n == fastMaxMembers {
		return false
	}
	seen[*n] = name
	*n++
	return s.skip(0)
}

// skip validates and skips any JSON value, as strictly as json v2.
func (s *scanner) skip(depth int) bool {
	if depth > fastMaxDepth {
		return false
	}
	switch s.peek() {
	case '"':
		_, _, ok := s.rawString()
		return ok
	case 'n':
		return s.literal("null")
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case '[':
		s.i++
		if s.consume(']') {
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			if s.consume(',') {
				continue
			}
			return s.consume(']')
		}
	case '{':
		var seen [fastMaxMembers][]byte
		n := 0
		return s.object(func(name []byte) bool {
			return s.unknown(&seen, &n, name)
		})
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return s.number()
	}
	return false
}

// number skips a number of the JSON grammar.
func (s *scanner) number() bool {
	b, i := s.b, s.i
	digits := func() int {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	// A number must end at a delimiter: "0123" or "1x" is not one.
	if i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r', ',', ']', '}':
		default:
			return false
		}
	}
	s.i = i
	return true
}

// once marks bit in seen and reports whether it was clear: a known name
// seen twice is a duplicate json v2 rejects.
func once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// chunk reads the top-level object.
func (s *scanner) chunk(c *Chunk) bool {
	var seen uint32
	var other [fastMaxMembers][]byte
	nOther := 0
	return s.object(func(name []byte) bool {
		if s.i >= len(s.b) {
			return false
		}
		var ok bool
		switch string(name) {
		case "id":
			if !once(&seen, 1<<0) {
				return false
			}
			c.ID, ok = s.str(internID)
		case "object":
			if !once(&seen, 1<<1) {
				return false
			}
			c.Object, ok = s.str(internObject)
		case "created":
			if !once(&seen, 1<<2) {
				return false
			}
			c.Created, ok = s.uint()
		case "model":
			if !once(&seen, 1<<3) {
				return false
			}
			c.Model, ok = s.str(internModel)
		case "system_fingerprint":
			if !once(&seen, 1<<4) {
				return false
			}
			c.SystemFingerprint, ok = s.str(internFingerprint)
		case "service_tier":
			if !once(&seen, 1<<5) {
				return false
			}
			c.ServiceTier, ok = s.str(internTier)
		case "choices":
			if !once(&seen, 1<<6) {
				return false
			}
			ok = s.choices(c)
		// A text delta has these null or not at all. A duplicate null
		// changes nothing in the result but is an error to json v2.
		case "usage":
			ok = once(&seen, 1<<7) && s.literal("null")
		case "time_info":
			ok = once(&seen, 1<<8) && s.literal("null")
		case "timings":
			ok = once(&seen, 1<<9) && s.literal("null")
		case "error", "status_code":
			return false // an error chunk: the full path words it
		default:
			ok = s.unknown(&other, &nOther, name)
		}
		return ok
	})
}

// choices reads the choices array into the reused buffer.
func (s *scanner) choices(c *Chunk) bool {
	if s.b[s.i] == 'n' {
		return s.literal("null") // json v2 leaves Choices nil
	}
	if !s.consume('[') {
		return false
	}
	f := s.f
	if f.choices == nil {
		// json v2 decodes [] into an empty, non-nil slice; add treats
		// both alike, but the Chunk should be the same anyway.
		f.choices = make([]ChunkChoice, 0, 1)
	}
	out := f.choices[:0]
	if !s.consume(']') {
		for {
			if s.peek() != '{' {
				return false // a null or odd element: not a text delta
			}
			k := len(out)
			if k == cap(out) {
				out = append(out, ChunkChoice{})
			} else {
				out = out[:k+1]
				out[k] = ChunkChoice{}
			}
			if !s.choice(&out[k], k) {
				f.choices = out[:0]
				return false
			}
			if s.consume(',') {
				continue
			}
			if !s.consume(']') {
				f.choices = out[:0]
				return false
			}
			break
		}
	}
	f.choices = out[:0]
	c.Choices = out
	return true
}

// choice reads one choice object; k is its position, which picks its
// reused delta.
func (s *scanner) choice(ch *ChunkChoice, k int) bool {
	var seen uint32
	var other [fastMaxMembers][]byte
	nOther := 0
	return s.object(func(name []byte) bool {
		if s.i >= len(s.b) {
			return false
		}
		var ok bool
		switch string(name) {
		case "index":
			if !once(&seen, 1<<0) {
				return false
			}
			var v int64
			v, ok = s.uint()
			// Beyond maxChoices, add fails the stream: let the full
			// path get there with its own value.
			if ok && v >= maxChoices {
				return false
			}
			ch.Index = int(v)
		case "delta":
			if !once(&seen, 1<<1) {
				return false
			}
			ok = s.delta(ch, k)
		case "text":
			if !once(&seen, 1<<2) {
				return false
			}
			ch.Text, ok = s.str(noIntern)
		case "finish_reason":
			if !once(&seen, 1<<3) {
				return false
			}
			ch.FinishReason, ok = s.str(internFinish)
		case "logprobs":
			ok = once(&seen, 1<<4) && s.literal("null")
		case "reasoning_logprobs":
			ok = once(&seen, 1<<5) && s.literal("null")
		case "tokens":
			ok = once(&seen, 1<<6) && s.literal("null")
		case "message":
			return false // a whole answer, not a delta
		default:
			ok = s.unknown(&other, &nOther, name)
		}
		return ok
	})
}

// delta reads a choice's delta, null or an object of text fields.
func (s *scanner) delta(ch *ChunkChoice, k int) bool {
	if s.b[s.i] == 'n' {
		return s.literal("null")
	}
	f := s.f
	for len(f.deltas) <= k {
		f.deltas = append(f.deltas, ChunkDelta{})
	}
	d := &f.deltas[k]
	*d = ChunkDelta{}
	var seen uint32
	var other [fastMaxMembers][]byte
	nOther := 0
	ok := s.object(func(name []byte) bool {
		if s.i >= len(s.b) {
			return false
		}
		var ok bool
		switch string(name) {
		case "role":
			if !once(&seen, 1<<0) {
				return false
			}
			d.Role, ok = s.str(internRole)
		case "content":
			if !once(&seen, 1<<1) {
				return false
			}
			d.Content, ok = s.str(noIntern)
		case "reasoning":
			if !once(&seen, 1<<2) {
				return false
			}
			d.Reasoning, ok = s.str(noIntern)
		case "reasoning_content":
			if !once(&seen, 1<<3) {
				return false
			}
			d.ReasoningContent, ok = s.str(noIntern)
		case "refusal":
			if !once(&seen, 1<<4) {
				return false
			}
			d.Refusal, ok = s.str(noIntern)
		case "tool_calls":
			ok = once(&seen, 1<<5) && s.literal("null")
		case "tokens":
			ok = once(&seen, 1<<6) && s.literal("null")
		case "function_call":
			ok = once(&seen, 1<<7) && s.literal("null")
		default:
			ok = s.unknown(&other, &nOther, name)
		}
		return ok
	})
	if ok {
		ch.Delta = d
	}
	return ok
}
