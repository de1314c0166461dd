// Package sse reads and writes server-sent events as the WHATWG HTML
// standard defines them, with the leniencies LLM providers need.
//
// It exists because the readers most code uses get the edge cases of real
// provider streams wrong (TestStreamSSECases has them): a bufio.Scanner gives up on lines
// over 64 KiB, many readers split only on "\n" and so miss CR line ends (or
// see a CRLF split across two reads as two line ends), and most drop an
// event that is not followed by a blank line at EOF.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Event is one dispatched server-sent event.
type Event struct {
	// ID is the last event ID seen on the stream so far, as the standard
	// defines it: it carries over to later events until an id field
	// changes it.
	ID string
	// Event is the event type; "" means the default type, "message".
	Event string
	// Data is the event's data lines joined with "\n". It aliases the
	// Reader's buffer and is valid only until the next call to Next.
	Data []byte
}

// DefaultMaxSize bounds one line and one event's data. It is far above any
// real chunk (a Cerebras chunk is a few hundred bytes) and keeps a broken
// upstream that never sends a line end from taking all memory.
const DefaultMaxSize = 16 << 20

// ErrTooLarge is returned when a line or an event's data is longer than the
// Reader's maximum size.
var ErrTooLarge = errors.New("sse: event too large")

const initialBufSize = 16 << 10

// maxEmptyReads is how many (0, nil) reads in a row are taken as a broken
// reader, as bufio does.
const maxEmptyReads = 100

// Reader decodes server-sent events from an io.Reader. It reads into one
// buffer that it reuses, so decoding allocates nothing per event once the
// buffers have grown to the stream's line and event sizes. A Reader is not
// safe for concurrent use.
type Reader struct {
	src io.Reader
	err error // sticky error from src, io.EOF included

	buf        []byte
	start, end int // buf[start:end] is read but not yet consumed
	scanned    int // buf[start:scanned] is known to hold no line end
	nextLF     int // absolute index of an LF already seen in buf, or -1

	// skipLF is set after a line that ended in CR at the end of the
	// buffered bytes: an LF at the start of the next read belongs to it.
	skipLF  bool
	bomDone bool

	data    []byte
	hasData bool
	event   string
	id      string
	retry   int

	comments int
	max      int
}

// NewReader returns a Reader that decodes events from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{src: r, nextLF: -1, max: DefaultMaxSize, retry: -1}
}

// SetMaxSize sets the largest line and event data the Reader accepts.
func (r *Reader) SetMaxSize(n int) { r.max = n }

// Comments returns how many comment lines (keep-alives such as ": ping")
// have been read so far.
func (r *Reader) Comments() int { return r.comments }

// Retry returns the last "retry" field in milliseconds, or -1 when the
// stream has sent none.
func (r *Reader) Retry() int { return r.retry }

// Next returns the next event. At the end of the stream it returns io.EOF;
// an event that the stream did not close with a blank line is still
// returned first, since providers do end that way. Any other error from the
// underlying reader is returned as is, and the incomplete event is dropped.
func (r *Reader) Next() (Event, error) {
	r.data = r.data[:0]
	r.hasData = false
	r.event = ""
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && r.hasData {
				r.hasData = false
				return r.dispatch(), nil
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if r.hasData {
				return r.dispatch(), nil
			}
			r.event = ""
			continue
		}
		if line[0] == ':' {
			r.comments++
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if r.hasData {
				r.data = append(r.data, '\n')
			}
			if len(r.data)+len(value) > r.max {
				return Event{}, ErrTooLarge
			}
			r.data = append(r.data, value...)
			r.hasData = true
		case "event":
			r.event = eventName(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 && string(value) != r.id {
				r.id = string(value)
			}
		case "retry":
			if n, ok := digits(value); ok {
				r.retry = n
			}
		}
	}
}

func (r *Reader) dispatch() Event {
	return Event{ID: r.id, Event: r.event, Data: r.data}
}

// eventName avoids an allocation for the event types providers send.
func eventName(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "message":
		return "message"
	case "error":
		return "error"
	case "ping":
		return "ping"
	case "done":
		return "done"
	}
	return string(b)
}

func digits(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

var bom = []byte("\xEF\xBB\xBF")

// readLine returns the next line without its line end. The line aliases
// buf and is valid until the next call. At EOF an unterminated last line
// is returned as a line; after that the sticky error is returned.
func (r *Reader) readLine() ([]byte, error) {
	for {
		if r.skipLF && r.start < r.end {
			r.skipLF = false
			if r.buf[r.start] == '\n' {
				r.start++
				if r.scanned < r.start {
					r.scanned = r.start
				}
				continue
			}
		}
		if !r.bomDone && r.start < r.end {
			b := r.buf[r.start:r.end]
			n := min(len(b), len(bom))
			switch {
			case !bytes.Equal(b[:n], bom[:n]):
				r.bomDone = true
			case n == len(bom):
				r.start += n
				r.scanned = max(r.scanned, r.start)
				r.bomDone = true
			case r.err != nil:
				r.bomDone = true
			}
		}
		if r.bomDone || r.err != nil {
			if i := r.indexEOL(); i >= 0 {
				line := r.buf[r.start:i]
				if r.buf[i] == '\r' {
					if i+1 < r.end {
						if r.buf[i+1] == '\n' {
							i++
						}
					} else {
						r.skipLF = true
					}
				}
				r.start = i + 1
				r.scanned = r.start
				return line, nil
			}
			if r.err != nil {
				if r.start < r.end {
					line := r.buf[r.start:r.end]
					r.start, r.scanned = r.end, r.end
					return line, nil
				}
				return nil, r.err
			}
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// indexEOL returns the absolute index of the first CR or LF in the
// unconsumed bytes, or -1. It never rescans bytes already known to hold no
// line end, so a long line arriving a byte at a time stays linear.
func (r *Reader) indexEOL() int {
	from := max(r.scanned, r.start)
	lf := r.nextLF
	if lf < from {
		lf = -1
		if j := bytes.IndexByte(r.buf[from:r.end], '\n'); j >= 0 {
			lf = from + j
		}
		r.nextLF = lf
	}
	limit := r.end
	if lf >= 0 {
		limit = lf
	}
	if j := bytes.IndexByte(r.buf[from:limit], '\r'); j >= 0 {
		return from + j
	}
	if lf >= 0 {
		return lf
	}
	r.scanned = r.end
	return -1
}

// fill reads more bytes, first making room by moving the unconsumed bytes
// to the front of buf or growing it.
func (r *Reader) fill() error {
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		shift := r.start
		r.start, r.end = 0, n
		r.scanned -= shift
		if r.nextLF >= 0 {
			r.nextLF -= shift
		}
	}
	if r.end == len(r.buf) {
		if len(r.buf) >= r.max+2 {
			return ErrTooLarge
		}
		size := max(2*len(r.buf), initialBufSize)
		size = min(size, r.max+2) // room for the line end after a line of max bytes
		nb := make([]byte, size)
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for i := 0; i < maxEmptyReads; i++ {
		n, err := r.src.Read(r.buf[r.end:])
		if n < 0 || n > len(r.buf)-r.end {
			return fmt.Errorf("sse: reader returned invalid count %d", n)
		}
		r.end += n
		if err != nil {
			r.err = err
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	return io.ErrNoProgress
}
