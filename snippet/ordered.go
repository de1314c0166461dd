package snippet

import (
	"bytes"
	"encoding/json"
)

// kv is one field of a JSON object, in its original place.
type kv struct {
	key   string
	value any
}

// orderedObject keeps a JSON object's field order, so that snippets list
// fields as the user wrote them.
type orderedObject []kv

// decodeOrdered reads a JSON object keeping the order of its fields at
// every depth; ok is false when b is not an object.
func decodeOrdered(b []byte) (orderedObject, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, false
	}
	obj, ok := v.(orderedObject)
	return obj, ok
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := orderedObject{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				obj = append(obj, kv{kt.(string), v})
			}
			_, err := dec.Token()
			return obj, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
	}
	return tok, nil
}
