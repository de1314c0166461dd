package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"knobs/ordered"
	"knobs/views"
)

// How far the docs page follows a schema: nested objects to maxDepth
// levels, and at most maxFields lines for one body or answer. A type met
// again inside itself is named, not followed.
const (
	maxDepth  = 4
	maxFields = 200
)

// schemaDocs turns an OpenAPI document's operations and schemas into what
// the docs page shows, resolving $ref into the document's components.
type schemaDocs struct {
	reg huma.Registry
}

func newSchemaDocs(doc *huma.OpenAPI) *schemaDocs {
	s := &schemaDocs{}
	if doc.Components != nil {
		s.reg = doc.Components.Schemas
	}
	return s
}

// operation is op as the page shows it, at method and path (the full path).
func (s *schemaDocs) operation(method, path string, op *huma.Operation) views.APIOperation {
	out := views.APIOperation{ID: op.OperationID, Method: method, Path: path, Summary: op.Summary, Description: op.Description}
	if out.ID == "" {
		out.ID = strings.ToLower(method) + anchorOf(path)
	}
	for _, p := range op.Parameters {
		if p == nil || p.In == "cookie" {
			continue
		}
		out.Params = append(out.Params, views.APIParam{
			Name: p.Name, In: p.In, Type: s.typeOf(p.Schema), Required: p.Required,
			Description: p.Description, Constraints: constraintsOf(s.resolve(p.Schema)), Example: s.paramExample(p),
		})
	}
	if rb := op.RequestBody; rb != nil {
		ct, mt := firstContent(rb.Content)
		body := &views.APIBody{ContentType: ct, Required: rb.Required, Description: rb.Description}
		if mt != nil {
			body.Type = s.typeOf(mt.Schema)
			body.Fields = s.fields(mt.Schema)
			ex := mt.Example
			if ex == nil {
				ex = s.example(mt.Schema, 0, nil)
			}
			body.Example = indentJSON(ex)
		}
		out.Body = body
	}
	codes := make([]string, 0, len(op.Responses))
	for code := range op.Responses {
		codes = append(codes, code)
	}
	// By status, "default" (the error answer) last.
	sort.Slice(codes, func(i, j int) bool {
		if (codes[i] == "default") != (codes[j] == "default") {
			return codes[j] == "default"
		}
		return codes[i] < codes[j]
	})
	for _, code := range codes {
		r := op.Responses[code]
		if r == nil {
			continue
		}
		ct, mt := firstContent(r.Content)
		resp := views.APIResponse{Status: code, Description: r.Description, ContentType: ct}
		if ct == "text/event-stream" {
			out.Stream = true
		}
		if mt != nil && mt.Schema != nil {
			resp.Type = s.typeOf(mt.Schema)
			resp.Fields = s.fields(mt.Schema)
		}
		out.Responses = append(out.Responses, resp)
	}
	// security: [] is an operation that takes no API token (a voting
	// link's call, whose voter is a cookie).
	out.Curl = curlOf(out, op.Security != nil && len(op.Security) == 0)
	return out
}

// firstContent is a body's JSON content when it has one, else its first
// by name.
func firstContent(content map[string]*huma.MediaType) (string, *huma.MediaType) {
	if mt, ok := content["application/json"]; ok {
		return "application/json", mt
	}
	types := make([]string, 0, len(content))
	for ct := range content {
		types = append(types, ct)
	}
	sort.Strings(types)
	if len(types) == 0 {
		return "", nil
	}
	return types[0], content[types[0]]
}

// refName is the component a $ref names: "#/components/schemas/Run" -> "Run".
func refName(ref string) string { return ref[strings.LastIndexByte(ref, '/')+1:] }

// resolve follows sch's $ref into the components; a $ref that does not
// resolve is an empty schema (any value).
func (s *schemaDocs) resolve(sch *huma.Schema) *huma.Schema {
	for i := 0; sch != nil && sch.Ref != "" && i < maxDepth; i++ {
		var next *huma.Schema
		if s.reg != nil {
			next = s.reg.SchemaFromRef(sch.Ref)
		}
		if next == nil {
			return &huma.Schema{}
		}
		sch = next
	}
	if sch == nil || sch.Ref != "" {
		return &huma.Schema{}
	}
	return sch
}

// typeOf names sch's type for a reader: "string (date-time)", "array of
// RunItem", "map of string", "integer or null".
func (s *schemaDocs) typeOf(sch *huma.Schema) string {
	return s.typeAt(sch, 0)
}

func (s *schemaDocs) typeAt(sch *huma.Schema, depth int) string {
	if sch == nil {
		return "any"
	}
	if depth > maxDepth {
		return "…"
	}
	if sch.Ref != "" {
		t := refName(sch.Ref)
		if s.resolve(sch).Nullable {
			t += " or null"
		}
		return t
	}
	var t string
	switch sch.Type {
	case huma.TypeArray:
		t = "array"
		if sch.Items != nil {
			t = "array of " + s.typeAt(sch.Items, depth+1)
		}
	case huma.TypeObject:
		t = "object"
		if ap, ok := sch.AdditionalProperties.(*huma.Schema); ok && ap != nil && len(sch.Properties) == 0 {
			t = "map of " + s.typeAt(ap, depth+1)
		}
	case "":
		alts := sch.OneOf
		if len(alts) == 0 {
			alts = sch.AnyOf
		}
		if len(alts) == 0 {
			if len(sch.Properties) > 0 {
				return "object"
			}
			return "any JSON"
		}
		names := make([]string, 0, len(alts))
		for _, a := range alts {
			names = append(names, s.typeAt(a, depth+1))
		}
		t = strings.Join(names, " or ")
	default:
		t = sch.Type
		if sch.Format != "" {
			t += " (" + sch.Format + ")"
		}
	}
	if sch.Nullable {
		t += " or null"
	}
	return t
}

// fields are the lines the page lists for a body or an answer of schema
// sch: its properties, their properties below them, and so on.
func (s *schemaDocs) fields(sch *huma.Schema) []views.APIField {
	if sch == nil {
		return nil
	}
	w := &fieldWalk{s: s}
	var stack []string
	if sch.Ref != "" {
		stack = []string{sch.Ref}
	}
	w.children(s.resolve(sch), 0, stack)
	return w.out
}

// fieldWalk collects a schema's lines, no more than maxFields.
type fieldWalk struct {
	s   *schemaDocs
	out []views.APIField
}

func (w *fieldWalk) full() bool { return len(w.out) >= maxFields }

// add lists the property name of schema sch at depth, then what is inside
// it; stack holds the $refs being listed, to name a type inside itself
// rather than follow it for ever.
func (w *fieldWalk) add(name string, sch *huma.Schema, required bool, depth int, stack []string) {
	if w.full() {
		return
	}
	r := w.s.resolve(sch)
	f := views.APIField{Depth: depth, Name: name, Type: w.s.typeOf(sch), Required: required, Constraints: constraintsOf(r)}
	f.Description = r.Description
	if sch != nil && sch.Description != "" {
		f.Description = sch.Description
	}
	inner, ref := innerOf(sch, r)
	switch {
	case ref != "" && slices.Contains(stack, ref):
		f.Note = refName(ref) + ", as above."
	case depth+1 >= maxDepth && hasChildren(w.s, inner):
		f.Note = "Its fields are in the OpenAPI document."
	}
	w.out = append(w.out, f)
	if f.Note != "" {
		return
	}
	if ref != "" {
		stack = append(slices.Clip(stack), ref)
	}
	w.children(w.s.resolve(inner), depth+1, stack)
}

// innerOf is the schema whose fields go below a property of schema sch
// (resolved: r): an array's items, a map's values, else r itself; ref is
// the $ref it was reached by, if any.
func innerOf(sch, r *huma.Schema) (inner *huma.Schema, ref string) {
	inner = r
	if sch != nil && sch.Ref != "" {
		ref = sch.Ref
	}
	switch {
	case r.Type == huma.TypeArray && r.Items != nil:
		inner, ref = r.Items, r.Items.Ref
	case r.Type == huma.TypeObject && len(r.Properties) == 0:
		if ap, ok := r.AdditionalProperties.(*huma.Schema); ok && ap != nil {
			inner, ref = ap, ap.Ref
		}
	}
	return inner, ref
}

// hasChildren reports whether the schema has lines of its own to list.
func hasChildren(s *schemaDocs, sch *huma.Schema) bool {
	r := s.resolve(sch)
	return len(r.Properties) > 0 || len(r.OneOf) > 0 || len(r.AnyOf) > 0 || len(r.AllOf) > 0
}

// children lists what is inside the resolved schema r at depth: its
// properties, or each of its alternatives.
func (w *fieldWalk) children(r *huma.Schema, depth int, stack []string) {
	if depth >= maxDepth || r == nil {
		return
	}
	for _, name := range propertyOrder(r) {
		w.add(name, r.Properties[name], slices.Contains(r.Required, name), depth, stack)
	}
	for _, all := range r.AllOf {
		w.children(w.s.resolve(all), depth, stack)
	}
	for _, alt := range append(slices.Clip(r.OneOf), r.AnyOf...) {
		w.add("one of", alt, false, depth, stack)
	}
	if r.Type == huma.TypeArray && r.Items != nil {
		w.add("items", r.Items, false, depth, stack)
	}
}

// propertyOrder is the order r's properties are listed and shown in
// examples: the required ones as the schema lists them, then the rest by
// name.
func propertyOrder(r *huma.Schema) []string {
	names := make([]string, 0, len(r.Properties))
	for _, n := range r.Required {
		if _, ok := r.Properties[n]; ok && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	var rest []string
	for n := range r.Properties {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

// constraintsOf says what values r allows beyond its type.
func constraintsOf(r *huma.Schema) []string {
	if r == nil {
		return nil
	}
	var out []string
	if len(r.Enum) > 0 {
		vals := make([]string, 0, len(r.Enum))
		for _, v := range r.Enum {
			vals = append(vals, jsonText(v))
		}
		out = append(out, "one of "+strings.Join(vals, ", "))
	}
	if r.Default != nil {
		out = append(out, "default "+jsonText(r.Default))
	}
	switch {
	case r.Minimum != nil && r.Maximum != nil:
		out = append(out, number(*r.Minimum)+" to "+number(*r.Maximum))
	case r.Minimum != nil:
		out = append(out, "at least "+number(*r.Minimum))
	case r.Maximum != nil:
		out = append(out, "at most "+number(*r.Maximum))
	}
	if r.ExclusiveMinimum != nil {
		out = append(out, "more than "+number(*r.ExclusiveMinimum))
	}
	if r.ExclusiveMaximum != nil {
		out = append(out, "less than "+number(*r.ExclusiveMaximum))
	}
	if r.MultipleOf != nil {
		out = append(out, "a multiple of "+number(*r.MultipleOf))
	}
	out = appendRange(out, r.MinLength, r.MaxLength, "characters")
	out = appendRange(out, r.MinItems, r.MaxItems, "items")
	out = appendRange(out, r.MinProperties, r.MaxProperties, "keys")
	if r.Pattern != "" {
		p := "matching " + r.Pattern
		if r.PatternDescription != "" {
			p = r.PatternDescription
		}
		out = append(out, p)
	}
	if r.UniqueItems {
		out = append(out, "no item twice")
	}
	if r.ReadOnly {
		out = append(out, "read-only")
	}
	if r.Deprecated {
		out = append(out, "deprecated")
	}
	return out
}

// appendRange adds a length bound: "1 to 100 characters", "at most 100
// items".
func appendRange(out []string, lo, hi *int, unit string) []string {
	switch {
	case lo != nil && hi != nil:
		return append(out, strconv.Itoa(*lo)+" to "+strconv.Itoa(*hi)+" "+unit)
	case lo != nil && *lo > 0:
		return append(out, "at least "+strconv.Itoa(*lo)+" "+unit)
	case hi != nil:
		return append(out, "at most "+strconv.Itoa(*hi)+" "+unit)
	}
	return out
}

func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// jsonText is v as JSON, for enums and defaults.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// example is a value schema sch allows, for the examples and Try it: its
// own example or default when it has one, else its first enum value, else
// one made from its type. Nil when it is a type inside itself.
func (s *schemaDocs) example(sch *huma.Schema, depth int, stack []string) any {
	if sch == nil {
		return map[string]any{}
	}
	if sch.Ref != "" {
		if slices.Contains(stack, sch.Ref) {
			return nil
		}
		stack = append(slices.Clip(stack), sch.Ref)
	}
	r := s.resolve(sch)
	switch {
	case len(r.Examples) > 0:
		return r.Examples[0]
	case r.Default != nil:
		return r.Default
	case len(r.Enum) > 0:
		return r.Enum[0]
	case depth > maxDepth:
		return nil
	}
	switch r.Type {
	case huma.TypeString:
		switch r.Format {
		case "date-time":
			return "2026-01-01T12:00:00Z"
		case "date":
			return "2026-01-01"
		}
		return "string"
	case huma.TypeInteger:
		if r.Minimum != nil {
			return int64(*r.Minimum)
		}
		return 1
	case huma.TypeNumber:
		if r.Minimum != nil {
			return *r.Minimum
		}
		return 0.5
	case huma.TypeBoolean:
		return false
	case huma.TypeArray:
		if v := s.example(r.Items, depth+1, stack); v != nil {
			return []any{v}
		}
		return []any{}
	}
	if len(r.OneOf) > 0 {
		return s.example(r.OneOf[0], depth+1, stack)
	}
	if len(r.AnyOf) > 0 {
		return s.example(r.AnyOf[0], depth+1, stack)
	}
	obj := ordered.NewObject()
	for _, name := range propertyOrder(r) {
		if v := s.example(r.Properties[name], depth+1, stack); v != nil {
			obj.Set(name, v)
		}
	}
	if ap, ok := r.AdditionalProperties.(*huma.Schema); ok && ap != nil && len(r.Properties) == 0 {
		if v := s.example(ap, depth+1, stack); v != nil {
			obj.Set("key", v)
		}
	}
	return obj
}

// paramExample is the value a parameter starts with in the examples: a
// path parameter needs one; the others are left out of them.
func (s *schemaDocs) paramExample(p *huma.Param) string {
	v := p.Example
	if v == nil {
		v = s.example(p.Schema, 0, nil)
	}
	if str, ok := v.(string); ok {
		return str
	}
	return jsonText(v)
}

// indentJSON is v as indented JSON, with <, > and & as they are.
func indentJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "{}"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// curlOf is a curl command for op with the example values, the server
// and token from $KNOBS_URL and $KNOBS_TOKEN; for an operation that
// takes no token (noToken), its cookies kept in a file from call to call
// instead, as a voting link's voter is.
func curlOf(op views.APIOperation, noToken bool) string {
	path := op.Path
	var query []string
	for _, p := range op.Params {
		switch {
		case p.In == "path":
			path = strings.ReplaceAll(path, "{"+p.Name+"}", p.Example)
		case p.In == "query" && p.Required:
			query = append(query, url.QueryEscape(p.Name)+"="+url.QueryEscape(p.Example))
		}
	}
	if len(query) > 0 {
		path += "?" + strings.Join(query, "&")
	}
	var b strings.Builder
	b.WriteString("curl")
	if op.Stream {
		b.WriteString(" -N")
	}
	if op.Method != "GET" {
		b.WriteString(" -X " + op.Method)
	}
	b.WriteString(` "$KNOBS_URL` + path + `"`)
	if noToken {
		b.WriteString(" \\\n  -b knobs-cookies.txt -c knobs-cookies.txt")
	} else {
		b.WriteString(" \\\n  -H \"Authorization: Bearer $KNOBS_TOKEN\"")
	}
	if op.Stream {
		b.WriteString(" \\\n  -H \"Accept: text/event-stream\"")
	}
	if op.Body != nil {
		b.WriteString(" \\\n  -H \"Content-Type: " + op.Body.ContentType + "\"")
		b.WriteString(" \\\n  -d '" + strings.ReplaceAll(op.Body.Example, "'", `'\''`) + "'")
	}
	return b.String()
}
