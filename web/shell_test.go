package web_test

import (
	"bufio"
	"fmt"
	"io"
	"knobs/web"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestShell(t *testing.T) {
	t.Parallel()
	_, admin := newTeam(t)

	for _, tt := range []struct{ path, nav, heading, line string }{
		{"/compare", "Compare", "<h1>Compare</h1>", `id="cmp-run"`},
		{"/presets", "Presets", "<h1>Presets</h1>", "No presets yet."},
		{"/history", "History", "<h1>History</h1>", "No runs yet."},
	} {
		r := admin.get(tt.path)
		wantPage(t, r, http.StatusOK, tt.heading, tt.line,
			`<meta name="csrf-token" content="`+admin.csrf+`"`,
			`href="`+tt.path+`" aria-current="page">`+tt.nav+`</a>`,
			`<span class="username">admin</span>`, `action="/logout"`, `href="/static/css/knobs.css"`)
		for _, item := range []string{`href="/">Playground</a>`, `href="/compare"`, `href="/presets"`, `href="/history"`, `href="/settings"`} {
			if !r.has(item) {
				t.Errorf("%s: the navigation lacks %s", tt.path, item)
			}
		}
		if strings.Count(r.body, `aria-current="page"`) != 1 {
			t.Errorf("%s: %d navigation entries marked current, want 1", tt.path, strings.Count(r.body, `aria-current="page"`))
		}
		if ct := r.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", tt.path, ct)
		}
		for h, want := range map[string]string{
			"X-Content-Type-Options": "nosniff",
			"X-Frame-Options":        "DENY",
			"Referrer-Policy":        "same-origin",
		} {
			if got := r.header.Get(h); got != want {
				t.Errorf("%s: %s %q, want %q", tt.path, h, got, want)
			}
		}
		if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: Content-Security-Policy %q", tt.path, csp)
		}
	}
	wantPage(t, admin.get("/settings"), http.StatusOK, `href="/settings" aria-current="page">Settings</a>`)

	// Signed out, the bar has no navigation.
	r := admin.srv.newClient(t).get("/login")
	if r.has(`class="mainnav"`) || r.has("Signed in as") {
		t.Errorf("the sign-in page shows the navigation")
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	for _, path := range []string{"/no-such-page", "/settings/nothing", "/static/no-such.css"} {
		r := admin.get(path)
		wantPage(t, r, http.StatusNotFound, "<h1>Not found</h1>", "There is nothing at this address.",
			`<nav class="mainnav"`, `<meta name="csrf-token"`, `href="/static/css/knobs.css"`)
	}
	// A POST to no route is a 404 too, not a 500.
	wantPage(t, admin.postForm("/no-such-action", nil), http.StatusNotFound, "There is nothing at this address.")
	// An API client gets JSON.
	req, _ := http.NewRequest(http.MethodGet, srv.url+"/no-such-page", nil)
	req.Header.Set("Accept", "application/json")
	r := admin.do(req)
	if r.status != http.StatusNotFound || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || r.body != `{"error":"There is nothing at this address."}` {
		t.Errorf("JSON 404: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	if strings.Contains(srv.log.String(), "level=ERROR") {
		t.Errorf("a 404 was logged as an error:\n%s", srv.log.String())
	}
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := srv.newClient(t)
	r := c.get("/healthz")
	if r.status != http.StatusOK || r.body != "ok\n" {
		t.Errorf("healthz: %d %q, want 200 ok", r.status, r.body)
	}
	if _, err := sessionCookie(r); err == nil {
		t.Errorf("healthz sets a session cookie")
	}
	srv.store.Close()
	r = c.get("/healthz")
	if r.status != http.StatusServiceUnavailable || !r.has("database unreachable") {
		t.Errorf("healthz with the database closed: %d %q, want 503", r.status, r.body)
	}
	// Pages fail with the safe message, not the cause.
	r = c.get("/login")
	wantPage(t, r, http.StatusInternalServerError, "Something went wrong on the server. It has been logged; try again.")
	if r.has("database is closed") {
		t.Errorf("the page shows the internal error")
	}
	if !strings.Contains(srv.log.String(), "database is closed") {
		t.Errorf("the cause was not logged")
	}
}

// rawPost sends a request with a body of size bytes over a plain TCP
// connection and reads the answer, so that a server answering before the
// body is sent is seen as a browser sees it.
func rawPost(t *testing.T, c *client, path string, size int) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.srv.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second)) // a hang fails, it does not time anything
	var cookies []string
	for _, ck := range c.http.Jar.Cookies(mustURL(t, c.srv.url)) {
		cookies = append(cookies, ck.Name+"="+ck.Value)
	}
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nX-CSRF-Token: %s\r\nCookie: %s\r\nContent-Length: %d\r\n\r\n",
		path, strings.TrimPrefix(c.srv.url, "http://"), c.token(), strings.Join(cookies, "; "), size)
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	go func() {
		// The server may stop reading; the write error is expected then.
		body := "provider=cerebras&key=" + strings.Repeat("k", size-len("provider=cerebras&key="))
		io.WriteString(conn, body)
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)

	resp, body := rawPost(t, admin, "/settings/keys", web.BodyLimit+1)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "The request is too large: Knobs accepts at most 16 MB.") {
		t.Errorf("9 MB body: %d, want 413 with the limit; body: %.300s", resp.StatusCode, body)
	}
	if !strings.Contains(body, "<h1>Too large</h1>") {
		t.Errorf("the 413 page has no heading")
	}

	// Just under the limit, the request is read and the handler answers.
	resp, body = rawPost(t, admin, "/settings/keys", 1<<20)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "That is longer than any API key") {
		t.Errorf("1 MB body: %d, want 422 from the handler; body: %.300s", resp.StatusCode, body)
	}
	if keys, _ := srv.store.ProviderKeys(t.Context(), srv.userID(t, "admin")); len(keys) != 0 {
		t.Errorf("an oversized key was stored")
	}
	// The server is fine afterwards.
	wantPage(t, admin.get("/settings"), http.StatusOK, "Settings")
}

func TestCodeStylesheetIsServedWithoutSignIn(t *testing.T) {
	srv := newServer(t)
	c := srv.newClient(t)
	r := c.get("/assets/code.css")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/css") || !r.has(".md .hl-") {
		t.Fatalf("/assets/code.css: %d %s %.80q", r.status, r.header.Get("Content-Type"), r.body)
	}
	if page := c.get("/login"); !page.has(`href="/assets/code.css"`) {
		t.Error("the layout does not link the code stylesheet")
	}
}
