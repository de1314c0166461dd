// Package ordered reads and writes JSON objects keeping their keys in the
// order they were written: generated schemas, request bodies shown as code
// and anything else where map order would change the output.
package ordered

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Object is a JSON object that keeps its keys in order.
type Object struct {
	Keys []string
	Vals map[string]any
}

// NewObject returns an empty Object.
func NewObject() *Object { return &Object{Vals: map[string]any{}} }

// Get returns the value of key k.
func (o *Object) Get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.Vals[k]
	return v, ok
}

// Set sets key k, appending it when new.
func (o *Object) Set(k string, v any) {
	if _, ok := o.Vals[k]; !ok {
		o.Keys = append(o.Keys, k)
	}
	o.Vals[k] = v
}

// MarshalJSON writes the object with its keys in order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.Keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.Vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object keeping its keys in order.
func (o *Object) UnmarshalJSON(b []byte) error {
	v, err := Decode(b)
	if err != nil {
		return err
	}
	got, ok := v.(*Object)
	if !ok {
		return fmt.Errorf("ordered: want a JSON object, got %s", b)
	}
	*o = *got
	return nil
}

// MaxDepth is how deeply arrays and objects may nest in JSON that Knobs
// walks: a request body, a JSON Schema, a preset file. Real ones stay far
// below it; the limit keeps every recursive walker over user JSON shallow
// (encoding/json alone allows 10,000 levels, and json.Decoder's tokens
// none at all).
const MaxDepth = 64

// DepthError is JSON nested deeper than MaxDepth.
type DepthError struct{}

func (*DepthError) Error() string {
	return fmt.Sprintf("nested deeper than %d levels", MaxDepth)
}

// Depth is how deeply arrays and objects nest in data: 0 for a scalar, 1
// for a flat object. It reads bytes without decoding or recursing, so it
// is safe on any input; it counts brackets outside strings, so on text
// that is not JSON it is only an estimate.
func Depth(data []byte) int {
	deepest := 0
	Structure(data, func(c byte, depth int) {
		deepest = max(deepest, depth)
	})
	return deepest
}

// Structure calls fn for each byte of data outside strings that gives
// JSON its shape ({ [ ] } , :) with the nesting depth after it: 1 after
// the first "{", 0 after its "}". It reads data once, without decoding
// or recursing, so it is safe on any input.
func Structure(data []byte, fn func(c byte, depth int)) {
	depth := 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			fn(c, depth)
		case c == ']' || c == '}':
			depth--
			fn(c, depth)
		case c == ',' || c == ':':
			fn(c, depth)
		}
	}
}

// Decode reads JSON into *Object, []any, string, json.Number, bool
// and nil. JSON nested deeper than MaxDepth is refused with a
// *DepthError.
func Decode(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("ordered: trailing data after the JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder, depth int) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	if (t == json.Delim('{') || t == json.Delim('[')) && depth == MaxDepth {
		return nil, &DepthError{}
	}
	switch t {
	case json.Delim('{'):
		o := NewObject()
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(d, depth+1)
			if err != nil {
				return nil, err
			}
			o.Set(kt.(string), v)
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := decodeValue(d, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return t, nil
}
