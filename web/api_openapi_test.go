package web_test

// The OpenAPI document and the server must not drift apart: the document
// parses and its references resolve, every /api/v1 route the app serves
// is in it and every operation in it is served, and its errors have the
// project's shape.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestOpenAPIDocumentMatchesTheRoutes(t *testing.T) {
	t.Parallel()
	srv := newServer(t)

	// Open to anyone: it describes the API and holds nothing of a user.
	a := srv.apiCall(t, "GET", "/api/v1/openapi.json", "", nil)
	if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
		t.Fatalf("openapi.json: %d %s: %.300s", a.status, a.header.Get("Content-Type"), a.body)
	}
	doc, err := libopenapi.NewDocument([]byte(a.body))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("the document does not build (a reference that does not resolve?): %v", err)
	}
	if v := doc.GetVersion(); !strings.HasPrefix(v, "3.1") {
		t.Errorf("OpenAPI version %q, want 3.1", v)
	}
	if len(model.Model.Servers) != 1 || model.Model.Servers[0].URL != "/api/v1" {
		t.Fatalf("servers: %+v, want /api/v1", model.Model.Servers)
	}

	// What the document lists: "GET /api/v1/tokens/:id", as Fiber names
	// it, at the operation's own server when it has one (a voting link's
	// calls, at the site's root).
	param := regexp.MustCompile(`\{([^}]+)\}`)
	documented := map[string]bool{}
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			prefix := "/api/v1"
			if len(op.Servers) > 0 {
				prefix = strings.TrimSuffix(op.Servers[0].URL, "/")
			}
			documented[strings.ToUpper(method)+" "+prefix+param.ReplaceAllString(path, ":$1")] = true
			if op.OperationId == "" || op.Summary == "" {
				t.Errorf("%s %s has no operationId or summary", method, path)
			}
			if op.Responses == nil || op.Responses.Default == nil {
				t.Errorf("%s %s documents no error answer", method, path)
			}
		}
	}
	// What the app serves under /api/v1 and a voting link, /a/:token/
	// (middleware aside).
	served := map[string]bool{}
	for _, r := range srv.app.GetRoutes(true) {
		if !(strings.HasPrefix(r.Path, "/api/v1/") || strings.HasPrefix(r.Path, "/a/")) || r.Method == http.MethodHead {
			continue
		}
		served[r.Method+" "+r.Path] = true
	}
	// The document itself and the voting page (HTML) are the routes it
	// does not describe.
	delete(served, "GET /api/v1/openapi.json")
	delete(served, "GET /a/:token")
	for _, want := range []string{"GET /api/v1/providers", "POST /api/v1/tokens", "GET /api/v1/tokens", "DELETE /api/v1/tokens/:id",
		"POST /api/v1/runs", "GET /api/v1/runs", "GET /api/v1/runs/:id", "POST /api/v1/runs/:id/cancel", "DELETE /api/v1/runs/:id", "GET /api/v1/runs/:id/events",
		"GET /a/:token/pair", "POST /a/:token/vote", "POST /a/:token/prompt"} {
		if !served[want] {
			t.Errorf("%s is not served", want)
		}
	}
	for r := range served {
		if !documented[r] {
			t.Errorf("%s is served but not in the document", r)
		}
	}
	for r := range documented {
		if !served[r] {
			t.Errorf("%s is in the document but not served", r)
		}
	}
	if t.Failed() {
		t.Logf("served: %v\ndocumented: %v", keys(served), keys(documented))
	}

	// Errors are described as they are sent: {"error", "fields"}.
	var raw struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
			SecuritySchemes map[string]struct {
				Type   string `json:"type"`
				Scheme string `json:"scheme"`
			} `json:"securitySchemes"`
		} `json:"components"`
	}
	a.json(t, &raw)
	def := raw.Paths["/tokens"]["post"].Responses["default"].Content
	var ref string
	for _, c := range def {
		ref = c.Schema.Ref
	}
	errSchema := raw.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
	if errSchema.Properties["error"] == nil || errSchema.Properties["fields"] == nil {
		t.Errorf("the error answer's schema %q is not {error, fields}: %v", ref, errSchema.Properties)
	}
	if s := raw.Components.SecuritySchemes["token"]; s.Type != "http" || s.Scheme != "bearer" {
		t.Errorf("the bearer token is not described: %+v", raw.Components.SecuritySchemes)
	}
	if strings.Contains(a.body, "$schema") || strings.Contains(a.body, "cdn") {
		t.Errorf("the document links schemas or a CDN")
	}
}

func TestAPIHasNoDocsPageFromACDN(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	for _, p := range []string{"/api/v1/docs", "/api/v1/openapi.yaml", "/api/v1/schemas/Problem.json"} {
		a := srv.apiCall(t, "GET", p, "", nil)
		if a.status == http.StatusOK {
			t.Errorf("%s is served: %.200s", p, a.body)
		}
	}
	// An unknown API path is a JSON 404 for a signed-in caller, not a page.
	_, admin := srv, srv.newClient(t)
	admin.signUp("admin", "")
	a := admin.apiCall("GET", "/api/v1/nothing-here", nil, false)
	wantAPIError(t, "unknown API path", a, http.StatusNotFound)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// A voting link's calls are in the document at the site's root, under
// Voting, with no API token required; their answers' schemas name no
// contestant, model or provider (the pair not even a name); what a voter
// really gets fits those schemas, field for field; and the docs page
// gives a curl example at the site's root that keeps the voter's cookie.
func TestOpenAPIDocumentsTheVotingCalls(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	ar := srv.makeArena(t, tok, "public")

	a := srv.apiCall(t, "GET", "/api/v1/openapi.json", "", nil)
	type content map[string]struct {
		Schema map[string]any `json:"schema"`
	}
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string   `json:"operationId"`
			Tags        []string `json:"tags"`
			Servers     []struct {
				URL string `json:"url"`
			} `json:"servers"`
			Security  *[]json.RawMessage `json:"security"`
			Responses map[string]struct {
				Content content `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	a.json(t, &doc)

	// Every property name a schema has, following $ref into the components.
	var names func(v any, seen map[string]bool, out map[string]bool)
	names = func(v any, seen map[string]bool, out map[string]bool) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok && !seen[ref] {
				seen[ref] = true
				names(doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")], seen, out)
			}
			if props, ok := v["properties"].(map[string]any); ok {
				for name := range props {
					out[name] = true
				}
			}
			for _, x := range v {
				names(x, seen, out)
			}
		case []any:
			for _, x := range v {
				names(x, seen, out)
			}
		}
	}
	answerRef := map[string]string{}
	for path, item := range doc.Paths {
		if !strings.HasPrefix(path, "/a/") {
			continue
		}
		for method, op := range item {
			if len(op.Tags) != 1 || op.Tags[0] != "Voting" {
				t.Errorf("%s %s: tags %v, want Voting", method, path, op.Tags)
			}
			if len(op.Servers) != 1 || op.Servers[0].URL != "/" {
				t.Errorf("%s %s: servers %+v, want the site's root", method, path, op.Servers)
			}
			if op.Security == nil || len(*op.Security) != 0 {
				t.Errorf("%s %s: security %v, want [] (no API token)", method, path, op.Security)
			}
			for code, r := range op.Responses {
				if !strings.HasPrefix(code, "2") {
					continue
				}
				found := map[string]bool{}
				for _, c := range r.Content {
					names(c.Schema, map[string]bool{}, found)
				}
				for name := range found {
					for _, leak := range []string{"contestant", "model", "provider", "endpoint", "preset", "latency", "duration", "usage", "cost", "run", "_ms"} {
						if strings.Contains(name, leak) {
							t.Errorf("%s %s's %s answer has a field %q", method, path, code, name)
						}
					}
				}
				if op.OperationID == "get-voting-pair" && found["name"] {
					t.Errorf("the pair's schema has a name before the vote: %v", keys(found))
				}
				if ct, ok := r.Content["application/json"]; ok {
					answerRef[op.OperationID], _ = ct.Schema["$ref"].(string)
				}
			}
		}
	}
	if answerRef["get-voting-pair"] == "" || answerRef["vote"] == "" || answerRef["add-voting-prompt"] == "" {
		t.Fatalf("the voting calls' JSON answers documented: %v", answerRef)
	}

	// A voter signed out, at the documented paths from the site's root:
	// the pair and the reveal fit their schemas, which allow no other field.
	schemas := jsonschema.NewCompiler()
	schemas.DefaultDraft(jsonschema.Draft2020)
	whole, err := jsonschema.UnmarshalJSON(strings.NewReader(a.body))
	if err != nil {
		t.Fatal(err)
	}
	if err := schemas.AddResource("mem:///openapi.json", whole); err != nil {
		t.Fatal(err)
	}
	fits := func(what, ref, body string) {
		t.Helper()
		s, err := schemas.Compile("mem:///openapi.json" + ref)
		if err != nil {
			t.Fatalf("%s's schema %s: %v", what, ref, err)
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
		if err != nil {
			t.Fatalf("%s is not JSON: %v: %s", what, err, body)
		}
		if err := s.Validate(v); err != nil {
			t.Errorf("%s does not fit its schema %s: %v\n%s", what, ref, err, body)
		}
	}
	token := strings.TrimPrefix(ar.Link, "/a/")
	v := voter{srv.newClient(t)}
	pair := v.c.get(strings.ReplaceAll("/a/{token}/pair", "{token}", token))
	if pair.status != http.StatusOK {
		t.Fatalf("the pair: %d %s", pair.status, pair.body)
	}
	fits("the pair", answerRef["get-voting-pair"], pair.body)
	var p struct {
		PairID int64 `json:"pair_id"`
	}
	if err := decodeJSON(pair.body, &p); err != nil || p.PairID == 0 {
		t.Fatalf("the pair's id: %v %s", err, pair.body)
	}
	reveal, _ := v.vote(t, ar.Link, fmt.Sprintf(`{"pair_id":%d,"choice":"b","reason":"clearer"}`, p.PairID))
	if reveal.status != http.StatusOK || !strings.Contains(reveal.body, `"name":"`) {
		t.Fatalf("the reveal: %d %s", reveal.status, reveal.body)
	}
	fits("the reveal", answerRef["vote"], reveal.body)

	// The docs page: a Voting group, each call at the site's root, its
	// curl example without /api/v1 or an API token.
	page := srv.newClient(t).get("/api")
	wantPage(t, page, http.StatusOK, `id="tag-voting"`, `id="get-voting-pair"`, `id="vote"`, `id="add-voting-prompt"`)
	if strings.Contains(page.body, "/api/v1/a/") {
		t.Errorf("the docs page puts a voting call under /api/v1")
	}
	op := section(page.body, `id="get-voting-pair"`, "</article>")
	for _, want := range []string{"$KNOBS_URL/a/q3XvL0aB3cD4eF5gH6iJ7k/pair", "-b knobs-cookies.txt -c knobs-cookies.txt"} {
		if !strings.Contains(op, want) {
			t.Errorf("the pair's curl example has no %q:\n%s", want, op)
		}
	}
	if strings.Contains(op, "KNOBS_TOKEN") {
		t.Errorf("the pair's curl example sends an API token:\n%s", op)
	}
}
