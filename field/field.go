// Package field is the one shape Knobs gives to "what is wrong with this
// input": a message per field, in words for the user. The validators
// (llm.Validate, preset rules, forms) fill it; a page shows each message
// next to its field, and an API answer carries it as "fields".
package field

import (
	"sort"
	"strings"
)

// Errors maps a field to what is wrong with it. Keys are a form field's
// name ("name", "current"), a wire field of a request body
// ("temperature"), or a dotted path into it ("messages.2.content"). A
// field has one message: the first problem found.
type Errors map[string]string

// Add records msg for key unless key already has a message.
func (e Errors) Add(key, msg string) {
	if _, ok := e[key]; !ok {
		e[key] = msg
	}
}

// Empty reports whether nothing is wrong.
func (e Errors) Empty() bool { return len(e) == 0 }

// Err returns e as an error, or nil when it is empty, which spares callers
// the nil-map-in-an-interface trap.
func (e Errors) Err() error {
	if e.Empty() {
		return nil
	}
	return e
}

// Describe lists the messages in key order, "field: message; ...", for
// a place that shows them all in one line.
func (e Errors) Describe() string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + e[k]
	}
	return strings.Join(parts, "; ")
}

// Error is "invalid input: " and the messages in key order.
func (e Errors) Error() string {
	if e.Empty() {
		return "invalid input"
	}
	return "invalid input: " + e.Describe()
}
