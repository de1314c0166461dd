package web_test

// The /api page is made from the OpenAPI document the server serves: it
// lists every operation of it, with its anchor, shows the document's text
// escaped, offers Try it only to a signed-in user, and its example bodies
// are accepted by the API they describe.

import (
	"encoding/json"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// documentedOperation is one operation as the OpenAPI document lists it;
// noToken when it takes no API token (security: [], a voting link's call).
type documentedOperation struct {
	method, path, id string
	noToken          bool
}

// openAPIOperations reads the served document's operations and every
// summary and description in it.
func openAPIOperations(t *testing.T, s *server) (ops []documentedOperation, texts []string) {
	t.Helper()
	a := s.apiCall(t, "GET", "/api/v1/openapi.json", "", nil)
	var doc struct {
		Servers []struct{ URL string } `json:"servers"`
		Paths   map[string]map[string]struct {
			OperationID string
			Servers     []struct{ URL string } `json:"servers"`
			Security    *[]json.RawMessage     `json:"security"`
		} `json:"paths"`
	}
	a.json(t, &doc)
	if len(doc.Servers) != 1 {
		t.Fatalf("the document has servers %+v, want one", doc.Servers)
	}
	for path, item := range doc.Paths {
		for method, op := range item {
			// An operation's own server (the site's root) comes before the
			// document's.
			server := doc.Servers[0].URL
			if len(op.Servers) > 0 {
				server = strings.TrimSuffix(op.Servers[0].URL, "/")
			}
			noToken := op.Security != nil && len(*op.Security) == 0
			ops = append(ops, documentedOperation{strings.ToUpper(method), server + path, op.OperationID, noToken})
		}
	}
	var raw any
	a.json(t, &raw)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "description" || k == "summary") {
					texts = append(texts, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(raw)
	if len(ops) < 10 {
		t.Fatalf("the document lists only %d operations: %+v", len(ops), ops)
	}
	return ops, texts
}

// apiDocsArticles are the page's operations by their anchor: the HTML of
// each <article>.
func apiDocsArticles(t *testing.T, page string) map[string]string {
	t.Helper()
	out := map[string]string{}
	id := regexp.MustCompile(`^<article class="card api-op" id="([^"]+)"`)
	for _, part := range strings.Split(page, "<article ")[1:] {
		part = "<article " + part
		end := strings.Index(part, "</article>")
		m := id.FindStringSubmatch(part)
		if end < 0 || m == nil {
			t.Fatalf("an operation on the page is not an <article id=…>: %.200s", part)
		}
		if _, dup := out[m[1]]; dup {
			t.Errorf("the anchor %q is on the page twice", m[1])
		}
		out[m[1]] = part[:end]
	}
	return out
}

func TestAPIDocsPageListsEveryOperationOfTheDocument(t *testing.T) {
	t.Parallel()
	s, admin := newTeam(t)
	ops, texts := openAPIOperations(t, s)

	// Anyone may read it: no sign-in, no Try it.
	r := s.newClient(t).get("/api")
	wantPage(t, r, http.StatusOK, "Getting started", "Authorization: Bearer knobs_…", `href="/api/v1/openapi.json"`, "X-CSRF-Token", "next_cursor")
	if r.has("data-try") || r.has("apidocs.js") {
		t.Errorf("a signed-out visitor is offered Try it")
	}
	arts := apiDocsArticles(t, r.body)
	if len(arts) != len(ops) {
		t.Errorf("the page shows %d operations, the document has %d", len(arts), len(ops))
	}
	for _, op := range ops {
		art, ok := arts[op.id]
		if !ok {
			t.Errorf("%s %s (%s) is not on the page", op.method, op.path, op.id)
			continue
		}
		if !strings.Contains(art, ">"+op.method+"</span>") || !strings.Contains(art, `<code class="api-path">`+html.EscapeString(op.path)+"</code>") {
			t.Errorf("the operation #%s does not say %s %s: %.300s", op.id, op.method, op.path, art)
		}
		if !strings.Contains(r.body, `href="#`+op.id+`"`) {
			t.Errorf("the contents do not link #%s", op.id)
		}
		switch {
		case !strings.Contains(art, "curl"):
			t.Errorf("#%s has no curl example", op.id)
		case op.noToken && (strings.Contains(art, "$KNOBS_TOKEN") || !strings.Contains(art, "-c knobs-cookies.txt")):
			t.Errorf("#%s takes no API token, but its curl example does not keep cookies instead", op.id)
		case !op.noToken && !strings.Contains(art, "$KNOBS_TOKEN"):
			t.Errorf("#%s has no curl example with $KNOBS_TOKEN", op.id)
		}
	}

	// The document's text is shown as text: a description with <, > or "
	// is escaped, never HTML of the page.
	special := 0
	for _, text := range texts {
		if !strings.ContainsAny(text, `<>&"`) {
			continue
		}
		special++
		if !strings.Contains(r.body, html.EscapeString(text)) {
			t.Errorf("the page does not show %q escaped", text)
		}
		if strings.ContainsAny(text, "<>") && strings.Contains(r.body, text) {
			t.Errorf("the page has %q as raw HTML", text)
		}
	}
	if special == 0 {
		t.Fatal("no description of the document has <, >, & or \": nothing shows the escaping")
	}

	// Signed in: Try it on every operation, and a link from Settings.
	r = admin.get("/api")
	wantPage(t, r, http.StatusOK, `src="/static/js/apidocs.js"`)
	for id, art := range apiDocsArticles(t, r.body) {
		if !strings.Contains(art, "data-try") {
			t.Errorf("#%s has no Try it for a signed-in user", id)
		}
	}
	wantPage(t, admin.get("/settings"), http.StatusOK, `href="/api"`)

	// The example body is one the API takes: Try it's starting body for
	// POST /tokens makes a token.
	body := regexp.MustCompile(`(?s)<textarea id="create-token-body"[^>]*>(.*?)</textarea>`).FindStringSubmatch(r.body)
	if body == nil {
		t.Fatal("POST /api/v1/tokens has no example body")
	}
	example := html.UnescapeString(body[1])
	if !json.Valid([]byte(example)) {
		t.Fatalf("the example body is not JSON: %s", example)
	}
	write := admin.makeToken("docs", "write", nil)
	if a := s.apiCall(t, "POST", "/api/v1/tokens", write.Token, example); a.status != http.StatusCreated {
		t.Errorf("the page's example body %s: %d %s", example, a.status, a.body)
	}
	if strings.Contains(r.body, write.Token) {
		t.Errorf("the page shows a real token")
	}
}
