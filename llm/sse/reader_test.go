package sse

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// ev is an Event with Data as a string, so tests can compare whole lists.
type ev struct {
	ID, Event, Data string
}

// splitReader returns data in pieces that end at the given offsets, then
// the rest in one piece, so a test can put a read boundary exactly where
// a bug would hide (between CR and LF, inside a UTF-8 character).
type splitReader struct {
	data   []byte
	splits []int
	off    int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if r.off >= len(r.data) {
		return 0, io.EOF
	}
	end := len(r.data)
	for _, s := range r.splits {
		if s > r.off {
			end = min(s, end)
			break
		}
	}
	n := copy(p, r.data[r.off:end])
	r.off += n
	return n, nil
}

// oneByteReader hands out one byte per Read.
type oneByteReader struct{ data []byte }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.data[0]
	r.data = r.data[1:]
	return 1, nil
}

// errAfterReader returns its data and then err instead of io.EOF.
type errAfterReader struct {
	data []byte
	err  error
}

func (r *errAfterReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func decodeAll(t testing.TB, r io.Reader) ([]ev, error) {
	t.Helper()
	sr := NewReader(r)
	var out []ev
	for {
		e, err := sr.Next()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		out = append(out, ev{e.ID, e.Event, string(e.Data)})
		if len(out) > 1e6 {
			t.Fatal("runaway decoder")
		}
	}
}

func TestReaderCases(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // well past bufio.Scanner's 64 KiB token limit
	tests := []struct {
		name   string
		in     string
		splits []int // read boundaries; nil means one read per byte and one whole read, both
		want   []ev
	}{
		{
			name: "plain data events",
			in:   "data: a\n\ndata: b\n\n",
			want: []ev{{Data: "a"}, {Data: "b"}},
		},
		{
			name: "comment lines are skipped",
			in:   ": ping\n\ndata: a\n: keep-alive inside an event\n\n:\n\n",
			want: []ev{{Data: "a"}},
		},
		{
			name: "llama.cpp bare colon keep-alives",
			in:   ":\n:\n:\ndata: {\"x\":1}\n\n:\n",
			want: []ev{{Data: `{"x":1}`}},
		},
		{
			name: "LF line ends",
			in:   "data: a\ndata: b\n\n",
			want: []ev{{Data: "a\nb"}},
		},
		{
			name: "CR line ends",
			in:   "data: a\rdata: b\r\rdata: c\r\r",
			want: []ev{{Data: "a\nb"}, {Data: "c"}},
		},
		{
			name: "CRLF line ends",
			in:   "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n",
			want: []ev{{Data: "a\nb"}, {Data: "c"}},
		},
		{
			name:   "CRLF split between CR and LF",
			in:     "data: a\r\n\r\ndata: b\r\n\r\n",
			splits: []int{8, 10, 18},
			want:   []ev{{Data: "a"}, {Data: "b"}},
		},
		{
			name:   "CR at the end of a read followed by a non-LF",
			in:     "data: a\r\rdata: b\r\r",
			splits: []int{8, 9},
			want:   []ev{{Data: "a"}, {Data: "b"}},
		},
		{
			name: "mixed line ends",
			in:   "data: a\r\ndata: b\rdata: c\n\r\n",
			want: []ev{{Data: "a\nb\nc"}},
		},
		{
			name: "multi-line data joined with LF",
			in:   "data: {\"a\":\ndata: 1}\n\n",
			want: []ev{{Data: "{\"a\":\n1}"}},
		},
		{
			name: "empty data lines keep their place",
			in:   "data:\ndata\ndata: x\ndata:\n\n",
			want: []ev{{Data: "\n\nx\n"}},
		},
		{
			name: "line longer than 64 KiB",
			in:   "data: " + long + "\n\ndata: after\n\n",
			want: []ev{{Data: long}, {Data: "after"}},
		},
		{
			name:   "UTF-8 character split across reads",
			in:     "data: h\xc3\xa9llo \xf0\x9f\x98\x80\n\n",
			splits: []int{8, 15, 16, 17},
			want:   []ev{{Data: "héllo 😀"}},
		},
		{
			name: "event lines",
			in:   "event: error\ndata: {\"error\":{}}\n\ndata: plain\n\n",
			want: []ev{{Event: "error", Data: `{"error":{}}`}, {Data: "plain"}},
		},
		{
			name: "event type without data is not dispatched and does not leak",
			in:   "event: error\n\ndata: x\n\n",
			want: []ev{{Data: "x"}},
		},
		{
			name: "id lines carry over until changed",
			in:   "id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\nid\ndata: d\n\n",
			want: []ev{{ID: "1", Data: "a"}, {ID: "1", Data: "b"}, {ID: "2", Data: "c"}, {Data: "d"}},
		},
		{
			name: "id with NUL is ignored",
			in:   "id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n",
			want: []ev{{ID: "1", Data: "a"}, {ID: "1", Data: "b"}},
		},
		{
			name: "fields without a space after the colon",
			in:   "event:error\nid:7\ndata:{\"a\":1}\n\n",
			want: []ev{{ID: "7", Event: "error", Data: `{"a":1}`}},
		},
		{
			name: "only one leading space is removed",
			in:   "data:  two\n\n",
			want: []ev{{Data: " two"}},
		},
		{
			name: "unknown fields and retry are ignored",
			in:   "retry: 3000\nfoo: bar\ndata: a\n\n",
			want: []ev{{Data: "a"}},
		},
		{
			name: "final event without a trailing blank line",
			in:   "data: a\n\ndata: [DONE]\n",
			want: []ev{{Data: "a"}, {Data: "[DONE]"}},
		},
		{
			name: "final event without any line end",
			in:   "data: a\n\ndata: [DONE]",
			want: []ev{{Data: "a"}, {Data: "[DONE]"}},
		},
		{
			name: "byte order mark at the start",
			in:   "\xEF\xBB\xBFdata: a\n\n",
			want: []ev{{Data: "a"}},
		},
		{
			name: "empty stream",
			in:   "",
			want: nil,
		},
		{
			name: "blank lines only",
			in:   "\n\r\n\r",
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readers := map[string]io.Reader{
				"whole":    strings.NewReader(tt.in),
				"one-byte": &oneByteReader{data: []byte(tt.in)},
			}
			if tt.splits != nil {
				readers["split"] = &splitReader{data: []byte(tt.in), splits: tt.splits}
			}
			for name, r := range readers {
				got, err := decodeAll(t, r)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s:\n got %q\nwant %q", name, got, tt.want)
				}
			}
		})
	}
}

func TestReaderCRSplitDoesNotWait(t *testing.T) {
	// An event ended by CR CR must be dispatched as soon as the second CR
	// arrives, without waiting for the next read to see whether an LF
	// follows: the reader below fails the test if asked for more.
	r := &errAfterReader{data: []byte("data: a\r\r"), err: errors.New("read past the event")}
	sr := NewReader(r)
	e, err := sr.Next()
	if err != nil || string(e.Data) != "a" {
		t.Fatalf("Next = %q, %v; want a, nil", e.Data, err)
	}
}

func TestReaderErrorMidStream(t *testing.T) {
	reset := errors.New("connection reset by peer")
	r := &errAfterReader{data: []byte("data: a\n\ndata: partial"), err: reset}
	got, err := decodeAll(t, r)
	if !errors.Is(err, reset) {
		t.Fatalf("err = %v, want %v", err, reset)
	}
	if want := []ev{{Data: "a"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q (an incomplete event must not be dispatched on a broken stream)", got, want)
	}
}

func TestReaderMaxSize(t *testing.T) {
	sr := NewReader(strings.NewReader("data: " + strings.Repeat("y", 1000) + "\n\n"))
	sr.SetMaxSize(100)
	if _, err := sr.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("long line: err = %v, want ErrTooLarge", err)
	}
	sr = NewReader(strings.NewReader(strings.Repeat("data: 0123456789\n", 20) + "\n"))
	sr.SetMaxSize(100)
	if _, err := sr.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("many lines: err = %v, want ErrTooLarge", err)
	}
}

func TestReaderComments(t *testing.T) {
	sr := NewReader(strings.NewReader(":\n: ping\ndata: a\n\n"))
	if _, err := sr.Next(); err != nil {
		t.Fatal(err)
	}
	if got := sr.Comments(); got != 2 {
		t.Fatalf("Comments = %d, want 2", got)
	}
}

func TestReaderNoProgress(t *testing.T) {
	sr := NewReader(zeroReader{})
	if _, err := sr.Next(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestAppendEventRoundTrip(t *testing.T) {
	tests := []struct {
		in   Event
		wire string
		want ev
	}{
		{Event{Data: []byte("a")}, "data: a\n\n", ev{Data: "a"}},
		{Event{Data: nil}, "data: \n\n", ev{}},
		{Event{ID: "3", Event: "delta", Data: []byte("x\ny")}, "id: 3\nevent: delta\ndata: x\ndata: y\n\n", ev{ID: "3", Event: "delta", Data: "x\ny"}},
		{Event{Data: []byte("a\r\nb\rc")}, "data: a\ndata: b\ndata: c\n\n", ev{Data: "a\nb\nc"}},
		{Event{Event: "e\nvil", Data: []byte("1")}, "event: evil\ndata: 1\n\n", ev{Event: "evil", Data: "1"}},
	}
	for _, tt := range tests {
		wire := AppendEvent(nil, tt.in)
		if string(wire) != tt.wire {
			t.Errorf("AppendEvent(%+v) = %q, want %q", tt.in, wire, tt.wire)
			continue
		}
		got, err := decodeAll(t, bytes.NewReader(wire))
		if err != nil || len(got) != 1 || got[0] != tt.want {
			t.Errorf("decode %q = %q, %v; want %q", wire, got, err, tt.want)
		}
	}
}
