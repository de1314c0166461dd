package sse

import (
	"bytes"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// randReader hands out its data in reads of random length, mostly short,
// so that every byte boundary gets hit across fuzz runs.
type randReader struct {
	data []byte
	rnd  *rand.Rand
}

func (r *randReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := 1 + r.rnd.IntN(8)
	if r.rnd.IntN(8) == 0 {
		n = 1 + r.rnd.IntN(4096)
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// eventsFrom turns fuzz bytes into a list of events SSE can carry: fields
// separated by 0x1F, in the order id, event, data. IDs drop CR, LF and NUL,
// event names CR and LF; data's CR and CRLF become LF, as SSE reads them.
func eventsFrom(input []byte) []ev {
	parts := strings.Split(string(input), "\x1f")
	var out []ev
	for i := 0; i+2 < len(parts); i += 3 {
		id := strings.Map(func(r rune) rune {
			if r == '\r' || r == '\n' || r == 0 {
				return -1
			}
			return r
		}, parts[i])
		name := strings.Map(func(r rune) rune {
			if r == '\r' || r == '\n' {
				return -1
			}
			return r
		}, parts[i+1])
		data := strings.ReplaceAll(parts[i+2], "\r\n", "\n")
		data = strings.ReplaceAll(data, "\r", "\n")
		out = append(out, ev{ID: id, Event: name, Data: data})
	}
	return out
}

// encode writes events with random line ends, random spacing after the
// colon, random comment lines and, sometimes, no blank line after the last
// event.
func encode(events []ev, rnd *rand.Rand) []byte {
	var b bytes.Buffer
	prevCR := false
	line := func(s string) {
		eols := []string{"\n", "\r", "\r\n"}
		eol := eols[rnd.IntN(3)]
		if s == "" && prevCR && eol == "\n" {
			// CR then a bare LF would read as one CRLF line end and lose
			// the blank line.
			eol = "\r"
		}
		b.WriteString(s)
		b.WriteString(eol)
		prevCR = eol == "\r"
	}
	field := func(name, value string) {
		if value == "" && rnd.IntN(2) == 0 {
			line(name)
			return
		}
		if !strings.HasPrefix(value, " ") && rnd.IntN(2) == 0 {
			line(name + ":" + value)
			return
		}
		line(name + ": " + value)
	}
	id := ""
	for i, e := range events {
		if rnd.IntN(4) == 0 {
			line([]string{":", ": ping", ":keep-alive"}[rnd.IntN(3)])
		}
		if e.ID != id {
			field("id", e.ID)
			id = e.ID
		}
		if e.Event != "" {
			field("event", e.Event)
		}
		for _, l := range strings.Split(e.Data, "\n") {
			field("data", l)
		}
		if i < len(events)-1 || rnd.IntN(2) == 0 {
			line("")
		}
	}
	return b.Bytes()
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("1\x1fmessage\x1fhello\x1f\x1f\x1fworld"), uint64(1))
	f.Add([]byte("\x1ferror\x1f{\"error\":{\"message\":\"x\"}}\x1f\x1f\x1f[DONE]"), uint64(2))
	f.Add([]byte("a\x1f\x1fline1\r\nline2\rline3\x1fb\x1f e\x1f  spaced"), uint64(3))
	f.Add([]byte("\x1f\x1f\x1f\x1f\x1f\xc3\xa9\xf0\x9f\x98\x80"), uint64(4))
	f.Add([]byte(":\n\ndata: a\r\n\r\ndata:b\rid:\x00\r\r"), uint64(5))
	f.Fuzz(func(t *testing.T, input []byte, seed uint64) {
		rnd := rand.New(rand.NewPCG(seed, seed>>1|1))

		// Any input: no panic, and where the reads split must not matter.
		whole, werr := decodeAll(t, bytes.NewReader(input))
		split, serr := decodeAll(t, &randReader{data: input, rnd: rnd})
		if (werr == nil) != (serr == nil) || !reflect.DeepEqual(whole, split) {
			t.Fatalf("decode depends on read splits:\nwhole %q %v\nsplit %q %v", whole, werr, split, serr)
		}

		// Encoded events come back exactly, none dropped or duplicated.
		want := eventsFrom(input)
		wire := encode(want, rnd)
		got, err := decodeAll(t, &randReader{data: wire, rnd: rnd})
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("round trip of %q:\nwire %q\n got %q\nwant %q", want, wire, got, want)
		}

		// AppendEvent agrees with the same decoder.
		var out []byte
		id := ""
		for _, e := range want {
			if e.ID == "" && id != "" {
				out = append(out, "id\n"...)
			}
			id = e.ID
			out = AppendEvent(out, Event{ID: e.ID, Event: e.Event, Data: []byte(e.Data)})
		}
		got, err = decodeAll(t, &randReader{data: out, rnd: rnd})
		if err != nil || len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("AppendEvent round trip:\nwire %q\n got %q %v\nwant %q", out, got, err, want)
		}
	})
}
