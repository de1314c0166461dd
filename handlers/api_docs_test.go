package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"knobs/views"
)

// docNode is a type inside itself, as a tree of presets might be one day.
type docNode struct {
	Name     string    `json:"name" minLength:"1" doc:"The node's <b>name</b> & <script>alert(1)</script>."`
	Children []docNode `json:"children"`
	Parent   *docNode  `json:"parent,omitempty"`
}

// A schema that holds itself is listed once, its inner uses named rather
// than followed, its example ends, and the document's text is escaped on
// the page.
func TestAPIDocsFollowSchemasOnceAndEscapeText(t *testing.T) {
	reg := huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer)
	node := reg.Schema(reflect.TypeFor[docNode](), true, "")
	doc := &huma.OpenAPI{
		OpenAPI: "3.1.0", Info: &huma.Info{Title: "Test <API>", Version: "1"},
		Servers:    []*huma.Server{{URL: "/api/v1"}},
		Components: &huma.Components{Schemas: reg},
	}
	doc.AddOperation(&huma.Operation{
		OperationID: "make-node", Method: "POST", Path: "/nodes/{id}", Tags: []string{"Nodes"},
		Summary: "Make a <node>", Description: `It answers "201" & the node.`,
		Parameters:  []*huma.Param{{Name: "id", In: "path", Required: true, Schema: &huma.Schema{Type: huma.TypeInteger, Minimum: new(7.0)}}},
		RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"application/json": {Schema: node}}},
		Responses:   map[string]*huma.Response{"201": {Description: "Made", Content: map[string]*huma.MediaType{"application/json": {Schema: node}}}},
	})

	docs := apiDocsOf(doc, "/api/v1/openapi.json")
	if len(docs.Groups) != 1 || len(docs.Groups[0].Operations) != 1 {
		t.Fatalf("groups %+v, want Nodes with one operation", docs.Groups)
	}
	op := docs.Groups[0].Operations[0]
	if op.Path != "/api/v1/nodes/{id}" || op.ID != "make-node" {
		t.Errorf("operation %s %s #%s", op.Method, op.Path, op.ID)
	}
	var lines []string
	for _, f := range op.Body.Fields {
		lines = append(lines, strings.Repeat(".", f.Depth)+f.Name+" "+f.Type+" "+f.Note)
	}
	want := []string{"name string ", "children array of DocNode or null DocNode, as above.", "parent DocNode DocNode, as above."}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("the body's fields are\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if !json.Valid([]byte(op.Body.Example)) || !strings.Contains(op.Body.Example, `"name": "string"`) {
		t.Errorf("the example body is %s", op.Body.Example)
	}
	if !strings.Contains(op.Curl, `"$KNOBS_URL/api/v1/nodes/7"`) || !strings.Contains(op.Curl, "$KNOBS_TOKEN") {
		t.Errorf("the curl example is\n%s", op.Curl)
	}

	var page bytes.Buffer
	err := views.APIDocsPage(views.APIDocsView{Page: views.Page{Title: "API"}, Origin: "http://knobs.test", TryIt: true, Docs: docs}).Render(context.Background(), &page)
	if err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, raw := range []string{"<script>alert", "<b>name", "<node>", "<API>"} {
		if strings.Contains(html, raw) {
			t.Errorf("the page has the document's %q as HTML", raw)
		}
	}
	for _, escaped := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;name&lt;/b&gt; &amp;", "Make a &lt;node&gt;", "It answers &#34;201&#34; &amp; the node."} {
		if !strings.Contains(html, escaped) {
			t.Errorf("the page does not show %q", escaped)
		}
	}
}
