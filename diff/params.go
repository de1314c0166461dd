package diff

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"

	"knobs/ordered"
)

// State says how a parameter differs between two runs.
type State string

// The states of a Row.
const (
	Same    State = "same"
	Changed State = "changed"
	OnlyA   State = "only-a"
	OnlyB   State = "only-b"
)

// Row is one parameter of two runs. A and B are its values as compact
// JSON, "" where that run does not set it.
type Row struct {
	Key   string // dotted for nested objects: response_format.json_schema.name
	A, B  string
	State State
}

// Params compares two JSON objects key by key, sorted by key. Nested
// objects are flattened to dotted keys; arrays and other values are
// compared whole. Numbers compare by value, so 1 and 1.0 are the same.
// A value that is not an object counts as an object with no keys.
func Params(a, b json.RawMessage) []Row {
	fa, fb := map[string]json.RawMessage{}, map[string]json.RawMessage{}
	flatten("", a, fa, 0)
	flatten("", b, fb, 0)
	keys := make([]string, 0, len(fa)+len(fb))
	for k := range fa {
		keys = append(keys, k)
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	rows := make([]Row, 0, len(keys))
	for _, k := range keys {
		va, inA := fa[k]
		vb, inB := fb[k]
		r := Row{Key: k, A: compact(va), B: compact(vb)}
		switch {
		case !inB:
			r.State = OnlyA
		case !inA:
			r.State = OnlyB
		case sameJSON(va, vb):
			r.State = Same
		default:
			r.State = Changed
		}
		rows = append(rows, r)
	}
	return rows
}

// flatten puts the leaves of the object raw, depth levels down, into out
// under dotted keys; an empty object is a leaf, so that it still shows,
// and so is an object ordered.MaxDepth levels down: a stored body may nest
// thousands deep, and each level is read again.
func flatten(prefix string, raw json.RawMessage, out map[string]json.RawMessage, depth int) {
	var obj map[string]json.RawMessage
	if depth == ordered.MaxDepth || json.Unmarshal(raw, &obj) != nil || obj == nil || (len(obj) == 0 && prefix != "") {
		if prefix != "" {
			out[prefix] = raw
		}
		return
	}
	for k, v := range obj {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		flatten(key, v, out, depth+1)
	}
}

func compact(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(va, vb)
}
