// Package preset is the file format of presets: export, import (of a
// preset file, a raw request body or a curl command holding one) and the
// {{name}} prompt variables. It knows nothing of storage.
//
// A preset file never holds a secret: a RunSpec has no key, headers are
// never kept, and a top-level body field named like a credential
// ("api_key", "authorization", ...) is dropped on import and on export.
package preset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"knobs/llm"
	"knobs/ordered"
)

// FormatName is the "format" of a preset file.
const FormatName = "knobs-preset"

// FormatVersion is the version of the file format this Knobs writes and
// reads.
const FormatVersion = 1

// MaxSize is the largest file Import reads, in bytes.
const MaxSize = 1 << 20

// File is a preset as a file holds it. Fields are written in this order.
type File struct {
	Format      string            `json:"format"`  // FormatName
	Version     int               `json:"version"` // FormatVersion
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Tags        []string          `json:"tags"`
	Variables   map[string]string `json:"variables"` // default values by name
	Spec        llm.RunSpec       `json:"spec"`
	// Dropped names the body fields Import left out ("stream", a
	// credential), for the user to be told; it is never written.
	Dropped []string `json:"-"`
}

// ImportError is a file Import refuses. Its text is for the user: it
// names the problem, without a package prefix.
type ImportError struct {
	Problem string
}

func (e *ImportError) Error() string { return e.Problem }

func problem(format string, args ...any) error {
	return &ImportError{Problem: fmt.Sprintf(format, args...)}
}

var variableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// Export writes p as a preset file: indented JSON, fields in a fixed
// order (variables by name), ending with a newline. Format and Version
// are set; "stream" and credential-like fields are left out of the body.
func Export(p File) ([]byte, error) {
	ms, err := members(p.Spec.Body)
	if err != nil {
		return nil, fmt.Errorf("preset: unable to export %q: the body is not a JSON object: %w", p.Name, err)
	}
	if !p.Spec.Endpoint.Valid() {
		return nil, fmt.Errorf("preset: unable to export %q: unknown endpoint %q", p.Name, p.Spec.Endpoint)
	}
	p.Format, p.Version = FormatName, FormatVersion
	p.Spec.Body, _ = cleanBody(ms)
	if p.Tags == nil {
		p.Tags = []string{}
	}
	if p.Variables == nil {
		p.Variables = map[string]string{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("preset: unable to export %q: %w", p.Name, err)
	}
	return b.Bytes(), nil
}

// Import reads a preset file, a raw request body as sent to
// /v1/chat/completions or /v1/completions, or a curl command sending
// one. A body or curl command gives a File with only Spec set, and
// Spec.Provider "" unless the curl URL names a known provider's host: the
// caller chooses. Errors are *ImportError. Import checks the shape only;
// the caller checks the names (db.NormalizePreset) and the parameters
// (llm.Validate) before saving anything.
func Import(data []byte) (File, error) {
	if len(data) > MaxSize {
		return File{}, problem("The file is %s; a preset file is at most 1 MiB.", size(len(data)))
	}
	data = bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(data) == 0 {
		return File{}, problem("The file is empty.")
	}
	// Checked on the raw text, curl command or JSON alike: everything after
	// this walks the JSON, and a file nested thousands deep would keep the
	// schema checks busy for minutes.
	if ordered.Depth(data) > ordered.MaxDepth {
		return File{}, problem("The file is %s: Knobs reads request bodies and preset files up to that depth.", (&ordered.DepthError{}).Error())
	}
	if cmd, ok := curlCommand(string(data)); ok {
		return importCurl(cmd)
	}
	ms, err := members(data)
	if err != nil {
		return File{}, notJSON(data, err)
	}
	for _, m := range ms {
		if m.key == "format" {
			return importFile(data)
		}
	}
	return importBody(ms, "", "")
}

func size(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// notJSON says why data, which members refused, is not a JSON object.
func notJSON(data []byte, err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, errNotObject):
		return problem("The file is JSON but not an object: expected a preset file or a request body, which start with {.")
	case errors.Is(err, errTrailing):
		return problem("The file holds more than one JSON value: expected one preset file or request body.")
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return problem("The file is not JSON: it ends before its JSON does.")
	case errors.As(err, &syn):
		line := bytes.Count(data[:min(int(syn.Offset), len(data))], []byte("\n")) + 1
		return problem("The file is not JSON (line %d: %s).", line, strings.TrimPrefix(syn.Error(), "json: "))
	default:
		return problem("The file is not JSON (%s).", strings.TrimPrefix(err.Error(), "json: "))
	}
}

// importFile reads a file with a "format" field: ours, strictly.
func importFile(data []byte) (File, error) {
	var head struct {
		Format  any `json:"format"`
		Version any `json:"version"`
	}
	json.Unmarshal(data, &head) // members has already read it as an object
	if head.Format != FormatName {
		return File{}, problem("The file's format is %s, not %q.", describe(head.Format), FormatName)
	}
	switch v, ok := head.Version.(float64); {
	case head.Version == nil:
		return File{}, problem("The preset file has no format version.")
	case !ok || v != float64(int(v)):
		return File{}, problem("The preset file's format version is %s, not a whole number.", describe(head.Version))
	case int(v) > FormatVersion:
		return File{}, problem("The preset file has format version %d, from a newer Knobs; this one reads version %d.", int(v), FormatVersion)
	case int(v) != FormatVersion:
		return File{}, problem("The preset file has format version %d, which no Knobs wrote; this one reads version %d.", int(v), FormatVersion)
	}

	// Exact names first: encoding/json would take "Name" for "name".
	if err := knownFields(data, "", "format", "version", "name", "description", "tags", "variables", "spec"); err != nil {
		return File{}, err
	}
	var raw struct {
		Spec json.RawMessage `json:"spec"`
	}
	json.Unmarshal(data, &raw)
	if len(raw.Spec) > 0 && raw.Spec[0] == '{' {
		if err := knownFields(raw.Spec, "spec.", "provider", "endpoint", "body"); err != nil {
			return File{}, err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return File{}, decodeProblem(err)
	}
	if !f.Spec.Endpoint.Valid() {
		return File{}, problem("spec.endpoint must be %q or %q, not %q.", llm.EndpointChat, llm.EndpointCompletion, f.Spec.Endpoint)
	}
	ms, err := members(f.Spec.Body)
	if err != nil {
		return File{}, problem("spec.body must be a JSON object: the request body.")
	}
	f.Spec.Body, f.Dropped = cleanBody(ms)
	names := make([]string, 0, len(f.Variables))
	for name := range f.Variables {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !variableName.MatchString(name) {
			return File{}, problem("variables: %q is not a variable name: a letter or _, then up to 63 letters, digits or _.", name)
		}
	}
	if len(f.Tags) == 0 {
		f.Tags = nil
	}
	if len(f.Variables) == 0 {
		f.Variables = nil
	}
	return f, nil
}

// knownFields fails on the first field of the object raw that is not
// one of names, exactly.
func knownFields(raw []byte, at string, names ...string) error {
	ms, err := members(raw)
	if err != nil {
		return nil // the decoder words it
	}
	for _, m := range ms {
		if !slices.Contains(names, m.key) {
			return problem("The preset file has a field this Knobs does not know: %q.", at+m.key)
		}
	}
	return nil
}

// decodeProblem words an error of strict decoding for the user.
func decodeProblem(err error) error {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if typ.Field == "variables" && typ.Type.Kind() == reflect.String {
			return problem("variables: each default value must be a string, not %s.", article(typ.Value))
		}
		return problem("%s must be %s, not %s.", fieldPath(typ.Field), kind(typ.Type), article(typ.Value))
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return problem("The preset file has a field this Knobs does not know: %s.", f)
	}
	return problem("The preset file cannot be read: %s.", strings.TrimPrefix(err.Error(), "json: "))
}

// fieldPath turns the Go field path of a decoding error into the file's.
func fieldPath(p string) string {
	parts := strings.Split(p, ".")
	for i, s := range parts {
		if len(s) > 0 && s[0] >= 'A' && s[0] <= 'Z' {
			parts[i] = strings.ToLower(s)
		}
	}
	return strings.Join(parts, ".")
}

func kind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int:
		return "a whole number"
	case reflect.Slice:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(kind(t.Elem()), "a "), "an ") + "s"
	case reflect.Map:
		return "an object of " + strings.TrimPrefix(kind(t.Elem()), "a ") + "s"
	case reflect.Struct:
		return "an object"
	}
	return t.String()
}

func article(jsonKind string) string {
	if jsonKind == "array" || jsonKind == "object" {
		return "an " + jsonKind
	}
	return "a " + jsonKind
}

// describe names a decoded JSON value for a message.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "missing"
	case string:
		return fmt.Sprintf("%q", v)
	case float64:
		return fmt.Sprint(v)
	case bool:
		return fmt.Sprintf("%t", v)
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

// importBody reads a raw request body. endpoint is what a curl URL said
// ("" when there was none); the body's shape decides otherwise.
func importBody(ms []member, endpoint llm.Endpoint, provider string) (File, error) {
	var hasMessages, hasPrompt, hasSpec bool
	for _, m := range ms {
		switch m.key {
		case "messages":
			hasMessages = true
		case "prompt":
			hasPrompt = true
		case "spec":
			hasSpec = true
		}
	}
	shape := llm.EndpointChat
	switch {
	case hasMessages && hasPrompt:
		return File{}, problem("The body has both messages (a chat request) and prompt (a completion request); keep one.")
	case hasPrompt:
		shape = llm.EndpointCompletion
	case !hasMessages && hasSpec:
		return File{}, problem(`The file looks like a preset file but has no "format": %q.`, FormatName)
	case !hasMessages:
		return File{}, problem("The JSON is neither a chat request (it has no messages) nor a completion request (it has no prompt).")
	}
	if endpoint != "" && endpoint != shape {
		what := map[llm.Endpoint]string{llm.EndpointChat: "messages", llm.EndpointCompletion: "a prompt"}
		return File{}, problem("The command posts to %s but its body has %s, as sent to %s.", endpoint.Path(), what[shape], shape.Path())
	}
	body, dropped := cleanBody(ms)
	return File{Spec: llm.RunSpec{Provider: provider, Endpoint: shape, Body: body}, Dropped: dropped}, nil
}
