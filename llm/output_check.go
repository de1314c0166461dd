package llm

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"knobs/ordered"
)

// OutputCheck says whether an answer is the JSON its request asked for.
type OutputCheck struct {
	JSON    bool   `json:"json"` // the request asked for JSON output
	Valid   bool   `json:"valid"`
	Message string `json:"message"`
}

// CheckOutput checks output against the response_format of a request
// body: valid JSON for json_object, and an instance of the schema for
// json_schema. It is nil when the request did not ask for JSON.
func CheckOutput(body json.RawMessage, output string) *OutputCheck {
	var b struct {
		ResponseFormat *struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if json.Unmarshal(body, &b) != nil || b.ResponseFormat == nil {
		return nil
	}
	rf := b.ResponseFormat
	if rf.Type != "json_object" && rf.Type != "json_schema" {
		return nil
	}
	if ordered.Depth([]byte(output)) > ordered.MaxDepth {
		// The validator recurses into the answer; an upstream's answer is
		// not trusted to be shallow.
		return &OutputCheck{JSON: true, Message: "not checked: the answer is " + (&ordered.DepthError{}).Error()}
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(output))
	if err != nil {
		return &OutputCheck{JSON: true, Message: "not valid JSON: " + err.Error()}
	}
	if rf.Type == "json_object" || rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
		return &OutputCheck{JSON: true, Valid: true, Message: "valid JSON"}
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(rf.JSONSchema.Schema)))
	if err != nil {
		return &OutputCheck{JSON: true, Valid: true, Message: "valid JSON (the schema itself could not be read)"}
	}
	const loc = "urn:knobs:output-schema"
	c := jsonschema.NewCompiler()
	c.UseLoader(refusingLoader{})
	c.UseRegexpEngine(schemaRegexp)
	c.DefaultDraft(jsonschema.Draft2020)
	var schema *jsonschema.Schema
	if err = c.AddResource(loc, doc); err == nil {
		schema, err = c.Compile(loc)
	}
	if err != nil {
		return &OutputCheck{JSON: true, Valid: true, Message: "valid JSON (the schema does not compile, so it was not checked)"}
	}
	if err := schema.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		msg := err.Error()
		if errors.As(err, &ve) {
			var leaves []string
			collectLeaves(ve, &leaves)
			if len(leaves) > 0 {
				msg = leaves[0]
			}
		}
		return &OutputCheck{JSON: true, Message: "does not match the schema: " + strings.ReplaceAll(msg, loc, "")}
	}
	return &OutputCheck{JSON: true, Valid: true, Message: "valid JSON, matches the schema"}
}

// WireBody is the body as a client of dialect d sends it: the user's body
// with the stream fields Knobs sets. Code snippets show exactly this.
func WireBody(d Dialect, body json.RawMessage) ([]byte, error) {
	b, _, err := streamBody(body, dialectOf(d).includeUsage)
	return b, err
}
