package grade

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"

	"knobs/field"
	"knobs/llm"
	"knobs/ordered"
)

// unfence returns the JSON inside a Markdown code fence (```json … ```
// or ``` … ```) when the whole answer is one, and whether it was.
func unfence(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return s, false
	}
	nl := strings.IndexByte(t, '\n')
	if nl < 0 {
		return s, false
	}
	if lang := strings.TrimSpace(t[3:nl]); lang != "" && !strings.EqualFold(lang, "json") {
		return s, false
	}
	return strings.TrimSpace(t[nl+1 : len(t)-3]), true
}

// readJSON decodes an answer as JSON (numbers as json.Number), after
// removing a fence when strip allows. Its message says why the answer
// is not JSON; fenced says a fence was removed.
func readJSON(output string, strip bool) (v any, fenced bool, msg string) {
	text := output
	if strip {
		text, fenced = unfence(output)
	}
	if ordered.Depth([]byte(text)) > ordered.MaxDepth {
		return nil, fenced, "not checked: the answer is " + (&ordered.DepthError{}).Error()
	}
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	err := d.Decode(&v)
	if err == nil {
		if _, err2 := d.Token(); err2 == nil {
			err = errors.New("more text after the JSON value")
		}
	}
	if err != nil {
		msg = "not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
		var se *json.SyntaxError
		if errors.As(err, &se) {
			msg += fmt.Sprintf(" (at byte %d)", se.Offset)
		}
		if strings.TrimSpace(output) == "" {
			msg = "not valid JSON: the answer is empty"
		} else if _, f := unfence(output); f && !strip {
			msg += "; the answer is inside a ``` fence, which strip_fence would accept"
		}
		return nil, fenced, msg
	}
	return v, fenced, ""
}

func fenceNote(fenced bool) string {
	if fenced {
		return " (after removing a ```json fence)"
	}
	return ""
}

// jsonGrader checks that the answer is JSON.
type jsonGrader struct{ strip bool }

func (g jsonGrader) Grade(in Input) (Grade, error) {
	v, fenced, msg := readJSON(in.Output, g.strip)
	if msg != "" {
		return passFail(false, msg), nil
	}
	return passFail(true, "valid JSON "+kind(v)+fenceNote(fenced)), nil
}

func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

// schemaGrader checks the answer against a JSON Schema, with the checks
// Knobs runs on every answer to a response_format (llm.CheckOutput).
type schemaGrader struct {
	schema        json.RawMessage // nil: the variant's response_format
	strip         bool
	mu            sync.Mutex
	checkedFormat map[string]string // response_format → what is wrong with it, "" when usable
}

// maxCheckedFormats bounds the response_formats a grader remembers; an
// experiment has a handful of variants.
const maxCheckedFormats = 16

func parseSchema(s Spec, has bool, fe field.Errors) Grader {
	g := &schemaGrader{strip: s.StripFence}
	var name string
	switch {
	case !has || string(s.Schema) == "null":
		fe.Add("schema", `Give the JSON Schema, or "response_format" to use the variant's own.`)
	case json.Unmarshal(s.Schema, &name) == nil:
		if name != "response_format" {
			fe.Add("schema", fmt.Sprintf(`schema is a JSON Schema object or "response_format", not %q.`, name))
		}
		g.checkedFormat = map[string]string{}
	case len(s.Schema) > MaxSchemaSize:
		fe.Add("schema", fmt.Sprintf("The schema is at most %d KiB.", MaxSchemaSize>>10))
	case s.Schema[0] != '{':
		fe.Add("schema", `schema is a JSON Schema object or "response_format".`)
	default:
		rf := fmt.Sprintf(`{"type":"json_schema","json_schema":{"name":"grader","schema":%s}}`, compact(s.Schema))
		if msg := formatProblem(json.RawMessage(rf)); msg != "" {
			fe.Add("schema", "The schema is "+msg+".")
		}
		g.schema = json.RawMessage(rf)
	}
	return g
}

// formatProblem checks a response_format as Knobs checks one before a
// run (llm.Validate) and returns what is wrong with it, or "".
func formatProblem(rf json.RawMessage) string {
	body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":%s}`, rf)
	fe := llm.Validate(llm.RunSpec{Provider: "openai", Endpoint: llm.EndpointChat, Body: json.RawMessage(body)}, llm.DialectOpenAI, llm.Model{})
	var first string
	for k := range fe {
		if strings.HasPrefix(k, "response_format") && (first == "" || k < first) {
			first = k
		}
	}
	if first == "" {
		if len(fe) > 0 {
			return "not a usable JSON Schema: " + fe.Describe()
		}
		return ""
	}
	return fe[first]
}

func (g *schemaGrader) Grade(in Input) (Grade, error) {
	rf := g.schema
	if rf == nil {
		var err error
		if rf, err = g.variantFormat(in.ResponseFormat); err != nil {
			return Grade{}, err
		}
	}
	text := in.Output
	fenced := false
	if g.strip {
		text, fenced = unfence(in.Output)
	}
	body := append(append([]byte(`{"response_format":`), rf...), '}')
	c := llm.CheckOutput(body, text)
	if c == nil {
		return Grade{}, errors.New("the schema could not be read")
	}
	if !c.Valid {
		msg := c.Message
		if _, f := unfence(in.Output); f && !g.strip && strings.HasPrefix(msg, "not valid JSON") {
			msg += "; the answer is inside a ``` fence, which strip_fence would accept"
		}
		return passFail(false, msg), nil
	}
	return passFail(true, "valid JSON, matches the schema"+fenceNote(fenced)), nil
}

// variantFormat returns the variant's response_format when it carries a
// usable JSON Schema; otherwise the grading error says why not.
func (g *schemaGrader) variantFormat(rf json.RawMessage) (json.RawMessage, error) {
	var f struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	t := bytes.TrimSpace(rf)
	if len(t) == 0 || string(t) == "null" {
		return nil, errors.New(`this variant sets no response_format, so there is no schema to check against: give the grader its own "schema"`)
	}
	if json.Unmarshal(rf, &f) != nil {
		return nil, errors.New("the variant's response_format is not a JSON object")
	}
	if f.Type != "json_schema" || f.JSONSchema == nil || len(f.JSONSchema.Schema) == 0 || string(f.JSONSchema.Schema) == "null" {
		return nil, fmt.Errorf(`the variant's response_format (type %q) has no JSON Schema: use the json grader, or give this grader its own "schema"`, f.Type)
	}
	key := string(rf)
	g.mu.Lock()
	msg, seen := g.checkedFormat[key]
	g.mu.Unlock()
	if !seen {
		msg = formatProblem(rf)
		g.mu.Lock()
		if len(g.checkedFormat) < maxCheckedFormats {
			g.checkedFormat[key] = msg
		}
		g.mu.Unlock()
	}
	if msg != "" {
		return nil, errors.New("the variant's response_format cannot be checked against: " + msg)
	}
	return rf, nil
}

// step is one step of a JSON path: a key, or an index when key is "".
type step struct {
	key   string
	index int
	isKey bool
}

// parsePath reads $ followed by .key, ["key"] and [index] steps.
func parsePath(p string) ([]step, string) {
	if len(p) > MaxPathLength {
		return nil, fmt.Sprintf("The path is at most %d characters.", MaxPathLength)
	}
	if !strings.HasPrefix(p, "$") {
		return nil, `A path starts with $, as in $.items[0].name.`
	}
	var steps []step
	i := 1
	for i < len(p) {
		if len(steps) == MaxPathSteps {
			return nil, fmt.Sprintf("A path has at most %d steps.", MaxPathSteps)
		}
		switch p[i] {
		case '.':
			j := i + 1
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			if j == i+1 {
				return nil, fmt.Sprintf("Character %d: a key after the dot.", i+2)
			}
			steps = append(steps, step{key: p[i+1 : j], isKey: true})
			i = j
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if p[i+1:min(i+2, len(p))] == `"` {
				// A quoted key may hold ] and .: find the closing quote.
				k, n, ok := quotedKey(p[i+1:])
				if !ok || i+1+n >= len(p) || p[i+1+n] != ']' {
					return nil, fmt.Sprintf(`Character %d: a quoted key is written ["key"].`, i+1)
				}
				steps = append(steps, step{key: k, isKey: true})
				i += n + 2
				continue
			}
			if end < 0 {
				return nil, fmt.Sprintf("Character %d: [ without ].", i+1)
			}
			n, err := strconv.Atoi(p[i+1 : i+end])
			if err != nil || n < 0 || strings.HasPrefix(p[i+1:i+end], "+") {
				return nil, fmt.Sprintf(`Character %d: an index is a whole number 0 or more, or a key in quotes, not %q.`, i+2, p[i+1:i+end])
			}
			steps = append(steps, step{index: n})
			i += end + 1
		default:
			return nil, fmt.Sprintf("Character %d: expected . or [ , not %q.", i+1, p[i])
		}
	}
	return steps, ""
}

// quotedKey reads a JSON string at the start of s and returns its value
// and length in bytes.
func quotedKey(s string) (string, int, bool) {
	esc := false
	for i := 1; i < len(s); i++ {
		switch {
		case esc:
			esc = false
		case s[i] == '\\':
			esc = true
		case s[i] == '"':
			k, err := strconv.Unquote(s[:i+1])
			return k, i + 1, err == nil
		}
	}
	return "", 0, false
}

func pathString(steps []step) string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range steps {
		switch {
		case !s.isKey:
			fmt.Fprintf(&b, "[%d]", s.index)
		case s.key != "" && !strings.ContainsAny(s.key, `.[]"\ `):
			b.WriteString("." + s.key)
		default:
			fmt.Fprintf(&b, "[%q]", s.key)
		}
	}
	return b.String()
}

// pathGrader checks one value inside a JSON answer.
type pathGrader struct {
	path  []step
	value any    // the JSON value to compare with
	tmpl  string // a string value with placeholders, filled per cell
	strip bool
}

func parsePathEquals(s Spec, has bool, fe field.Errors) Grader {
	g := pathGrader{strip: s.StripFence}
	if s.Path == "" {
		fe.Add("path", `Give the path of the value to check, as in $.items[0].name.`)
	} else if steps, msg := parsePath(s.Path); msg != "" {
		fe.Add("path", msg)
	} else {
		g.path = steps
	}
	switch {
	case !has:
		fe.Add("value", `Give the JSON value it must equal: "value": "apple", 3, true, null, [..] or {..}.`)
	case len(s.Value) > MaxValueSize:
		fe.Add("value", fmt.Sprintf("value is at most %d KiB.", MaxValueSize>>10))
	case ordered.Depth(s.Value) > ordered.MaxDepth:
		fe.Add("value", "value is "+(&ordered.DepthError{}).Error()+".")
	default:
		d := json.NewDecoder(bytes.NewReader(s.Value))
		d.UseNumber()
		if d.Decode(&g.value) != nil {
			fe.Add("value", "value is not valid JSON.")
		}
		if str, ok := g.value.(string); ok && placeholder.MatchString(str) {
			g.tmpl = str
		}
	}
	return g
}

func (g pathGrader) Grade(in Input) (Grade, error) {
	want := g.value
	if g.tmpl != "" {
		s, err := fill(g.tmpl, in, nil)
		if err != nil {
			return Grade{}, err
		}
		want = s
	}
	v, fenced, msg := readJSON(in.Output, g.strip)
	if msg != "" {
		return passFail(false, msg), nil
	}
	at := pathString(g.path)
	for i, s := range g.path {
		here := pathString(g.path[:i])
		if s.isKey {
			obj, ok := v.(map[string]any)
			if !ok {
				return passFail(false, fmt.Sprintf("no %s: %s is %s, not an object", at, here, kindWithArticle(v))), nil
			}
			if v, ok = obj[s.key]; !ok {
				return passFail(false, fmt.Sprintf("no %s: %s has no key %q", at, here, s.key)), nil
			}
			continue
		}
		arr, ok := v.([]any)
		if !ok {
			return passFail(false, fmt.Sprintf("no %s: %s is %s, not an array", at, here, kindWithArticle(v))), nil
		}
		if s.index >= len(arr) {
			return passFail(false, fmt.Sprintf("no %s: %s has %d items", at, here, len(arr))), nil
		}
		v = arr[s.index]
	}
	if jsonEqual(v, want, 0) {
		return passFail(true, fmt.Sprintf("%s is %s%s", at, clip(encode(v), 60), fenceNote(fenced))), nil
	}
	return passFail(false, fmt.Sprintf("%s is %s, not %s%s", at, clip(encode(v), 60), clip(encode(want), 60), fenceNote(fenced))), nil
}

func kindWithArticle(v any) string {
	switch k := kind(v); k {
	case "object", "array":
		return "an " + k
	case "null":
		return "null"
	default:
		return "a " + k
	}
}

func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// jsonEqual compares two decoded JSON values; numbers are equal when
// their values are. Both values were checked to be at most
// ordered.MaxDepth deep.
func jsonEqual(a, b any, depth int) bool {
	if depth > ordered.MaxDepth {
		return false
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv, depth+1) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i], depth+1) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numberEqual(x, y)
	}
	return a == b
}

// numberEqual compares two JSON numbers by value with 256 bits of
// precision: 1 equals 1.0 and 1e0; big.Float keeps a huge exponent cheap.
func numberEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, _, err1 := big.ParseFloat(string(a), 10, 256, big.ToNearestEven)
	y, _, err2 := big.ParseFloat(string(b), 10, 256, big.ToNearestEven)
	return err1 == nil && err2 == nil && x.Cmp(y) == 0
}
