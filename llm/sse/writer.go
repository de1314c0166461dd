package sse

import "bytes"

// AppendEvent appends ev in wire form to dst and returns the extended
// slice: an "id:" line when ev.ID is set, an "event:" line when ev.Event is
// set, one "data:" line per line of ev.Data and the blank line that
// dispatches it. Data always gets at least one data line, so an event with
// empty data is still dispatched. A CR or CRLF in Data becomes a line
// break, the only way SSE can carry it; line ends in ID or Event, which
// SSE cannot carry at all, are dropped.
func AppendEvent(dst []byte, ev Event) []byte {
	if ev.ID != "" {
		dst = append(dst, "id: "...)
		dst = appendOneLine(dst, ev.ID)
		dst = append(dst, '\n')
	}
	if ev.Event != "" {
		dst = append(dst, "event: "...)
		dst = appendOneLine(dst, ev.Event)
		dst = append(dst, '\n')
	}
	data := ev.Data
	for {
		i := bytes.IndexAny(data, "\r\n")
		dst = append(dst, "data: "...)
		if i < 0 {
			dst = append(dst, data...)
			dst = append(dst, '\n')
			break
		}
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return append(dst, '\n')
}

func appendOneLine(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] != '\r' && s[i] != '\n' {
			dst = append(dst, s[i])
		}
	}
	return dst
}
