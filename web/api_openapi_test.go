package web_test

// The OpenAPI document and the server must not drift apart: the document
// parses and its references resolve, every /api/v1 route the app serves
// is in it and every operation in it is served, and its errors have the
// project's shape.

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
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

	// What the document lists: "GET /api/v1/tokens/:id", as Fiber names it.
	param := regexp.MustCompile(`\{([^}]+)\}`)
	documented := map[string]bool{}
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			documented[strings.ToUpper(method)+" /api/v1"+param.ReplaceAllString(path, ":$1")] = true
			if op.OperationId == "" || op.Summary == "" {
				t.Errorf("%s %s has no operationId or summary", method, path)
			}
			if op.Responses == nil || op.Responses.Default == nil {
				t.Errorf("%s %s documents no error answer", method, path)
			}
		}
	}
	// What the app serves under /api/v1 (middleware aside).
	served := map[string]bool{}
	for _, r := range srv.app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/api/v1/") || r.Method == http.MethodHead {
			continue
		}
		served[r.Method+" "+r.Path] = true
	}
	// The document itself is the one route it does not describe.
	delete(served, "GET /api/v1/openapi.json")
	for _, want := range []string{"GET /api/v1/providers", "POST /api/v1/tokens", "GET /api/v1/tokens", "DELETE /api/v1/tokens/:id",
		"POST /api/v1/runs", "GET /api/v1/runs", "GET /api/v1/runs/:id", "POST /api/v1/runs/:id/cancel", "DELETE /api/v1/runs/:id", "GET /api/v1/runs/:id/events"} {
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
