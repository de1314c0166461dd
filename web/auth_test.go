package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestFirstAccountIsAdmin(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := srv.newClient(t)

	wantPage(t, c.get("/login"), http.StatusOK, "No account yet")
	wantPage(t, c.get("/signup"), http.StatusOK, "This is the first account: it becomes the team's admin.")

	r := c.signUp("alice", "")
	wantPage(t, r, http.StatusOK, "Welcome to Knobs, alice.", `<span class="badge">admin</span>`)
	if s := c.open("/settings"); !isAdminPage(s) {
		t.Errorf("the first account's settings page has no admin section")
	}
}

func TestSignUpAfterTheFirstNeedsAnInvite(t *testing.T) {
	t.Parallel()
	srv, _ := newTeam(t)
	c := srv.newClient(t)

	r := c.get("/signup")
	wantPage(t, r, http.StatusOK, "Sign-up on this Knobs needs an invite link from an admin.")
	if r.has(`action="/signup"`) {
		t.Errorf("the sign-up form is shown without an invite")
	}

	r = c.signUpForm("mallory", testPassword, testPassword, "")
	wantPage(t, r, http.StatusForbidden, "Sign-up needs a valid invite link.")
	r = c.signUpForm("mallory", testPassword, testPassword, "made-up-token")
	wantPage(t, r, http.StatusForbidden, "Sign-up needs a valid invite link.")
	if srv.canLogIn(t, "mallory", testPassword) {
		t.Errorf("an account was created without an invite")
	}
}

func TestInviteLink(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)

	link := admin.invite()
	if again := admin.open("/settings"); inviteURL(again) != "" || again.has(inviteToken(link)) {
		t.Errorf("the invite link is shown again after it was made")
	}
	wantPage(t, admin.open("/settings"), http.StatusOK, `data-label="Status">open</td>`)

	bob := srv.newClient(t)
	r := bob.get(link)
	wantPage(t, r, http.StatusOK, `action="/signup"`, `name="invite" value="`+inviteToken(link)+`"`)
	bob.signUp("bob", inviteToken(link))
	if s := bob.open("/settings"); isAdminPage(s) {
		t.Errorf("an invited account got the admin section")
	}
	wantPage(t, admin.open("/settings"), http.StatusOK, "used by bob")

	carol := srv.newClient(t)
	wantPage(t, carol.get(link), http.StatusOK, "This invite link was already used, has expired or was revoked.")
	r = carol.signUpForm("carol", testPassword, testPassword, inviteToken(link))
	wantPage(t, r, http.StatusForbidden, "Sign-up needs a valid invite link. This one is missing, used, expired or revoked.")
	if srv.canLogIn(t, "carol", testPassword) {
		t.Errorf("a used invite created a second account")
	}

	wantPage(t, admin.postForm("/settings/invites", form("days", "0")), http.StatusUnprocessableEntity, "Choose 1 to 30 days.")
}

func TestExpiredInvite(t *testing.T) {
	t.Parallel()
	srv, _ := newTeam(t)
	token, err := srv.store.CreateInvite(context.Background(), srv.userID(t, "admin"), -time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	c := srv.newClient(t)
	wantPage(t, c.get("/signup?invite="+token), http.StatusOK, "This invite link was already used, has expired or was revoked.")
	r := c.signUpForm("late", testPassword, testPassword, token)
	wantPage(t, r, http.StatusForbidden, "Sign-up needs a valid invite link.")
	if srv.canLogIn(t, "late", testPassword) {
		t.Errorf("an expired invite created an account")
	}
}

func TestRevokedInvite(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	link := admin.invite()
	page := admin.open("/settings")
	m := regexpFind(`action="(/settings/invites/\d+/revoke)"`, page.body)
	if m == "" {
		t.Fatalf("no revoke button for the open invite:\n%s", errorText(page))
	}
	wantPage(t, admin.submit(m, nil), http.StatusOK, "Revoked the invite.")

	c := srv.newClient(t)
	wantPage(t, c.get(link), http.StatusOK, "This invite link was already used, has expired or was revoked.")
	wantPage(t, c.signUpForm("dave", testPassword, testPassword, inviteToken(link)), http.StatusForbidden, "Sign-up needs a valid invite link.")
	if srv.canLogIn(t, "dave", testPassword) {
		t.Errorf("a revoked invite created an account")
	}
	wantPage(t, admin.postForm(m, nil), http.StatusNotFound, "There is no open invite with that id.")
}

func TestOpenSignUp(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	r := admin.submit("/settings/signup-mode", form("mode", "open"))
	wantPage(t, r, http.StatusOK, "Anyone who can reach this server can now sign up.", `<option value="open" selected>`)

	erin := srv.newClient(t)
	erin.signUp("erin", "")
	if isAdminPage(erin.open("/settings")) {
		t.Errorf("an open sign-up made an admin")
	}
	// A stale invite link in the address does not stop an open sign-up.
	frank := srv.newClient(t)
	frank.signUp("frank", "spent-or-made-up")

	wantPage(t, admin.submit("/settings/signup-mode", form("mode", "invite")), http.StatusOK, "Sign-up now needs an invite link.")
	r = srv.newClient(t).signUpForm("gina", testPassword, testPassword, "")
	wantPage(t, r, http.StatusForbidden, "Sign-up needs a valid invite link.")

	wantPage(t, admin.postForm("/settings/signup-mode", form("mode", "everyone")), http.StatusUnprocessableEntity, "Choose invite-only or open.")
}

func TestSignUpBadInput(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	admin.submit("/settings/signup-mode", form("mode", "open"))
	long := strings.Repeat("a", 65)

	tests := []struct {
		name               string
		username, pw, pw2  string
		status             int
		message            string
		loginName, loginPw string // must not work afterwards
	}{
		{"empty username", "", testPassword, testPassword, 422, "Choose a username.", "", ""},
		{"blank username", "   ", testPassword, testPassword, 422, "Choose a username.", "", ""},
		{"username over 64", long, testPassword, testPassword, 422, "A username has at most 64 characters.", "", ""},
		{"username with a space", "two words", testPassword, testPassword, 422, "Use only letters, digits, dots, dashes, underscores or @.", "two words", testPassword},
		{"password under 8", "shorty", "1234567", "1234567", 422, "A password needs at least 8 characters.", "shorty", "1234567"},
		{"password over 1024 bytes", "longpw", strings.Repeat("p", 1025), strings.Repeat("p", 1025), 422, "A password has at most 1,024 bytes.", "longpw", strings.Repeat("p", 1000)},
		{"passwords differ", "differ", testPassword, testPassword + "!", 422, "The two passwords differ.", "differ", testPassword},
		{"taken username, other case", "ADMIN", "another password", "another password", 409, "That username is taken.", "ADMIN", "another password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := srv.newClient(t)
			r := c.signUpForm(tt.username, tt.pw, tt.pw2, "")
			wantPage(t, r, tt.status, tt.message)
			if r.has(tt.pw) && len(tt.pw) > 0 {
				t.Errorf("the page echoes the password back")
			}
			if tt.loginName != "" && srv.canLogIn(t, tt.loginName, tt.loginPw) {
				t.Errorf("an account was created")
			}
		})
	}
	n, err := srv.store.CountUsers(context.Background())
	if err != nil || n != 1 {
		t.Errorf("accounts after bad sign-ups: %d (%v), want only the admin", n, err)
	}

	// The limits themselves are allowed.
	c := srv.newClient(t)
	c.signUpForm(strings.Repeat("b", 64), strings.Repeat("p", 1024), strings.Repeat("p", 1024), "")
	if !srv.canLogIn(t, strings.Repeat("b", 64), strings.Repeat("p", 1024)) {
		t.Errorf("a 64-character username with a 1,024-byte password could not sign up and in")
	}
}

func TestLogIn(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	admin.logOut()

	c := srv.newClient(t)
	r := c.get("/settings")
	wantRedirect(t, r, "/login?next=%2Fsettings")
	r = c.follow(r)
	wantPage(t, r, http.StatusOK, `name="next" value="/settings"`)
	before := c.token()
	r = c.postForm("/login", form("username", "Admin", "password", testPassword, "next", "/settings"))
	wantRedirect(t, r, "/settings")
	wantPage(t, c.follow(r), http.StatusOK, "Signed in as <strong>admin</strong>")
	if c.token() == before {
		t.Errorf("the CSRF token did not change on sign-in")
	}
	// The token from before signing in no longer works.
	wantPage(t, c.postForm("/settings/signup-mode", form("_csrf", before, "mode", "open")), http.StatusForbidden)

	// A next that leaves the site is dropped.
	for _, next := range []string{"//evil.example/", "https://evil.example/", `/\evil.example`, "/\t/evil.example", "/\r\n/evil.example", "/%09/evil.example\x00"} {
		r := srv.newClient(t).postForm("/login", form("username", "admin", "password", testPassword, "next", next))
		wantRedirect(t, r, "/")
	}
}

func TestLogInFailures(t *testing.T) {
	t.Parallel()
	srv, _ := newTeam(t)
	tests := []struct {
		name, username, password string
		status                   int
		message                  string
	}{
		{"wrong password", "admin", "not the password", 401, "Wrong username or password."},
		{"unknown user", "nobody", testPassword, 401, "Wrong username or password."},
		{"empty username", "", testPassword, 422, "Enter your username and password."},
		{"empty password", "admin", "", 422, "Enter your username and password."},
		{"username over 64", strings.Repeat("a", 65), testPassword, 422, "Enter your username and password."},
		{"password over 1024 bytes", "admin", strings.Repeat("p", 1025), 422, "Enter your username and password."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := srv.newClient(t)
			r := c.logIn(tt.username, tt.password)
			wantPage(t, r, tt.status, tt.message)
			if c.signedIn() {
				t.Errorf("a failed sign-in signed the client in")
			}
		})
	}
}

func TestLogInRateLimitPerAccount(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	admin.addMember("bob")

	attacker := srv.newClient(t) // from 127.0.0.1
	for i := range 10 {
		wantPage(t, attacker.logIn("admin", "guess-"+string(rune('a'+i))), http.StatusUnauthorized, "Wrong username or password.")
	}
	// The account is locked for anyone, even with the right password.
	other := srv.newClientFrom(t, "127.0.0.2")
	r := other.logIn("admin", testPassword)
	wantPage(t, r, http.StatusTooManyRequests, "Too many failed sign-in attempts. Try again in 15 minutes.")
	if other.signedIn() {
		t.Errorf("a locked account was signed in")
	}
	r = other.logIn("ADMIN", testPassword)
	wantPage(t, r, http.StatusTooManyRequests, "Too many failed sign-in attempts")
	// Another account from another address is not affected.
	wantRedirect(t, other.logIn("bob", testPassword), "/")
}

func TestLogInRateLimitPerAddress(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	admin.addMember("bob")

	attacker := srv.newClient(t) // from 127.0.0.1
	for i := range 10 {
		name := "user" + string(rune('a'+i))
		wantPage(t, attacker.logIn(name, testPassword), http.StatusUnauthorized, "Wrong username or password.")
	}
	wantPage(t, attacker.logIn("bob", testPassword), http.StatusTooManyRequests, "Too many failed sign-in attempts")
	if attacker.signedIn() {
		t.Errorf("a blocked address was signed in")
	}
	// The same account from another address still signs in.
	wantRedirect(t, srv.newClientFrom(t, "127.0.0.2").logIn("bob", testPassword), "/")
}

func TestLogOut(t *testing.T) {
	t.Parallel()
	_, admin := newTeam(t)
	old := admin.token()
	r := admin.logOut()
	wantRedirect(t, r, "/login")
	// The signed-in page's token is dead, too.
	wantPage(t, admin.postForm("/logout", form("_csrf", old)), http.StatusForbidden)
	wantRedirect(t, admin.get("/"), "/login?next=%2F")
	wantPage(t, admin.get("/login"), http.StatusOK, "Sign in to Knobs")
}

// publicRoutes need no sign-in; every other route of the app does.
var publicRoutes = []string{"/healthz", "/readyz", "/metrics", "/static", "/assets", "/login", "/signup", "/logout", "/reset", "/auth/oidc", "/s", "/p", "/g", "/e", "/a", "/r", "/api/v1/openapi.json"}

// publicPages are single pages open to anyone: the API's documentation
// (the API under it needs a token or a session).
var publicPages = []string{"/api"}

func isPublic(path string) bool {
	for _, p := range publicPages {
		if path == p {
			return true
		}
	}
	for _, p := range publicRoutes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// concretePath fills a route's parameters: /runs/:id/events -> /runs/1/events.
func concretePath(route string) string {
	parts := strings.Split(route, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") || p == "*" || strings.HasPrefix(p, "+") {
			parts[i] = "1"
		}
	}
	return strings.Join(parts, "/")
}

func TestPagesNeedSignIn(t *testing.T) {
	t.Parallel()
	srv, _ := newTeam(t)
	c := srv.newClient(t)

	for _, path := range []string{"/", "/compare", "/presets", "/history", "/settings", "/settings?tab=keys", "/no-such-page"} {
		wantRedirect(t, c.get(path), "/login?next="+url.QueryEscape(path))
	}

	// Every route the app has, so that a route added later is covered.
	seen := 0
	for _, rt := range srv.app.GetRoutes(true) {
		if isPublic(rt.Path) || rt.Method == http.MethodHead || rt.Method == http.MethodOptions {
			continue
		}
		seen++
		path := concretePath(rt.Path)
		switch {
		case strings.HasPrefix(path, "/api/"):
			// The API answers in JSON, whatever the method: 401, no redirect.
			req, err := http.NewRequest(rt.Method, srv.url+path, strings.NewReader(`{"name":"x","scope":"write"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-CSRF-Token", c.token())
			r := c.do(req)
			if r.status != http.StatusUnauthorized || !r.has(`{"error":"Sign in first`) {
				t.Errorf("%s %s signed out: %d, want 401 Sign in first; answer: %s", rt.Method, path, r.status, r.body)
			}
		case rt.Method == http.MethodGet:
			wantRedirect(t, c.get(path), "/login?next="+url.QueryEscape(path))
		default:
			req, err := http.NewRequest(rt.Method, srv.url+path, strings.NewReader(form(
				"_csrf", c.token(), "provider", "cerebras", "key", "sk-should-not-be-saved-1234", "mode", "open", "days", "7", "role", "member").Encode()))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r := c.do(req)
			if r.status != http.StatusUnauthorized || !r.has("Sign in first.") {
				t.Errorf("%s %s signed out: %d, want 401 Sign in first.; page says: %s", rt.Method, path, r.status, errorText(r))
			}
		}
	}
	if seen < 15 {
		t.Errorf("only %d routes found behind sign-in", seen)
	}
	if mode, _ := srv.store.Setting(context.Background(), "signup_mode"); mode == "open" {
		t.Errorf("a signed-out POST changed the sign-up mode")
	}
	if keys, _ := srv.store.ProviderKeys(context.Background(), 0); len(keys) != 0 {
		t.Errorf("a signed-out POST stored a key")
	}

	// Open to anyone.
	wantPage(t, c.get("/login"), http.StatusOK, "Sign in to Knobs")
	wantPage(t, c.get("/signup"), http.StatusOK, "Create your Knobs account")
	wantPage(t, c.get("/healthz"), http.StatusOK, "ok")
	r := c.get("/static/css/knobs.css")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/css") {
		t.Errorf("/static/css/knobs.css: %d %s, want 200 text/css", r.status, r.header.Get("Content-Type"))
	}
	if r := c.get("/static/js/knobs.js"); r.status != http.StatusOK || !r.has("csrfToken") {
		t.Errorf("/static/js/knobs.js: %d", r.status)
	}
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	ctx := context.Background()

	const key = "csk-never-saved-without-a-token-9z9z"
	for _, tt := range []struct {
		name string
		f    func() *response
	}{
		{"key save without token", func() *response {
			return admin.postForm("/settings/keys", noCSRF(form("provider", "cerebras", "key", key)))
		}},
		{"key save with wrong token", func() *response {
			return admin.postForm("/settings/keys", form("_csrf", "wrong", "provider", "cerebras", "key", key))
		}},
		{"key save with another session's token", func() *response {
			other := srv.newClient(t)
			return admin.postForm("/settings/keys", form("_csrf", other.token(), "provider", "cerebras", "key", key))
		}},
		{"sign-up mode without token", func() *response {
			return admin.postForm("/settings/signup-mode", noCSRF(form("mode", "open")))
		}},
		{"sign-up mode with empty token", func() *response {
			return admin.postForm("/settings/signup-mode", form("_csrf", "", "mode", "open"))
		}},
		{"sign-up mode, JSON with wrong header", func() *response {
			return admin.post("/settings/signup-mode?mode=open", "application/json", strings.NewReader(`{}`), http.Header{"X-Csrf-Token": {"wrong"}})
		}},
		{"log out without token", func() *response {
			return admin.postForm("/logout", noCSRF(url.Values{}))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.f()
			if r.status != http.StatusForbidden || !r.has("This form has expired or did not come from Knobs.") {
				t.Errorf("got %d, want 403 with the expired-form message; page says: %s", r.status, errorText(r))
			}
		})
	}
	if keys, err := srv.store.ProviderKeys(ctx, srv.userID(t, "admin")); err != nil || len(keys) != 0 {
		t.Errorf("keys stored by refused requests: %v (%v)", keys, err)
	}
	if mode, _ := srv.store.Setting(ctx, "signup_mode"); mode == "open" {
		t.Errorf("a refused request changed the sign-up mode")
	}
	s := admin.open("/settings")
	wantPage(t, s, http.StatusOK, "Signed in as <strong>admin</strong>", `<option value="invite" selected>`)

	// Sign-up and sign-in forms are protected too.
	c := srv.newClient(t)
	c.get("/signup")
	wantPage(t, c.postForm("/login", noCSRF(form("username", "admin", "password", testPassword))), http.StatusForbidden)
	if c.signedIn() {
		t.Errorf("a sign-in without a token signed the client in")
	}

	// fetch() sends the token in the X-CSRF-Token header.
	r := admin.post("/settings/signup-mode?mode=open", "application/json", strings.NewReader(`{}`), http.Header{"X-Csrf-Token": {admin.token()}})
	wantRedirect(t, r, "/settings")
	if mode, _ := srv.store.Setting(ctx, "signup_mode"); mode != "open" {
		t.Errorf("a JSON request with the X-CSRF-Token header was not accepted: mode %q", mode)
	}
	r = admin.post("/settings/signup-mode", "application/x-www-form-urlencoded", strings.NewReader("mode=invite"), http.Header{"X-Csrf-Token": {admin.token()}})
	wantRedirect(t, r, "/settings")
	if mode, _ := srv.store.Setting(ctx, "signup_mode"); mode != "invite" {
		t.Errorf("a form with the X-CSRF-Token header was not accepted: mode %q", mode)
	}
}

func TestCSRFRefusalAsJSON(t *testing.T) {
	t.Parallel()
	_, admin := newTeam(t)
	r := admin.post("/settings/keys", "application/json", strings.NewReader(`{"provider":"cerebras"}`), nil)
	if r.status != http.StatusForbidden || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || !r.has(`"error":"This form has expired`) {
		t.Errorf("got %d %s %s, want 403 with a JSON error", r.status, r.header.Get("Content-Type"), r.body)
	}
}

func TestCookieFlags(t *testing.T) {
	t.Parallel()
	for _, secure := range []bool{false, true} {
		var opts []serverOption
		if secure {
			opts = append(opts, withEnv("KNOBS_SECURE_COOKIES", "true"))
		}
		srv := newServer(t, opts...)
		c := srv.newClient(t)
		for _, r := range []*response{c.get("/login"), c.signUpForm("alice", testPassword, testPassword, "")} {
			ck, err := sessionCookie(r)
			if err != nil {
				t.Fatalf("secure=%v %s: %v", secure, r.path, err)
			}
			if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || ck.Secure != secure {
				t.Errorf("secure=%v %s: cookie HttpOnly=%v SameSite=%v Path=%q Secure=%v; want HttpOnly, Lax, /, Secure=%v",
					secure, r.path, ck.HttpOnly, ck.SameSite, ck.Path, ck.Secure, secure)
			}
			if ck.MaxAge <= 0 {
				t.Errorf("secure=%v: cookie MaxAge %d, want a lasting session", secure, ck.MaxAge)
			}
			if strings.Contains(ck.Value, testPassword) || strings.Contains(ck.Value, "alice") {
				t.Errorf("the cookie carries readable account data: %q", ck.Value)
			}
		}
		// The browser sends it back over http to 127.0.0.1, and it works.
		wantPage(t, c.get("/"), http.StatusOK, "Signed in as <strong>alice</strong>")
	}
}

func TestBadCookieIsSignedOut(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	valid := admin.http.Jar.Cookies(mustURL(t, srv.url))
	if len(valid) != 1 {
		t.Fatalf("cookies: %v", valid)
	}
	// A cookie made by another Knobs, with another secret.
	otherSrv := newServer(t, withEnv("KNOBS_SECRET", strings.Repeat("another-secret-", 3)))
	other := otherSrv.newClient(t)
	other.signUp("admin", "")
	foreign := other.http.Jar.Cookies(mustURL(t, otherSrv.url))[0].Value

	v := valid[0].Value
	flipped := v[:len(v)/2] + string(v[len(v)/2]^1) + v[len(v)/2+1:]
	for name, value := range map[string]string{
		"garbage":        "not-a-session",
		"tampered":       flipped,
		"truncated":      v[:len(v)-10],
		"other secret":   foreign,
		"bad base64":     "%%%%====",
		"very long junk": strings.Repeat("A", 3000),
	} {
		t.Run(name, func(t *testing.T) {
			c := srv.newClient(t)
			c.http.Jar.SetCookies(mustURL(t, srv.url), []*http.Cookie{{Name: "knobs_session", Value: value, Path: "/"}})
			wantRedirect(t, c.get("/"), "/login?next=%2F")
			r := c.get("/login")
			wantPage(t, r, http.StatusOK, "Sign in to Knobs")
			if r.has("Signed in as") {
				t.Errorf("a bad cookie shows a signed-in user")
			}
			// The fresh session works: sign in goes through.
			wantRedirect(t, c.logIn("admin", testPassword), "/")
		})
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
