package preset

import (
	"encoding/json"
	"fmt"
	"regexp"

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

// Fill returns spec with the placeholders of its prompt text (the
// strings Variables reads) replaced by values, and the names that have
// no key in values, in order of first appearance; their placeholders
// stay as they were. Values are inserted as text, never as JSON, and are
// not searched for placeholders in turn. Every other field, and the
// order of all fields, is kept; a body without placeholders comes back
// unchanged. The error is for a body that is not a JSON object.
func Fill(spec llm.RunSpec, values map[string]string) (llm.RunSpec, []string, error) {
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
