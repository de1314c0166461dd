package web_test

// Personal API tokens over real HTTP and a real SQLite file: made from a
// session (with its CSRF token) or by a write token, used, listed,
// revoked, expired by the test's clock, refused for the wrong scope, and
// ended when their user is removed, demoted or changes password.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testClock is a clock a test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// withClock makes clock the handlers' clock.
func withClock(clock *testClock) serverOption {
	return func(s *serverSetup) { s.now = clock.Now }
}

// apiAnswer is an API answer: its status and its JSON body.
type apiAnswer struct {
	status int
	header http.Header
	body   string
}

// json decodes the body into v, failing the test when it is not JSON.
func (a apiAnswer) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(a.body), v); err != nil {
		t.Fatalf("answer %d is not JSON: %v\n%s", a.status, err, a.body)
	}
}

// apiError is the project's error shape.
type apiError struct {
	Error  string            `json:"error"`
	Fields map[string]string `json:"fields"`
}

// apiCall sends method path with body (a string sent as it is, or a value
// sent as JSON; nil: none) and the bearer token (none when ""), from a
// client without cookies.
func (s *server) apiCall(t testing.TB, method, path, token string, body any) apiAnswer {
	t.Helper()
	return s.apiRequest(t, http.DefaultClient, method, path, body, func(h http.Header) {
		if token != "" {
			h.Set("Authorization", "Bearer "+token)
		}
	})
}

func (s *server) apiRequest(t testing.TB, hc *http.Client, method, path string, body any, header func(http.Header)) apiAnswer {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	header(req.Header)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return apiAnswer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// apiCall sends an API request with c's session cookie, and its CSRF
// token as X-CSRF-Token when csrf is set.
func (c *client) apiCall(method, path string, body any, csrf bool) apiAnswer {
	c.t.Helper()
	token := c.token()
	return c.srv.apiRequest(c.t, c.http, method, path, body, func(h http.Header) {
		if csrf {
			h.Set("X-CSRF-Token", token)
		}
	})
}

// createdToken is the answer to POST /api/v1/tokens.
type createdToken struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Scope     string     `json:"scope"`
	Token     string     `json:"token"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// tokenItem is one entry of GET /api/v1/tokens.
type tokenItem struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Scope     string     `json:"scope"`
	Prefix    string     `json:"prefix"`
	CreatedAt time.Time  `json:"created_at"`
	LastUsed  *time.Time `json:"last_used_at"`
	ExpiresAt *time.Time `json:"expires_at"`
}

type tokenPage struct {
	Items      []tokenItem `json:"items"`
	NextCursor *string     `json:"next_cursor"`
}

// makeToken has c's session make a token, or fails the test.
func (c *client) makeToken(name, scope string, days any) createdToken {
	c.t.Helper()
	a := c.apiCall("POST", "/api/v1/tokens", map[string]any{"name": name, "scope": scope, "expires_in_days": days}, true)
	if a.status != http.StatusCreated {
		c.t.Fatalf("create token %q: %d %s", name, a.status, a.body)
	}
	var out createdToken
	a.json(c.t, &out)
	return out
}

// wantAPIError fails the test unless a has status and the project's error
// shape, with a message for each of fields.
func wantAPIError(t testing.TB, what string, a apiAnswer, status int, fields ...string) apiError {
	t.Helper()
	var e apiError
	if err := json.Unmarshal([]byte(a.body), &e); err != nil || e.Error == "" {
		t.Errorf("%s: answer %d is not {\"error\": ...}: %s", what, a.status, a.body)
		return e
	}
	if a.status != status {
		t.Errorf("%s: status %d, want %d: %s", what, a.status, status, a.body)
	}
	for _, f := range fields {
		if e.Fields[f] == "" {
			t.Errorf("%s: no message for field %q: %s", what, f, a.body)
		}
	}
	return e
}

// listTokens lists the tokens token sees, first page.
func (s *server) listTokens(t testing.TB, token string) tokenPage {
	t.Helper()
	a := s.apiCall(t, "GET", "/api/v1/tokens", token, nil)
	if a.status != http.StatusOK {
		t.Fatalf("list tokens: %d %s", a.status, a.body)
	}
	var p tokenPage
	a.json(t, &p)
	return p
}

func TestAPITokenMadeUsedListedAndRevoked(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)

	write := admin.makeToken("ci", "write", 90)
	if !strings.HasPrefix(write.Token, "knobs_") || len(write.Token) < len("knobs_")+43 {
		t.Fatalf("token %q: want knobs_ and 256 bits", write.Token)
	}
	if write.Name != "ci" || write.Scope != "write" || write.ExpiresAt == nil {
		t.Errorf("created %+v", write)
	}
	if d := time.Until(*write.ExpiresAt); d < 89*24*time.Hour || d > 91*24*time.Hour {
		t.Errorf("a 90-day token expires in %v", d)
	}

	// A write token makes another token, without any CSRF token.
	a := srv.apiCall(t, "POST", "/api/v1/tokens", write.Token, map[string]any{"name": "dashboard", "scope": "read", "expires_in_days": nil})
	if a.status != http.StatusCreated {
		t.Fatalf("create by token: %d %s", a.status, a.body)
	}
	var read createdToken
	a.json(t, &read)
	if read.Scope != "read" || read.ExpiresAt != nil || read.Token == write.Token {
		t.Errorf("created by token: %+v", read)
	}

	// The list shows both, newest first, by prefix, never the secret.
	a = srv.apiCall(t, "GET", "/api/v1/tokens", read.Token, nil)
	for _, secret := range []string{write.Token, read.Token} {
		if strings.Contains(a.body, secret) || strings.Contains(a.body, secret[:20]) {
			t.Errorf("the list carries a token's secret: %s", a.body)
		}
	}
	if strings.Contains(a.body, `"token"`) || strings.Contains(a.body, "hash") {
		t.Errorf("the list has a token or hash field: %s", a.body)
	}
	var list tokenPage
	a.json(t, &list)
	if len(list.Items) != 2 || list.Items[0].ID != read.ID || list.Items[1].ID != write.ID || list.NextCursor != nil {
		t.Fatalf("list: %+v", list)
	}
	if got := list.Items[1]; got.Name != "ci" || got.Scope != "write" || !strings.HasPrefix(write.Token, got.Prefix) || len(got.Prefix) < 8 || got.LastUsed == nil {
		t.Errorf("the write token listed as %+v (prefix of %s...)", got, write.Token[:12])
	}

	// A read token reads, and may not change anything.
	a = srv.apiCall(t, "DELETE", "/api/v1/tokens/"+strconv.FormatInt(write.ID, 10), read.Token, nil)
	wantAPIError(t, "delete by a read token", a, http.StatusForbidden)
	a = srv.apiCall(t, "POST", "/api/v1/tokens", read.Token, map[string]any{"name": "more", "scope": "write"})
	wantAPIError(t, "create by a read token", a, http.StatusForbidden)
	if n := len(srv.listTokens(t, write.Token).Items); n != 2 {
		t.Errorf("%d tokens after a read token's attempts, want 2", n)
	}

	// Revoked: refused at once, and gone from the list.
	a = srv.apiCall(t, "DELETE", "/api/v1/tokens/"+strconv.FormatInt(read.ID, 10), write.Token, nil)
	if a.status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", a.status, a.body)
	}
	a = srv.apiCall(t, "GET", "/api/v1/tokens", read.Token, nil)
	wantAPIError(t, "a revoked token", a, http.StatusUnauthorized)
	if got := srv.listTokens(t, write.Token).Items; len(got) != 1 || got[0].ID != write.ID {
		t.Errorf("after revoking, the list is %+v", got)
	}

	// Bad tokens: 401 in the error shape.
	for _, auth := range []string{"Bearer knobs_nope", "Bearer " + write.Token[:len(write.Token)-1], "Basic YWRtaW46eA==", "Bearer "} {
		a := srv.apiRequest(t, http.DefaultClient, "GET", "/api/v1/tokens", nil, func(h http.Header) { h.Set("Authorization", auth) })
		wantAPIError(t, auth, a, http.StatusUnauthorized)
	}
	wantAPIError(t, "no credentials", srv.apiCall(t, "GET", "/api/v1/tokens", "", nil), http.StatusUnauthorized)
}

func TestAPITokenExpiresByTheClock(t *testing.T) {
	t.Parallel()
	clock := &testClock{now: time.Now()}
	srv, admin := newTeam(t, withClock(clock))
	month := admin.makeToken("month", "read", 30)
	forever := admin.makeToken("forever", "read", nil)

	clock.advance(30*24*time.Hour - time.Minute)
	if a := srv.apiCall(t, "GET", "/api/v1/tokens", month.Token, nil); a.status != http.StatusOK {
		t.Fatalf("a 30-day token a minute before it expires: %d %s", a.status, a.body)
	}
	clock.advance(time.Minute)
	wantAPIError(t, "an expired token", srv.apiCall(t, "GET", "/api/v1/tokens", month.Token, nil), http.StatusUnauthorized)

	clock.advance(5 * 365 * 24 * time.Hour)
	list := srv.listTokens(t, forever.Token)
	if len(list.Items) != 2 {
		t.Fatalf("list: %+v", list)
	}
	// The expired token is still listed, with its expiry, until revoked;
	// last used is the clock's time, written once a minute at most.
	for _, it := range list.Items {
		switch it.ID {
		case month.ID:
			if it.ExpiresAt == nil || !it.ExpiresAt.Equal(month.ExpiresAt.Truncate(time.Second)) {
				t.Errorf("the expired token is listed as %+v, created as %+v", it, month)
			}
		case forever.ID:
			if it.ExpiresAt != nil || it.LastUsed == nil || clock.Now().Sub(*it.LastUsed) > time.Second {
				t.Errorf("the token used now is listed as %+v (clock %v)", it, clock.Now())
			}
		}
	}
}

func TestAPITokenOfAnotherUserIsNotFound(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")
	bobs := bob.makeToken("bob's", "write", nil)
	admins := admin.makeToken("admin's", "write", nil)

	a := srv.apiCall(t, "DELETE", "/api/v1/tokens/"+strconv.FormatInt(bobs.ID, 10), admins.Token, nil)
	wantAPIError(t, "revoking another user's token", a, http.StatusNotFound)
	a = admin.apiCall("DELETE", "/api/v1/tokens/"+strconv.FormatInt(bobs.ID, 10), nil, true)
	wantAPIError(t, "revoking another user's token from a session", a, http.StatusNotFound)
	wantAPIError(t, "an unknown id", srv.apiCall(t, "DELETE", "/api/v1/tokens/999999", admins.Token, nil), http.StatusNotFound)
	if got := srv.listTokens(t, bobs.Token).Items; len(got) != 1 || got[0].ID != bobs.ID {
		t.Errorf("bob's tokens after the admin's attempts: %+v", got)
	}
	if got := srv.listTokens(t, admins.Token).Items; len(got) != 1 || got[0].ID != admins.ID {
		t.Errorf("the admin lists %+v, want only their own", got)
	}
}

func TestAPITokensEndWithTheirUsersRights(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")
	carol := admin.addMember("carol")
	dave := admin.addMember("dave")
	erin := admin.addMember("erin")
	alive := func(token string) bool {
		t.Helper()
		a := srv.apiCall(t, "GET", "/api/v1/tokens", token, nil)
		if a.status != http.StatusOK && a.status != http.StatusUnauthorized {
			t.Fatalf("unexpected %d: %s", a.status, a.body)
		}
		return a.status == http.StatusOK
	}

	// Bob changes his password: his tokens end.
	bobs := bob.makeToken("b", "write", nil)
	newPassword := "a brand new passphrase"
	wantPage(t, bob.submit("/settings/password", form("current", testPassword, "password", newPassword, "password2", newPassword)), http.StatusOK)
	if alive(bobs.Token) {
		t.Errorf("bob's token works after his password changed")
	}
	// A token made after the change works.
	if again := bob.makeToken("b2", "read", 30); !alive(again.Token) {
		t.Errorf("a token made after the password change is refused")
	}

	// Carol, promoted then demoted: her tokens end with her admin rights.
	wantPage(t, admin.submit(memberPath(srv.userID(t, "carol"), "role"), form("role", "admin")), http.StatusOK, "Changed the role.")
	carols := carol.makeToken("c", "write", nil)
	if !alive(carols.Token) {
		t.Fatalf("carol's token does not work")
	}
	wantPage(t, admin.submit(memberPath(srv.userID(t, "carol"), "role"), form("role", "member")), http.StatusOK, "Changed the role.")
	if alive(carols.Token) {
		t.Errorf("carol's token works after her demotion")
	}

	// Dave's password is reset by a link.
	daves := dave.makeToken("d", "read", nil)
	r := admin.submit(memberPath(srv.userID(t, "dave"), "reset"), nil)
	path := strings.TrimPrefix(regexpFind(resetInput, r.body), srv.url)
	const fresh = "dave's fresh passphrase"
	wantRedirect(t, srv.newClient(t).postForm(path, form("password", fresh, "password2", fresh)), "/")
	if alive(daves.Token) {
		t.Errorf("dave's token works after his password was reset")
	}

	// Erin is removed: her token is refused.
	erins := erin.makeToken("e", "write", nil)
	wantPage(t, admin.submit(memberPath(srv.userID(t, "erin"), "remove"), nil), http.StatusOK)
	if alive(erins.Token) {
		t.Errorf("a removed user's token works")
	}

	// The admin's own token lived through all of it.
	if !alive(admin.makeToken("a", "read", nil).Token) {
		t.Errorf("the admin's token is refused")
	}
}

func TestAPITokenIsNotStoredInClear(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	var secrets []string
	for _, scope := range []string{"read", "write"} {
		tok := admin.makeToken("at rest "+scope, scope, 365)
		if a := srv.apiCall(t, "GET", "/api/v1/tokens", tok.Token, nil); a.status != http.StatusOK {
			t.Fatalf("use: %d %s", a.status, a.body)
		}
		secrets = append(secrets, tok.Token)
	}
	var files [][]byte
	for _, name := range []string{srv.dbPath, srv.dbPath + "-wal"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		files = append(files, b)
	}
	if len(files[0])+len(files[1]) == 0 {
		t.Fatal("the database files are empty")
	}
	for _, s := range secrets {
		random := strings.TrimPrefix(s, "knobs_")
		for i, b := range files {
			// The list's prefix (knobs_ and 6 more) is stored; the rest never.
			if bytes.Contains(b, []byte(s)) || bytes.Contains(b, []byte(random[6:])) || bytes.Contains(b, []byte(random[6:26])) {
				t.Errorf("the token %s... is readable in %s", s[:12], []string{"the database file", "the WAL"}[i])
			}
		}
		if strings.Contains(srv.log.String(), random[6:]) {
			t.Errorf("the token %s... is in the log", s[:12])
		}
	}
}

func TestAPIBearerNeedsNoCSRFButACookieDoes(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")
	body := map[string]any{"name": "x", "scope": "read"}

	// A cookie without its CSRF token is refused, and nothing is made.
	a := admin.apiCall("POST", "/api/v1/tokens", body, false)
	wantAPIError(t, "a session without CSRF", a, http.StatusForbidden)
	a = admin.apiCall("GET", "/api/v1/tokens", nil, false)
	var list tokenPage
	a.json(t, &list)
	if a.status != http.StatusOK || len(list.Items) != 0 {
		t.Errorf("a session reads the list without CSRF (a GET): %d %s", a.status, a.body)
	}

	// A bearer token needs none; sent with another user's cookie, it is
	// its own user alone.
	bobs := bob.makeToken("bob", "write", nil)
	a = srv.apiRequest(t, admin.http, "POST", "/api/v1/tokens", body, func(h http.Header) { h.Set("Authorization", "Bearer "+bobs.Token) })
	if a.status != http.StatusCreated {
		t.Fatalf("bearer without CSRF: %d %s", a.status, a.body)
	}
	if got := srv.listTokens(t, bobs.Token).Items; len(got) != 2 {
		t.Errorf("the token made by bob's token is not bob's: bob has %+v", got)
	}
	if got := admin.apiCall("GET", "/api/v1/tokens", nil, false); strings.Count(got.body, `"id"`) != 0 {
		t.Errorf("the admin's session lists tokens it did not make: %s", got.body)
	}

	// A bad token is refused even with a good cookie: no falling back.
	a = srv.apiRequest(t, admin.http, "GET", "/api/v1/tokens", nil, func(h http.Header) { h.Set("Authorization", "Bearer knobs_wrong") })
	wantAPIError(t, "a bad token with a good cookie", a, http.StatusUnauthorized)
}

func TestAPITokenBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	write := admin.makeToken("w", "write", nil)
	cases := []struct {
		name   string
		body   string
		status int
		field  string
	}{
		{"name not a string", `{"name": 5, "scope": "read"}`, 422, "name"},
		{"unknown field", `{"name": "x", "scope": "read", "admin": true}`, 422, "admin"},
		{"missing name", `{"scope": "read"}`, 422, "name"},
		{"empty name", `{"name": "", "scope": "read"}`, 422, "name"},
		{"blank name", `{"name": "   ", "scope": "read"}`, 422, "name"},
		{"name too long", `{"name": "` + strings.Repeat("n", 101) + `", "scope": "read"}`, 422, "name"},
		{"scope admin", `{"name": "x", "scope": "admin"}`, 422, "scope"},
		{"missing scope", `{"name": "x"}`, 422, "scope"},
		{"7 days", `{"name": "x", "scope": "read", "expires_in_days": 7}`, 422, "expires_in_days"},
		{"0 days", `{"name": "x", "scope": "read", "expires_in_days": 0}`, 422, "expires_in_days"},
		{"days as a string", `{"name": "x", "scope": "read", "expires_in_days": "30"}`, 422, "expires_in_days"},
		{"not JSON", `{"name": "x",`, 400, ""},
		{"an array", `[]`, 422, ""},
		{"too large", `{"name": "` + strings.Repeat("n", 1<<20) + `", "scope": "read"}`, 413, ""},
	}
	for _, tc := range cases {
		a := srv.apiCall(t, "POST", "/api/v1/tokens", write.Token, tc.body)
		if tc.field != "" {
			wantAPIError(t, tc.name, a, tc.status, tc.field)
		} else {
			wantAPIError(t, tc.name, a, tc.status)
		}
	}
	for _, q := range []struct{ query, field string }{
		{"limit=0", "limit"}, {"limit=101", "limit"}, {"limit=ten", "limit"}, {"cursor=nonsense", "cursor"}, {"cursor=aWQ6LTE", "cursor"},
	} {
		wantAPIError(t, q.query, srv.apiCall(t, "GET", "/api/v1/tokens?"+q.query, write.Token, nil), 422, q.field)
	}
	wantAPIError(t, "id not a number", srv.apiCall(t, "DELETE", "/api/v1/tokens/abc", write.Token, nil), 422, "id")
	if got := srv.listTokens(t, write.Token).Items; len(got) != 1 {
		t.Errorf("bad input stored tokens: %+v", got)
	}
}

func TestAPITokensArePaged(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	var made []int64
	var token string
	for i := range 5 {
		tok := admin.makeToken("t"+strconv.Itoa(i), "read", nil)
		made = append(made, tok.ID)
		token = tok.Token
	}
	var seen []int64
	cursor := ""
	for range 5 {
		a := srv.apiCall(t, "GET", "/api/v1/tokens?limit=2&cursor="+cursor, token, nil)
		if a.status != http.StatusOK {
			t.Fatalf("page: %d %s", a.status, a.body)
		}
		var p tokenPage
		a.json(t, &p)
		for _, it := range p.Items {
			seen = append(seen, it.ID)
		}
		if p.NextCursor == nil {
			break
		}
		if len(p.Items) != 2 {
			t.Errorf("a page before the last has %d items", len(p.Items))
		}
		cursor = *p.NextCursor
	}
	want := []int64{made[4], made[3], made[2], made[1], made[0]}
	if len(seen) != len(want) {
		t.Fatalf("pages gave %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("pages gave %v, want %v", seen, want)
		}
	}
}

func TestAPIProvidersListsModelsAndNoKey(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	const key = "sk-LocalProviderKey-Qw8Er5Ty2Ui9"
	wantPage(t, admin.submit("/settings/providers", form("name", "Local", "base_url", "http://127.0.0.1:1", "key", key)), http.StatusOK, "Added the provider")
	tok := admin.makeToken("p", "read", nil)
	a := srv.apiCall(t, "GET", "/api/v1/providers", tok.Token, nil)
	if a.status != http.StatusOK {
		t.Fatalf("providers: %d %s", a.status, a.body)
	}
	if strings.Contains(a.body, key) || strings.Contains(a.body, key[len(key)-4:]) {
		t.Errorf("the providers list carries a key: %s", a.body)
	}
	var out struct {
		Providers []struct {
			ID     string `json:"id"`
			Name   string `json:"name"`
			Models []struct {
				ID            string   `json:"id"`
				ContextWindow int      `json:"context_window"`
				Reasoning     *bool    `json:"reasoning"`
				Tools         *bool    `json:"tools"`
				JSONSchema    *bool    `json:"json_schema"`
				InputPrice    *float64 `json:"input_price"`
			} `json:"models"`
		} `json:"providers"`
	}
	a.json(t, &out)
	ids := map[string]bool{}
	for _, p := range out.Providers {
		ids[p.ID] = true
		if p.ID != "sim" {
			continue
		}
		if len(p.Models) == 0 {
			t.Fatalf("the simulator has no models: %s", a.body)
		}
		reasoning := false
		for _, m := range p.Models {
			if m.ID == "" || m.ContextWindow <= 0 || m.Reasoning == nil || m.Tools == nil || m.JSONSchema == nil {
				t.Errorf("simulator model without its capabilities: %+v", m)
			}
			reasoning = reasoning || *m.Reasoning
		}
		if !reasoning {
			t.Errorf("no simulator model reasons: %s", a.body)
		}
	}
	// The simulator and the provider with a key; not those without one.
	if !ids["sim"] || !ids["local"] || ids["cerebras"] || ids["xai"] {
		t.Errorf("providers %v, want sim and local only", ids)
	}
}
