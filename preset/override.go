package preset

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Override sets top-level fields of a request body: each override
// replaces the field of its name where it stands, or is added after the
// body's own fields (by name); a null override removes the field. The
// body keeps its other fields, and their order, as written.
func Override(body json.RawMessage, overrides map[string]json.RawMessage) (json.RawMessage, error) {
	if len(overrides) == 0 {
		return body, nil
	}
	ms, err := members(body)
	if err != nil {
		return nil, fmt.Errorf("the body is not a JSON object: %w", err)
	}
	isNull := func(v json.RawMessage) bool { return string(compact(v)) == "null" }
	out := ms[:0:0]
	for _, m := range ms {
		v, ok := overrides[m.key]
		switch {
		case !ok:
			out = append(out, m)
		case !isNull(v):
			out = append(out, member{m.key, v})
		}
	}
	names := make([]string, 0, len(overrides))
	for k := range overrides {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		v := overrides[k]
		if isNull(v) || slices.ContainsFunc(ms, func(m member) bool { return m.key == k }) {
			continue
		}
		out = append(out, member{k, v})
	}
	return object(out), nil
}
