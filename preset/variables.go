package preset

import (
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"

	"knobs/llm"
)

// placeholder is {{name}}, spaces or tabs allowed inside the braces.
var placeholder = regexp.MustCompile(`\{\{[ \t]*([A-Za-z_][A-Za-z0-9_]{0,63})[ \t]*\}\}`)

// Variables lists the names of the {{name}} placeholders in spec's
// prompt text, in order of first appearance: the string contents and
// text parts of the messages, then the prompt (a string or an array of
// strings). Placeholders anywhere else (a schema, a tool, a stop word)
// are not variables. A body that does not parse has none.
func Variables(spec llm.RunSpec) []string {
	var names []string
	seen := map[string]bool{}
	rewriteTexts(spec.Body, func(s string) (string, bool) {
		for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				names = append(names, m[1])
			}
		}
		return s, false
	})
	return names
}

// TooLargeError is a body that would be larger than the limit once its
// variables are filled in. Its text is for the user.
type TooLargeError struct {
	Size, Limit int // in bytes; Size as worked out, before anything was built
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("with its variables filled in, the body would be %s, past the %s a request may have: use shorter values or fewer placeholders",
		size(e.Size), wholeSize(e.Limit))
}

// wholeSize writes a limit: "16 MiB" when it is whole mebibytes.
func wholeSize(n int) string {
	if n > 0 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return size(n)
}

// Fill returns spec with the placeholders of its prompt text (the
// strings Variables reads) replaced by values, and the names that have
// no key in values, in order of first appearance; their placeholders
// stay as they were. Values are inserted as text, never as JSON, and are
// not searched for placeholders in turn. Every other field, and the
// order of all fields, is kept; a body without placeholders comes back
// unchanged. The error is for a body that is not a JSON object, or a
// *TooLargeError when the filled body would pass limit bytes: a small
// body repeating a placeholder thousands of times would otherwise grow a
// large value into gigabytes, so the size is worked out before anything
// is built.
func Fill(spec llm.RunSpec, values map[string]string, limit int) (llm.RunSpec, []string, error) {
	if n, err := filledSize(spec.Body, values); err != nil {
		return spec, nil, err
	} else if n > limit {
		return spec, nil, &TooLargeError{Size: n, Limit: limit}
	}
	var missing []string
	seen := map[string]bool{}
	body, err := rewriteTexts(spec.Body, func(s string) (string, bool) {
		changed := false
		out := placeholder.ReplaceAllStringFunc(s, func(ph string) string {
			name := placeholder.FindStringSubmatch(ph)[1]
			v, ok := values[name]
			if !ok {
				if !seen[name] {
					seen[name] = true
					missing = append(missing, name)
				}
				return ph
			}
			changed = true
			return v
		})
		return out, changed
	})
	if err != nil {
		return spec, nil, err
	}
	spec.Body = body
	return spec, missing, nil
}

// filledSize is about how many bytes body takes once Fill has replaced
// its placeholders: never less, and more only by the escapes of the
// placeholders themselves.
func filledSize(body json.RawMessage, values map[string]string) (int, error) {
	n := len(body)
	encoded := map[string]int{}
	_, err := rewriteTexts(body, func(s string) (string, bool) {
		for _, m := range placeholder.FindAllStringSubmatchIndex(s, -1) {
			name := s[m[2]:m[3]]
			v, ok := values[name]
			if !ok {
				continue
			}
			size, ok := encoded[name]
			if !ok {
				size = encodedLen(v)
				encoded[name] = size
			}
			n += size - (m[1] - m[0])
		}
		return s, false
	})
	return n, err
}

// encodedLen is the length of s inside a JSON string as encodeString
// writes it, without its quotes.
func encodedLen(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
			n += 2
		case r < 0x20 || r == '\u2028' || r == '\u2029' || r == utf8.RuneError:
			n += 6 // \u00XX, and invalid UTF-8 as \ufffd
		default:
			n += utf8.RuneLen(r)
		}
	}
	return n
}

// rewriteTexts calls fn on each prompt text of body, in order, and
// returns body with the texts fn changed re-encoded; body itself when
// fn changed none.
func rewriteTexts(body json.RawMessage, fn func(string) (string, bool)) (json.RawMessage, error) {
	ms, err := members(body)
	if err != nil {
		return body, fmt.Errorf("preset: the body is not a JSON object: %w", err)
	}
	changed := false
	for i, m := range ms {
		var v json.RawMessage
		var ok bool
		switch m.key {
		case "messages":
			v, ok = rewriteArray(m.value, func(msg json.RawMessage) (json.RawMessage, bool) {
				return rewriteMember(msg, "content", func(c json.RawMessage) (json.RawMessage, bool) {
					if v, ok := rewriteString(c, fn); ok {
						return v, true
					}
					return rewriteArray(c, func(part json.RawMessage) (json.RawMessage, bool) {
						if !isTextPart(part) {
							return part, false
						}
						return rewriteMember(part, "text", func(t json.RawMessage) (json.RawMessage, bool) {
							return rewriteString(t, fn)
						})
					})
				})
			})
		case "prompt":
			if v, ok = rewriteString(m.value, fn); !ok {
				v, ok = rewriteArray(m.value, func(p json.RawMessage) (json.RawMessage, bool) { return rewriteString(p, fn) })
			}
		}
		if ok {
			ms[i].value, changed = v, true
		}
	}
	if !changed {
		return body, nil
	}
	return object(ms), nil
}

// rewriteString applies fn to raw when it is a string.
func rewriteString(raw json.RawMessage, fn func(string) (string, bool)) (json.RawMessage, bool) {
	s, ok := stringValue(raw)
	if !ok {
		return raw, false
	}
	out, changed := fn(s)
	if !changed {
		return raw, false
	}
	return encodeString(out), true
}

// rewriteArray applies fn to each element when raw is an array.
func rewriteArray(raw json.RawMessage, fn func(json.RawMessage) (json.RawMessage, bool)) (json.RawMessage, bool) {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return raw, false
	}
	changed := false
	for i, e := range elems {
		if v, ok := fn(e); ok {
			elems[i], changed = v, true
		}
	}
	if !changed {
		return raw, false
	}
	return array(elems), true
}

// rewriteMember applies fn to the field key when raw is an object.
func rewriteMember(raw json.RawMessage, key string, fn func(json.RawMessage) (json.RawMessage, bool)) (json.RawMessage, bool) {
	ms, err := members(raw)
	if err != nil {
		return raw, false
	}
	changed := false
	for i, m := range ms {
		if m.key == key {
			if v, ok := fn(m.value); ok {
				ms[i].value, changed = v, true
			}
		}
	}
	if !changed {
		return raw, false
	}
	return object(ms), true
}

func isTextPart(part json.RawMessage) bool {
	var p struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(part, &p) == nil && p.Type == "text"
}
