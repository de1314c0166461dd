package dataset

import (
	"bytes"
	"io"
	"unicode/utf8"
)

var (
	bom     = []byte{0xEF, 0xBB, 0xBF}
	utf16LE = []byte{0xFF, 0xFE}
	utf16BE = []byte{0xFE, 0xFF}
)

// source is what every reader reads a file through: it refuses a file
// past the size limit as soon as it has seen one byte too many, refuses
// bytes that are not UTF-8 at their line and column, drops a byte order
// mark, and, for a delimited file, follows quotes so that a quote left open
// at the end can be named where it opened (encoding/csv names only where
// the file ended). Its error is sticky: a reader that peeked meets it
// again in its place.
type source struct {
	r        io.Reader
	max      int64
	taken    int64 // bytes taken from r, the byte order mark included
	buf      []byte
	ready    []byte // checked bytes not yet handed out
	pend     []byte // the start of a rune cut by the end of a read
	err      error
	started  bool // the byte order mark is handled
	stalls   int
	line     int        // line of the next byte to check, from 1
	off      int64      // offset of the next byte to check, the mark not counted
	lineOff  int64      // offset of the first byte of the current line
	state    quoteState // lost when delim is 0: quotes are not followed
	delim    byte
	openLine int // where the quoted value now open started
	openCol  int
}

type quoteState uint8

// The states of a delimited file's quotes, as encoding/csv reads them
// with LazyQuotes off. After the first quote it would refuse, the source
// stops following: the reader reports that problem first.
const (
	atFieldStart quoteState = iota
	inBare                  // an unquoted value
	inQuotes                // a quoted value
	afterQuote              // a quote inside a quoted value: it closes or doubles
	afterQuoteCR            // a closing quote then CR: LF must follow
	lost                    // a quote encoding/csv refuses
)

func newSource(r io.Reader, max int64, delim byte) *source {
	s := &source{r: r, max: max, buf: make([]byte, 32<<10), line: 1, delim: delim}
	if delim == 0 {
		s.state = lost
	}
	return s
}

func (s *source) Read(p []byte) (int, error) {
	for len(s.ready) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.fill()
	}
	n := copy(p, s.ready)
	s.ready = s.ready[n:]
	return n, nil
}

// fill reads once from r and checks what came.
func (s *source) fill() {
	k := copy(s.buf, s.pend)
	m, err := s.r.Read(s.buf[k:])
	s.taken += int64(m)
	if s.taken > s.max {
		s.ready, s.pend = nil, nil
		s.err = &Error{Message: "the file is larger than " + sizeText(s.max) + ", the most one upload may be; split it into smaller files"}
		return
	}
	data := s.buf[:k+m]
	if m == 0 && err == nil {
		// A reader may return nothing now and then; one that never
		// returns anything is broken.
		if s.stalls++; s.stalls > 100 {
			s.err = io.ErrNoProgress
		}
		s.pend = data
		return
	}
	s.stalls = 0
	if !s.started {
		// The marks of UTF-8 and UTF-16 text: wait for enough bytes to
		// tell.
		if len(data) < len(bom) && err == nil && (bytes.HasPrefix(bom, data) || bytes.HasPrefix(utf16LE, data) || bytes.HasPrefix(utf16BE, data)) {
			s.pend = data
			return
		}
		data = bytes.TrimPrefix(data, bom)
		s.started = true
		if bytes.HasPrefix(data, utf16LE) || bytes.HasPrefix(data, utf16BE) {
			s.ready, s.pend = nil, nil
			s.err = errorAt(1, 1, "the file is UTF-16 text (as a spreadsheet's \"Unicode Text\" saves it); save it as CSV UTF-8 and try again")
			return
		}
	}
	cut := len(data)
	if err == nil {
		cut -= cutRune(data)
	}
	chunk := data[:cut]
	s.pend = data[cut:]
	good := chunk
	bad := firstInvalid(chunk)
	if bad >= 0 {
		good = chunk[:bad]
	}
	s.scan(good)
	s.ready = good
	switch {
	case bad >= 0:
		s.pend = nil
		s.err = errorAt(s.line, int(s.off-s.lineOff)+1,
			"the file is not UTF-8 text here (byte 0x%02X); save it as UTF-8 (in a spreadsheet: CSV UTF-8) and try again", chunk[bad])
	case err != nil:
		s.err = err
	}
}

// unclosed reports where the quoted value open at the end of the file
// started, if one is.
func (s *source) unclosed() (line, col int, ok bool) {
	if s.err == io.EOF && s.state == inQuotes {
		return s.openLine, s.openCol, true
	}
	return 0, 0, false
}

// scan counts lines and follows quotes through checked bytes. It jumps
// from quote to quote: between two quotes only the line count changes.
func (s *source) scan(b []byte) {
	delim := s.delim
	for len(b) > 0 {
		switch s.state {
		case inQuotes:
			i := bytes.IndexByte(b, '"')
			if i < 0 {
				s.count(b)
				return
			}
			s.count(b[:i+1])
			s.state, b = afterQuote, b[i+1:]
		case atFieldStart, inBare:
			i := bytes.IndexByte(b, '"')
			if i < 0 {
				if c := b[len(b)-1]; c == delim || c == '\n' {
					s.state = atFieldStart
				} else {
					s.state = inBare
				}
				s.count(b)
				return
			}
			if i > 0 {
				if c := b[i-1]; c == delim || c == '\n' {
					s.state = atFieldStart
				} else {
					s.state = inBare
				}
			}
			s.count(b[:i])
			if s.state == inBare {
				s.state = lost
				continue
			}
			s.openLine, s.openCol = s.line, int(s.off-s.lineOff)+1
			s.count(b[i : i+1])
			s.state, b = inQuotes, b[i+1:]
		case afterQuote, afterQuoteCR:
			switch c := b[0]; {
			case s.state == afterQuoteCR:
				s.state = lost
				if c == '\n' {
					s.state = atFieldStart
				}
			case c == '"':
				s.state = inQuotes
			case c == delim || c == '\n':
				s.state = atFieldStart
			case c == '\r':
				s.state = afterQuoteCR
			default:
				s.state = lost
			}
			s.count(b[:1])
			b = b[1:]
		default: // not following quotes
			s.count(b)
			return
		}
	}
}

// count moves the position past b.
func (s *source) count(b []byte) {
	if n := bytes.Count(b, []byte{'\n'}); n > 0 {
		s.line += n
		s.lineOff = s.off + int64(bytes.LastIndexByte(b, '\n')) + 1
	}
	s.off += int64(len(b))
}

// cutRune returns how many bytes at the end of b start a rune that the
// next read completes.
func cutRune(b []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if utf8.FullRune(b[len(b)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}

// firstInvalid returns the index of the first byte of b that is not
// UTF-8, or -1.
func firstInvalid(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

func isText(s string) bool { return utf8.ValidString(s) }
