package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// streamBody returns the user's body as Knobs sends it, and the fields
// Knobs added to it. Knobs streams by design: a body without "stream" (or
// with a null one) gets "stream": true, and then, when includeUsage is set
// and the user did not set stream_options, "stream_options":
// {"include_usage":true}, without which most servers send no usage in a
// stream. A "stream" the user set is theirs: false asks for one JSON
// answer, and then nothing is added. It splices bytes rather than
// round-tripping through a struct or map, so the user's fields, their
// order and their exact values go out untouched.
func streamBody(body []byte, includeUsage bool) (out []byte, added []string, err error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, fmt.Errorf("the request body is not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("the request body must be a JSON object")
	}
	streamStart, streamEnd := -1, -1
	var streamValue string
	fields, hasOptions := 0, false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("the request body is not valid JSON: %w", err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("the request body is not valid JSON: %w", err)
		}
		end := int(dec.InputOffset())
		start := end - len(v)
		if start < 0 || !bytes.Equal(body[start:end], v) {
			return nil, nil, fmt.Errorf("llm: cannot locate the value of %q in the body", key)
		}
		switch key {
		case "stream":
			streamStart, streamEnd, streamValue = start, end, string(v)
		case "stream_options":
			hasOptions = true
		}
		fields++
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("the request body is not valid JSON: %w", err)
	}
	closeAt := int(dec.InputOffset()) - 1
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("the request body has data after its JSON object")
	}
	if streamValue == "false" {
		return body, nil, nil
	}

	out = make([]byte, 0, len(body)+48)
	head := body[:closeAt]
	if streamStart >= 0 {
		out = append(out, body[:streamStart]...)
		out = append(out, "true"...)
		head = body[streamEnd:closeAt]
		if streamValue != "true" {
			added = append(added, "stream")
		}
	}
	out = append(out, bytes.TrimRight(head, " \t\r\n")...)
	add := func(name, s string) {
		if fields > 0 {
			out = append(out, ',')
		}
		out = append(out, s...)
		fields++
		added = append(added, name)
	}
	if streamStart < 0 {
		add("stream", `"stream":true`)
	}
	if includeUsage && !hasOptions {
		add("stream_options", `"stream_options":{"include_usage":true}`)
	}
	return append(out, body[closeAt:]...), added, nil
}

// Streamed reports whether a body asks for a streamed answer as Knobs
// sends it: always, unless the user set "stream" to false.
func Streamed(body []byte) bool {
	var b struct {
		Stream *bool `json:"stream"`
	}
	return json.Unmarshal(body, &b) != nil || b.Stream == nil || *b.Stream
}
