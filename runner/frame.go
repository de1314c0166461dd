package runner

import (
	"strconv"
	"unicode/utf8"
)

// A frame is one SSE event as the browser receives it:
// "id: N\nevent: NAME\ndata: JSON\n\n".

// frame encodes an event whose data is already JSON.
func frame(id int, event string, payload []byte) []byte {
	b := make([]byte, 0, len(payload)+len(event)+32)
	b = appendHead(b, id, event)
	b = append(b, payload...)
	return append(b, "\n\n"...)
}

// textFrame encodes a delta or reasoning event, the frames of almost
// every token, without reflection: the data is what json.Marshal writes
// for textData{choice, text}.
func textFrame(id int, event string, choice int, text string) []byte {
	return appendTextFrame(make([]byte, 0, len(text)+len(event)+64), id, event, choice, text)
}

// appendTextFrame appends textFrame's bytes to b.
func appendTextFrame(b []byte, id int, event string, choice int, text string) []byte {
	b = appendHead(b, id, event)
	b = append(b, `{"choice":`...)
	b = strconv.AppendInt(b, int64(choice), 10)
	b = append(b, `,"text":`...)
	b = appendJSONString(b, text)
	return append(b, "}\n\n"...)
}

func appendHead(b []byte, id int, event string) []byte {
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, "\nevent: "...)
	b = append(b, event...)
	return append(b, "\ndata: "...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string escaped as encoding/json
// escapes it: HTML characters, U+2028 and U+2029 as \u escapes, invalid
// UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
