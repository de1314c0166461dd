package llm

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The checks of response_format and the JSON Schemas it carries: compiled
// with santhosh-tekuri/jsonschema, with $ref to files or URLs refused.

func (v *validator) responseFormat(obj map[string]any) {
	t, ok := obj["type"].(string)
	switch {
	case !ok:
		v.errs.Add("response_format.type", "response_format.type is required: text, json_object or json_schema")
		return
	case t == "text" || t == "json_object":
		v.extraKeys("response_format", obj, "type")
		return
	case t != "json_schema":
		v.errs.Add("response_format.type", fmt.Sprintf("response_format.type must be text, json_object or json_schema, not %q", t))
		return
	}
	v.extraKeys("response_format", obj, "type", "json_schema")
	const at = "response_format.json_schema"
	js, ok := obj["json_schema"].(map[string]any)
	if !ok {
		v.errs.Add(at, "response_format of type json_schema needs a json_schema object with a name and a schema")
		return
	}
	v.extraKeys(at, js, "name", "description", "schema", "strict")
	name, ok := js["name"].(string)
	switch {
	case !ok:
		v.errs.Add(at+".name", "json_schema.name is required")
	case !nameRE.MatchString(name):
		v.errs.Add(at+".name", "json_schema.name must be 1 to 64 letters, digits, underscores or dashes")
	}
	if d, ok := js["description"]; ok && d != nil {
		if _, ok := d.(string); !ok {
			v.errs.Add(at+".description", "json_schema.description must be a string")
		}
	}
	if s, ok := js["strict"]; ok && s != nil {
		if _, ok := s.(bool); !ok {
			v.errs.Add(at+".strict", "json_schema.strict must be true or false")
		}
	}
	if s, ok := js["schema"]; ok && s != nil {
		if _, ok := s.(map[string]any); !ok {
			v.errs.Add(at+".schema", "json_schema.schema must be a JSON Schema object, not "+describeJSON(s))
		} else if msg := schemaProblem(s); msg != "" {
			v.errs.Add(at+".schema", msg)
		}
	}
}

// schemaProblem compiles a JSON Schema given by the user and returns the
// library's account of what is wrong with it, or "".
func schemaProblem(doc any) string {
	const loc = "urn:knobs:schema"
	c := jsonschema.NewCompiler()
	// The schema comes from a user: a $ref must not make the server read
	// its own files or fetch URLs.
	c.UseLoader(refusingLoader{})
	c.UseRegexpEngine(schemaRegexp)
	c.DefaultDraft(jsonschema.Draft2020)
	err := c.AddResource(loc, doc)
	if err == nil {
		_, err = c.Compile(loc)
	}
	if err == nil {
		return ""
	}
	var ve *jsonschema.SchemaValidationError
	var inner *jsonschema.ValidationError
	if errors.As(err, &ve) && errors.As(ve.Err, &inner) {
		var leaves []string
		collectLeaves(inner, &leaves)
		return "not a valid JSON Schema: " + strings.Join(leaves, "; ")
	}
	var le *jsonschema.LoadURLError
	if errors.As(err, &le) {
		return fmt.Sprintf("not a usable JSON Schema: $ref %q points outside the schema, which Knobs does not load", strings.ReplaceAll(le.URL, loc, ""))
	}
	return "not a valid JSON Schema: " + strings.ReplaceAll(err.Error(), loc, "")
}

// collectLeaves keeps the innermost causes, which name the keyword at fault;
// the outer ones only say that an allOf or anyOf of the metaschema failed.
func collectLeaves(e *jsonschema.ValidationError, out *[]string) {
	if len(e.Causes) == 0 {
		*out = append(*out, e.Error())
		return
	}
	for _, c := range e.Causes {
		collectLeaves(c, out)
	}
}

// ecmaOnly matches the regex syntax of ECMA-262 (the dialect JSON Schema
// patterns are written in) that Go's RE2 lacks: lookaround and
// backreferences.
var ecmaOnly = regexp.MustCompile(`\(\?<?[=!]|\\[1-9]|\\k<`)

// schemaRegexp compiles a schema's patterns with Go's regexp, but lets a
// pattern that only fails for want of ECMA-262 features pass: it is a valid
// schema, and the provider's engine is not Go's.
func schemaRegexp(s string) (jsonschema.Regexp, error) {
	re, err := regexp.Compile(s)
	if err == nil {
		return re, nil
	}
	if ecmaOnly.MatchString(s) {
		return uncheckedRegexp(s), nil
	}
	return nil, err
}

type uncheckedRegexp string

func (r uncheckedRegexp) String() string { return string(r) }

// MatchString is never called: Knobs compiles a schema only to check it.
func (r uncheckedRegexp) MatchString(string) bool { return true }

type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, errors.New("external schemas are not loaded")
}
