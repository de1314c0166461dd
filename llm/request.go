package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// streamBody returns the user's body with "stream": true and, when
// includeUsage is set and the user did not set stream_options,
// "stream_options":{"include_usage":true}. It splices bytes rather than
// round-tripping through a struct or map, so the user's fields, their
// order and their exact values go out untouched. A "stream" the user set
// is overwritten in place: Knobs always streams.
func streamBody(body []byte, includeUsage bool) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("the request body is not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("the request body must be a JSON object")
	}
	streamStart, streamEnd := -1, -1
	fields, hasOptions := 0, false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("the request body is not valid JSON: %w", err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("the request body is not valid JSON: %w", err)
		}
		end := int(dec.InputOffset())
		start := end - len(v)
		if start < 0 || !bytes.Equal(body[start:end], v) {
			return nil, fmt.Errorf("llm: cannot locate the value of %q in the body", key)
		}
		switch key {
		case "stream":
			streamStart, streamEnd = start, end
		case "stream_options":
			hasOptions = true
		}
		fields++
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("the request body is not valid JSON: %w", err)
	}
	closeAt := int(dec.InputOffset()) - 1
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the request body has data after its JSON object")
	}

	out := make([]byte, 0, len(body)+48)
	head := body[:closeAt]
	if streamStart >= 0 {
		out = append(out, body[:streamStart]...)
		out = append(out, "true"...)
		head = body[streamEnd:closeAt]
	}
	out = append(out, bytes.TrimRight(head, " \t\r\n")...)
	add := func(s string) {
		if fields > 0 {
			out = append(out, ',')
		}
		out = append(out, s...)
		fields++
	}
	if streamStart < 0 {
		add(`"stream":true`)
	}
	if includeUsage && !hasOptions {
		add(`"stream_options":{"include_usage":true}`)
	}
	return append(out, body[closeAt:]...), nil
}
