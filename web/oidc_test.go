package web_test

// Single sign-on against a real OpenID Connect provider (mockoidc) on
// 127.0.0.1: it serves discovery, its keys, an authorize endpoint that
// signs in the user queued at once, and a token endpoint that checks the
// client secret and the PKCE verifier. Knobs is reached through a reverse
// proxy started first, so that its address can be the redirect URL
// registered at the provider, as it is behind a real proxy.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"knobs/db"
)

const (
	ssoClientID     = "knobs"
	ssoClientSecret = "knobs-client-secret-0123456789"
	ssoName         = "Acme SSO"
)

// idp is the identity provider of a test.
type idp struct {
	m *mockoidc.MockOIDC
	// mu guards reissue, which the provider's goroutine reads.
	mu sync.Mutex
	// reissue, when set, changes the claims of the next ID token, signed
	// again with the key it returns (nil: the provider's own).
	reissue func(jwt.MapClaims) *mockoidc.Keypair
	// tokenError, when set, is the token endpoint's answer: an OAuth
	// error code and its description.
	tokenError [2]string
}

// newIdP starts a provider whose client is Knobs.
func newIdP(t testing.TB) *idp {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	m.ClientID, m.ClientSecret = ssoClientID, ssoClientSecret
	if _, err := m.Keypair.KeyID(); err != nil { // computed now, not by the server's goroutine
		t.Fatal(err)
	}
	d := &idp{m: m}
	if err := m.AddMiddleware(d.reissueTokens); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	return d
}

// setReissue has the next ID tokens changed by f (nil: as the provider
// makes them).
func (d *idp) setReissue(f func(jwt.MapClaims) *mockoidc.Keypair) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reissue = f
}

// setTokenError has the token endpoint refuse every code with an OAuth
// error (none: "").
func (d *idp) setTokenError(code, description string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.tokenError = [2]string{code, description}
}

// queue makes the next sign-in at the provider this user's.
func (d *idp) queue(subject, email string, verified bool, groups ...string) {
	d.m.QueueUser(&mockoidc.MockUser{Subject: subject, Email: email, EmailVerified: verified, PreferredUsername: subject, Groups: groups})
}

// reissueTokens is middleware of the provider's endpoints that changes
// the ID token of the token endpoint's answer when reissue is set.
func (d *idp) reissueTokens(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		f, refusal := d.reissue, d.tokenError
		d.mu.Unlock()
		if r.URL.Path == mockoidc.TokenEndpoint && refusal[0] != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": refusal[0], "error_description": refusal[1]})
			return
		}
		if r.URL.Path != mockoidc.TokenEndpoint || f == nil {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var answer map[string]any
		var raw []byte
		if rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &answer) == nil {
			if tok, ok := answer["id_token"].(string); ok {
				parts := strings.Split(tok, ".")
				payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
				claims := jwt.MapClaims{}
				json.Unmarshal(payload, &claims)
				key := f(claims)
				if key == nil {
					key = d.m.Keypair
				}
				signed, err := key.SignJWT(claims)
				if err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				answer["id_token"] = signed
			}
			raw, _ = json.Marshal(answer)
		} else {
			raw = rec.Body.Bytes()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(raw)
	})
}

// frontDoor is a reverse proxy to a Knobs that starts after it.
type frontDoor struct {
	srv    *httptest.Server
	mu     sync.Mutex
	target *url.URL
}

func newFrontDoor(t testing.TB) *frontDoor {
	t.Helper()
	f := &frontDoor{}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		f.mu.Lock()
		target := f.target
		f.mu.Unlock()
		r.SetURL(target)
	}}
	f.srv = httptest.NewServer(proxy)
	t.Cleanup(f.srv.Close)
	return f
}

// ssoServer starts a provider and a Knobs that signs in through it, with
// extra settings as name, value pairs.
func ssoServer(t testing.TB, env ...string) (*server, *idp, *frontDoor) {
	t.Helper()
	d := newIdP(t)
	front := newFrontDoor(t)
	opts := []serverOption{
		withEnv("KNOBS_OIDC_ISSUER", d.m.Issuer()),
		withEnv("KNOBS_OIDC_CLIENT_ID", ssoClientID),
		withEnv("KNOBS_OIDC_CLIENT_SECRET", ssoClientSecret),
		withEnv("KNOBS_OIDC_REDIRECT_URL", front.srv.URL+"/auth/oidc/callback"),
		withEnv("KNOBS_OIDC_NAME", ssoName),
	}
	for i := 0; i+1 < len(env); i += 2 {
		opts = append(opts, withEnv(env[i], env[i+1]))
	}
	srv := newServer(t, opts...)
	u, err := url.Parse(srv.url)
	if err != nil {
		t.Fatal(err)
	}
	front.mu.Lock()
	front.target = u
	front.mu.Unlock()
	return srv, d, front
}

// ssoStart asks Knobs to start a single sign-on and returns where it
// sends the browser: the provider's authorize endpoint.
func (c *client) ssoStart(path string) *url.URL {
	c.t.Helper()
	r := c.get(path)
	if r.status != http.StatusSeeOther {
		c.t.Fatalf("%s: got %d, want 303 to the provider; page says: %s", path, r.status, errorText(r))
	}
	u, err := url.Parse(r.location)
	if err != nil {
		c.t.Fatal(err)
	}
	return u
}

// authorize visits the provider's authorize endpoint, which signs in the
// queued user at once, and returns where it sends the browser back to.
func authorize(t testing.TB, u *url.URL) *url.URL {
	t.Helper()
	plain := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := plain.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("the provider's authorize endpoint answered %d", resp.StatusCode)
	}
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// visit asks for a full URL with the client's cookies, not following
// redirects.
func (c *client) visit(u *url.URL) *response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.do(req)
}

// ssoSignIn goes through a whole single sign-on and returns Knobs' answer
// to the provider's redirect, not followed.
func (c *client) ssoSignIn() *response {
	c.t.Helper()
	return c.visit(authorize(c.t, c.ssoStart("/auth/oidc/start")))
}

// identityUser is the account the identity signs in to, or ErrNotFound.
func (s *server) identityUser(t testing.TB, d *idp, subject string) (db.User, error) {
	t.Helper()
	return s.store.IdentityUser(context.Background(), d.m.Issuer(), subject)
}

func (s *server) countUsers(t testing.TB) int {
	t.Helper()
	n, err := s.store.CountUsers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSSONewUserLandsInThePlayground(t *testing.T) {
	t.Parallel()
	srv, d, front := ssoServer(t, "KNOBS_OIDC_ALLOWED_DOMAINS", "example.com")
	newTeamAdmin(t, srv)

	c := srv.newClient(t)
	wantPage(t, c.get("/login"), http.StatusOK, `href="/auth/oidc/start"`, "Sign in with "+ssoName, `action="/login"`)

	d.queue("sub-jane", "Jane.Doe@Example.com", true)
	authURL := c.ssoStart("/auth/oidc/start?next=" + url.QueryEscape("/history"))
	q := authURL.Query()
	if !strings.HasPrefix(authURL.String(), d.m.AuthorizationEndpoint()+"?") || q.Get("client_id") != ssoClientID ||
		q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) < 43 || len(q.Get("state")) < 43 || len(q.Get("nonce")) < 43 ||
		q.Get("redirect_uri") != front.srv.URL+"/auth/oidc/callback" || !strings.Contains(q.Get("scope"), "openid") {
		t.Fatalf("the provider is asked without PKCE, state, nonce or the redirect URL: %s", authURL)
	}
	back := authorize(t, authURL)
	if back.Host != strings.TrimPrefix(front.srv.URL, "http://") {
		t.Fatalf("the provider sends the browser to %s", back)
	}
	r := c.visit(back)
	wantRedirect(t, r, "/history")
	wantPage(t, c.open("/"), http.StatusOK, "Signed in as <strong>jane.doe</strong>", "Welcome to Knobs, jane.doe.")
	if r.has(ssoClientSecret) {
		t.Errorf("a page shows the client secret")
	}

	u, err := srv.identityUser(t, d, "sub-jane")
	if err != nil || u.Username != "jane.doe" || u.Role != db.RoleMember || u.PasswordHash != "" {
		t.Fatalf("the identity signs in to %+v (%v), want the member jane.doe with no password", u, err)
	}

	// Signing in again, in another browser, reaches the same account.
	other := srv.newClient(t)
	d.queue("sub-jane", "jane.doe@example.com", true)
	wantRedirect(t, other.ssoSignIn(), "/")
	wantPage(t, other.open("/"), http.StatusOK, "Signed in as <strong>jane.doe</strong>")
	if n := srv.countUsers(t); n != 2 {
		t.Errorf("%d accounts after two sign-ins of one identity beside the admin, want 2", n)
	}
	// A username taken by another account gets a number.
	third := srv.newClient(t)
	d.queue("sub-other-admin", "admin@example.com", true)
	wantRedirect(t, third.ssoSignIn(), "/")
	wantPage(t, third.open("/"), http.StatusOK, "Signed in as <strong>admin-2</strong>")
	if logs := srv.log.String(); strings.Contains(logs, ssoClientSecret) {
		t.Errorf("the log shows the client secret")
	}
}

// newTeamAdmin signs up the admin of srv with a password, so that the
// accounts single sign-on makes are not the first.
func newTeamAdmin(t testing.TB, srv *server) *client {
	t.Helper()
	admin := srv.newClient(t)
	admin.signUp("admin", "")
	return admin
}

func TestSSORefusals(t *testing.T) {
	t.Parallel()
	srv, d, _ := ssoServer(t, "KNOBS_OIDC_ALLOWED_DOMAINS", "example.com")
	newTeamAdmin(t, srv)
	forged, err := mockoidc.RandomKeypair(2048)
	if err != nil {
		t.Fatal(err)
	}
	forged.Kid = d.m.Keypair.Kid // the provider's key id, another key

	for _, tt := range []struct {
		name       string
		email      string
		unverified bool
		reissue    func(jwt.MapClaims) *mockoidc.Keypair
		// tokenError is the token endpoint's refusal of the code.
		tokenError [2]string
		// authorize and back change the address of the provider, and the
		// one it sends the browser back to.
		authorize func(q url.Values)
		back      func(q url.Values)
		status    int
		want      string
	}{
		{name: "forged state", back: func(q url.Values) { q.Set("state", "forged-state-of-an-attacker") },
			status: http.StatusBadRequest, want: "does not belong to the sign-in this browser started (its state differs)"},
		{name: "no state", back: func(q url.Values) { q.Del("state") },
			status: http.StatusBadRequest, want: "(its state differs)"},
		{name: "wrong nonce", authorize: func(q url.Values) { q.Set("nonce", "a-nonce-of-another-sign-in") },
			status: http.StatusUnauthorized, want: "The sign-in token does not belong to the sign-in this browser started (its nonce differs)."},
		{name: "expired token", reissue: func(c jwt.MapClaims) *mockoidc.Keypair {
			past := time.Now().Add(-2 * time.Hour).Unix()
			c["iat"], c["nbf"], c["exp"] = past, past, past+600
			return nil
		}, status: http.StatusUnauthorized, want: "The sign-in token from the identity provider has expired."},
		{name: "wrong audience", reissue: func(c jwt.MapClaims) *mockoidc.Keypair { c["aud"] = []string{"another-app"}; return nil },
			status: http.StatusUnauthorized, want: "was issued for another application, not this Knobs."},
		{name: "wrong issuer", reissue: func(c jwt.MapClaims) *mockoidc.Keypair { c["iss"] = "https://idp.attacker.example"; return nil },
			status: http.StatusUnauthorized, want: "was issued by another identity provider than the one this Knobs trusts."},
		{name: "forged signature", reissue: func(c jwt.MapClaims) *mockoidc.Keypair { return forged },
			status: http.StatusUnauthorized, want: "The sign-in token from the identity provider could not be verified."},
		{name: "disallowed domain", email: "mallory@gmail.com",
			status: http.StatusForbidden, want: "Accounts for mallory@gmail.com are not made here by single sign-on: its email domain is not allowed on this Knobs."},
		{name: "lookalike domain", email: "mallory@evil-example.com",
			status: http.StatusForbidden, want: "its email domain is not allowed"},
		{name: "unverified email", email: "pat@example.com", unverified: true,
			status: http.StatusForbidden, want: "The identity provider did not confirm your email address"},
		{name: "provider error", back: func(q url.Values) {
			q.Del("code")
			q.Set("error", "access_denied")
			q.Set("error_description", "The user <b>cancelled</b>")
		}, status: http.StatusForbidden, want: "The identity provider did not sign you in: access_denied: The user &lt;b&gt;cancelled&lt;/b&gt;."},
		{name: "code refused", tokenError: [2]string{"invalid_grant", "The code has expired"},
			status: http.StatusBadGateway, want: "The identity provider did not accept the sign-in code: invalid_grant: The code has expired."},
		{name: "missing code", back: func(q url.Values) { q.Del("code") },
			status: http.StatusBadRequest, want: "The answer from the identity provider carries no sign-in code."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			users := srv.countUsers(t)
			email := tt.email
			if email == "" {
				email = "sam@example.com"
			}
			subject := "sub-" + strings.ReplaceAll(tt.name, " ", "-")
			d.queue(subject, email, !tt.unverified)
			d.setReissue(tt.reissue)
			d.setTokenError(tt.tokenError[0], tt.tokenError[1])
			defer func() { d.setReissue(nil); d.setTokenError("", "") }()

			c := srv.newClient(t)
			authURL := c.ssoStart("/auth/oidc/start")
			if tt.authorize != nil {
				q := authURL.Query()
				tt.authorize(q)
				authURL.RawQuery = q.Encode()
			}
			back := authorize(t, authURL)
			if tt.back != nil {
				q := back.Query()
				tt.back(q)
				back.RawQuery = q.Encode()
			}
			r := c.visit(back)
			wantPage(t, r, tt.status, tt.want, "Nothing was changed; start again from the sign-in page.")
			if _, err := sessionCookie(r); !errors.Is(err, errNoCookie) {
				t.Errorf("the refusal sets the session cookie")
			}
			if c.signedIn() {
				t.Errorf("the browser is signed in after the refusal")
			}
			if n := srv.countUsers(t); n != users {
				t.Errorf("%d accounts after the refusal, want %d", n, users)
			}
			if _, err := srv.identityUser(t, d, subject); !errors.Is(err, db.ErrNotFound) {
				t.Errorf("the refused identity is linked to an account (%v)", err)
			}
			// The flow cookie is spent: the same answer again is refused.
			wantPage(t, c.visit(back), http.StatusBadRequest, "This sign-in did not start in this browser")
		})
	}

	t.Run("another browser's answer", func(t *testing.T) {
		d.queue("sub-victim", "victim@example.com", true)
		back := authorize(t, srv.newClient(t).ssoStart("/auth/oidc/start"))
		victim := srv.newClient(t)
		wantPage(t, victim.visit(back), http.StatusBadRequest, "This sign-in did not start in this browser, or took longer than 10 minutes.")
		if _, err := srv.identityUser(t, d, "sub-victim"); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("an answer to another browser made an account (%v)", err)
		}
	})
}

func TestSSOAdminGroupSetsTheRoleAtEachSignIn(t *testing.T) {
	t.Parallel()
	srv, d, _ := ssoServer(t, "KNOBS_OIDC_ADMIN_GROUP", "knobs-admins", "KNOBS_OIDC_SCOPES", "openid email profile groups")
	newTeamAdmin(t, srv)

	// The group alone lets an account be made: no domain is allowed.
	c := srv.newClient(t)
	d.queue("sub-ada", "ada@corp.example", true, "engineering", "knobs-admins")
	wantRedirect(t, c.ssoSignIn(), "/")
	if s := c.open("/settings"); !isAdminPage(s) {
		t.Errorf("a member of the admin group is not an admin")
	}

	// Out of the group, the next sign-in makes a member.
	c2 := srv.newClient(t)
	d.queue("sub-ada", "ada@corp.example", true, "engineering")
	wantRedirect(t, c2.ssoSignIn(), "/")
	if s := c2.open("/settings"); isAdminPage(s) {
		t.Errorf("an admin who left the admin group is still an admin")
	}
	if u, _ := srv.identityUser(t, d, "sub-ada"); u.Role != db.RoleMember {
		t.Errorf("role %q after leaving the group, want member", u.Role)
	}
	// Her session as an admin ended with the demotion.
	if c.signedIn() {
		t.Errorf("the session opened as admin still works after the demotion")
	}

	// Outside the group and every allowed domain, no account is made.
	d.queue("sub-eve", "eve@corp.example", true, "engineering")
	wantPage(t, srv.newClient(t).ssoSignIn(), http.StatusForbidden, "its email domain is not allowed")
}

func TestSSOLinksAnExistingAccountOnlyWithItsPassword(t *testing.T) {
	t.Parallel()
	srv, d, _ := ssoServer(t, "KNOBS_OIDC_ALLOWED_DOMAINS", "example.com")
	admin := newTeamAdmin(t, srv)
	admin.addMember("bob@example.com")
	users := srv.countUsers(t)

	c := srv.newClient(t)
	d.queue("sub-bob", "bob@example.com", true)
	wantRedirect(t, c.ssoSignIn(), "/auth/oidc/link")
	page := c.get("/auth/oidc/link")
	wantPage(t, page, http.StatusOK, "An account with this email exists — enter its password to link", "<strong>bob@example.com</strong>")
	if c.signedIn() {
		t.Fatalf("signed in before the password was given")
	}

	// Another browser has nothing to link.
	wantPage(t, srv.newClient(t).get("/auth/oidc/link"), http.StatusBadRequest, "No single sign-on is waiting to be linked")

	wantPage(t, c.postForm("/auth/oidc/link", form("password", "not the password")), http.StatusUnauthorized, "Wrong password.")
	if _, err := srv.identityUser(t, d, "sub-bob"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a wrong password linked the identity (%v)", err)
	}
	if c.signedIn() {
		t.Fatalf("signed in after a wrong password")
	}

	r := c.postForm("/auth/oidc/link", form("password", testPassword))
	wantRedirect(t, r, "/")
	wantPage(t, c.open("/"), http.StatusOK, "Signed in as <strong>bob@example.com</strong>", "Your account is linked: sign in with "+ssoName+" from now on.")
	if u, err := srv.identityUser(t, d, "sub-bob"); err != nil || u.Username != "bob@example.com" {
		t.Errorf("the identity signs in to %+v (%v), want bob@example.com", u, err)
	}
	if n := srv.countUsers(t); n != users {
		t.Errorf("%d accounts after linking, want %d", n, users)
	}

	// From now on the identity signs in straight away.
	d.queue("sub-bob", "bob@example.com", true)
	other := srv.newClient(t)
	wantRedirect(t, other.ssoSignIn(), "/")
	wantPage(t, other.open("/"), http.StatusOK, "Signed in as <strong>bob@example.com</strong>")
}

func TestSSOPasswordLoginOff(t *testing.T) {
	t.Parallel()
	srv, d, _ := ssoServer(t, "KNOBS_PASSWORD_LOGIN", "false", "KNOBS_OIDC_ALLOWED_DOMAINS", "example.com")
	c := srv.newClient(t)

	r := c.get("/login")
	wantPage(t, r, http.StatusOK, "Sign in with "+ssoName, "the first person this Knobs lets in through "+ssoName+" (an allowed email domain, or the admin group when one is set) becomes the team's admin")
	if r.has(`action="/login"`) || r.has(`name="password"`) {
		t.Errorf("the sign-in page shows the password form")
	}
	if s := c.get("/signup"); s.has(`action="/signup"`) {
		t.Errorf("the sign-up page shows the password form")
	}
	wantPage(t, c.postForm("/login", form("username", "admin", "password", testPassword)), http.StatusForbidden,
		"Password sign-in is switched off on this Knobs: sign in with "+ssoName+".")
	wantPage(t, c.postForm("/signup", form("username", "admin", "password", testPassword, "password2", testPassword)), http.StatusForbidden,
		"Password sign-in is switched off")
	if n := srv.countUsers(t); n != 0 {
		t.Fatalf("%d accounts after refused posts, want none", n)
	}

	// The first account becomes the admin, so whoever reaches the
	// provider first is not let in outside the allowed domains.
	d.queue("sub-stranger", "stranger@anywhere.example", true)
	wantPage(t, srv.newClient(t).ssoSignIn(), http.StatusForbidden, "its email domain is not allowed")
	if n := srv.countUsers(t); n != 0 {
		t.Fatalf("%d accounts after a first sign-on outside the policy, want none", n)
	}
	// The first allowed one, as with sign-up, is the admin.
	d.queue("sub-root", "root@example.com", true)
	wantRedirect(t, c.ssoSignIn(), "/")
	if s := c.open("/settings"); !isAdminPage(s) {
		t.Errorf("the first account made by single sign-on is not the admin")
	}
}

func TestSSOInviteAndRemovedMember(t *testing.T) {
	t.Parallel()
	srv, d, _ := ssoServer(t, "KNOBS_OIDC_ALLOWED_DOMAINS", "example.com")
	admin := newTeamAdmin(t, srv)

	// Outside the allowed domains, an invite lets one person in.
	link := admin.invite()
	guest := srv.newClient(t)
	page := guest.get(link)
	wantPage(t, page, http.StatusOK, "Sign up with "+ssoName, `/auth/oidc/start?invite=`+inviteToken(link))
	d.queue("sub-guest", "guest@partner.example", true)
	wantRedirect(t, guest.visit(authorize(t, guest.ssoStart("/auth/oidc/start?invite="+inviteToken(link)))), "/")
	wantPage(t, guest.open("/"), http.StatusOK, "Signed in as <strong>guest</strong>")
	wantPage(t, admin.open("/settings"), http.StatusOK, "used by guest")

	// The spent invite lets nobody else in.
	other := srv.newClient(t)
	d.queue("sub-other", "other@partner.example", true)
	wantPage(t, other.visit(authorize(t, other.ssoStart("/auth/oidc/start?invite="+inviteToken(link)))), http.StatusForbidden,
		"Your invite link was already used, has expired or was revoked.")

	// A member an admin removed does not come back by the domain policy.
	member := srv.newClient(t)
	d.queue("sub-kim", "kim@example.com", true)
	wantRedirect(t, member.ssoSignIn(), "/")
	kim, err := srv.identityUser(t, d, "sub-kim")
	if err != nil {
		t.Fatal(err)
	}
	wantRedirect(t, admin.postForm("/settings/members/"+strconv.FormatInt(kim.ID, 10)+"/remove", nil), "/settings")
	if member.signedIn() {
		t.Fatalf("a removed member is still signed in")
	}
	d.queue("sub-kim", "kim@example.com", true)
	wantPage(t, srv.newClient(t).ssoSignIn(), http.StatusForbidden, "An admin removed your account from this Knobs. To come back, ask an admin for an invite link.")
	if n := srv.countUsers(t); n != 2 {
		t.Fatalf("%d accounts, want the admin and the guest", n)
	}

	// An invite lets them back, and then the domain does again.
	back := srv.newClient(t)
	d.queue("sub-kim", "kim@example.com", true)
	wantRedirect(t, back.visit(authorize(t, back.ssoStart("/auth/oidc/start?invite="+inviteToken(admin.invite())))), "/")
	wantPage(t, back.open("/"), http.StatusOK, "Signed in as <strong>kim</strong>")
}

// Microsoft Entra sends no email_verified: its optional claim xms_edov
// (the email's domain verified by its owner) stands for it.
func TestSSOEntraDomainVerifiedClaim(t *testing.T) {
	t.Parallel()
	srv, d, _ := ssoServer(t, "KNOBS_OIDC_ALLOWED_DOMAINS", "example.com")
	newTeamAdmin(t, srv)

	d.setReissue(func(c jwt.MapClaims) *mockoidc.Keypair { c["xms_edov"] = false; return nil })
	d.queue("sub-entra-1", "lee@example.com", false)
	wantPage(t, srv.newClient(t).ssoSignIn(), http.StatusForbidden, "did not confirm your email address")

	d.setReissue(func(c jwt.MapClaims) *mockoidc.Keypair { c["xms_edov"] = true; return nil })
	d.queue("sub-entra-1", "lee@example.com", false)
	c := srv.newClient(t)
	wantRedirect(t, c.ssoSignIn(), "/")
	wantPage(t, c.open("/"), http.StatusOK, "Signed in as <strong>lee</strong>")

	// email_verified, when sent, decides.
	d.setReissue(func(c jwt.MapClaims) *mockoidc.Keypair { c["xms_edov"] = true; c["email_verified"] = false; return nil })
	d.queue("sub-entra-2", "max@example.com", false)
	wantPage(t, srv.newClient(t).ssoSignIn(), http.StatusForbidden, "did not confirm your email address")
}

func TestSSOProviderUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String() + "/oidc"
	ln.Close() // nothing answers there now
	srv := newServer(t,
		withEnv("KNOBS_OIDC_ISSUER", issuer),
		withEnv("KNOBS_OIDC_CLIENT_ID", ssoClientID),
		withEnv("KNOBS_OIDC_CLIENT_SECRET", ssoClientSecret),
		withEnv("KNOBS_OIDC_REDIRECT_URL", "http://127.0.0.1:1/auth/oidc/callback"))
	c := srv.newClient(t)
	wantPage(t, c.get("/auth/oidc/start"), http.StatusBadGateway, "Knobs cannot reach the identity provider right now.")
	if logs := srv.log.String(); !strings.Contains(logs, "discovery document could not be read") || strings.Contains(logs, ssoClientSecret) {
		t.Errorf("the log does not say why, or shows the client secret:\n%s", logs)
	}
}

// With an admin group set, the first account, which becomes the admin,
// must be in it: an allowed domain alone does not make the team's admin.
func TestSSOFirstAccountNeedsTheAdminGroup(t *testing.T) {
	t.Parallel()
	srv, d, _ := ssoServer(t, "KNOBS_PASSWORD_LOGIN", "false", "KNOBS_OIDC_ALLOWED_DOMAINS", "example.com",
		"KNOBS_OIDC_ADMIN_GROUP", "knobs-admins", "KNOBS_OIDC_SCOPES", "openid email profile groups")
	d.queue("sub-dev", "dev@example.com", true, "engineering")
	wantPage(t, srv.newClient(t).ssoSignIn(), http.StatusForbidden, "its first account becomes the admin: it must be made by a member of the admin group knobs-admins")
	if n := srv.countUsers(t); n != 0 {
		t.Fatalf("%d accounts after a first sign-on outside the admin group, want none", n)
	}
	c := srv.newClient(t)
	d.queue("sub-lead", "lead@example.com", true, "knobs-admins")
	wantRedirect(t, c.ssoSignIn(), "/")
	if s := c.open("/settings"); !isAdminPage(s) {
		t.Errorf("the first account, in the admin group, is not the admin")
	}
	// After it, the domain lets members in.
	m := srv.newClient(t)
	d.queue("sub-dev", "dev@example.com", true, "engineering")
	wantRedirect(t, m.ssoSignIn(), "/")
	if s := m.open("/settings"); isAdminPage(s) {
		t.Errorf("a member outside the admin group is an admin")
	}
}

// A username that is someone's email address proves nothing: anyone may
// have picked it. The owner of the address, signing on, is offered a new
// account beside the link, and takes it without the squatter's password.
func TestSSOUsernameLikeAnEmailDoesNotBlockItsOwner(t *testing.T) {
	t.Parallel()
	srv, d, _ := ssoServer(t, "KNOBS_OIDC_ALLOWED_DOMAINS", "example.com")
	admin := newTeamAdmin(t, srv)
	admin.addMember("ceo@example.com") // a member picked the CEO's address as a name
	users := srv.countUsers(t)

	c := srv.newClient(t)
	d.queue("sub-ceo", "ceo@example.com", true)
	wantRedirect(t, c.ssoSignIn(), "/auth/oidc/link")
	wantPage(t, c.get("/auth/oidc/link"), http.StatusOK, `action="/auth/oidc/link/new"`, "Not my account: make a new one")
	wantRedirect(t, c.postForm("/auth/oidc/link/new", nil), "/")
	u, err := srv.identityUser(t, d, "sub-ceo")
	if err != nil || u.Username == "ceo@example.com" {
		t.Fatalf("the identity signs in to %+v (%v), want a new account", u, err)
	}
	if n := srv.countUsers(t); n != users+1 {
		t.Errorf("%d accounts, want %d", n, users+1)
	}
	wantPage(t, c.open("/"), http.StatusOK, "Signed in as <strong>"+u.Username+"</strong>")
	// The offer is used up with the cookie.
	wantPage(t, c.postForm("/auth/oidc/link/new", nil), http.StatusBadRequest, "No single sign-on is waiting to be linked")
}

// An account whose verified email matches is never bypassed with a new
// account: only its password links it.
func TestSSONoNewAccountBesideAVerifiedEmail(t *testing.T) {
	t.Parallel()
	srv, d, _ := ssoServer(t, "KNOBS_OIDC_ALLOWED_DOMAINS", "example.com")
	newTeamAdmin(t, srv)
	// Ann's account gets its verified email by her first sign-on.
	d.queue("sub-ann", "ann@example.com", true)
	wantRedirect(t, srv.newClient(t).ssoSignIn(), "/")
	users := srv.countUsers(t)
	// Another identity of the same provider with the same address is
	// refused: the account is linked already.
	d.queue("sub-ann-2", "ann@example.com", true)
	wantPage(t, srv.newClient(t).ssoSignIn(), http.StatusConflict, "signs in with another identity of this provider")
	if n := srv.countUsers(t); n != users {
		t.Errorf("%d accounts, want %d", n, users)
	}
}

// An account single sign-on made has no password: Settings says how it
// signs in instead of showing a password form that cannot work, and a
// post of that form changes nothing. A password account keeps its form,
// and the admin can still give a member a reset link.
func TestSSOAccountSettingsWithoutAPassword(t *testing.T) {
	t.Parallel()
	srv, d, _ := ssoServer(t, "KNOBS_OIDC_ALLOWED_DOMAINS", "example.com")
	admin := newTeamAdmin(t, srv)

	jane := srv.newClient(t)
	d.queue("sub-jane", "jane@example.com", true)
	wantRedirect(t, jane.ssoSignIn(), "/")
	page := jane.open("/settings")
	wantPage(t, page, http.StatusOK, "You sign in with <strong>"+ssoName+"</strong>.", "Sign out of all sessions")
	if page.has(`action="/settings/password"`) || page.has("Current password") {
		t.Errorf("an account without a password is shown the change-password form")
	}
	wantPage(t, jane.postForm("/settings/password", form("current", "", "password", "a-new-password-1", "password2", "a-new-password-1")),
		http.StatusConflict, "You sign in with "+ssoName+": your account has no password to change.")
	u, err := srv.identityUser(t, d, "sub-jane")
	if err != nil || u.PasswordHash != "" {
		t.Fatalf("after the refused post the account is %+v (%v), want it without a password", u, err)
	}
	if !jane.signedIn() {
		t.Errorf("the refused post signed jane out")
	}

	mine := admin.open("/settings")
	wantPage(t, mine, http.StatusOK, `action="/settings/password"`, "Current password",
		`action="/settings/members/`+strconv.FormatInt(u.ID, 10)+`/reset"`)
	if mine.has("You sign in with") {
		t.Errorf("a password account is told it signs in with single sign-on")
	}
}

// With password sign-in switched off, a password reset link would let
// nobody in: Settings offers none, and a post for one is refused with a
// message and makes no link.
func TestSSOPasswordLoginOffMakesNoResetLinks(t *testing.T) {
	t.Parallel()
	srv, d, _ := ssoServer(t, "KNOBS_PASSWORD_LOGIN", "false", "KNOBS_OIDC_ALLOWED_DOMAINS", "example.com")
	admin := srv.newClient(t)
	d.queue("sub-root", "root@example.com", true)
	wantRedirect(t, admin.ssoSignIn(), "/")
	kim := srv.newClient(t)
	d.queue("sub-kim", "kim@example.com", true)
	wantRedirect(t, kim.ssoSignIn(), "/")
	member, err := srv.identityUser(t, d, "sub-kim")
	if err != nil {
		t.Fatal(err)
	}
	resetPath := "/settings/members/" + strconv.FormatInt(member.ID, 10) + "/reset"

	page := admin.open("/settings")
	if !isAdminPage(page) {
		t.Fatalf("the first account is not the admin")
	}
	wantPage(t, page, http.StatusOK, "You sign in with <strong>"+ssoName+"</strong>.", `action="/settings/members/`+strconv.FormatInt(member.ID, 10)+`/remove"`)
	if page.has(resetPath) || page.has("Password reset link") {
		t.Errorf("Settings offers a password reset link while password sign-in is off")
	}
	r := admin.postForm(resetPath, nil)
	wantPage(t, r, http.StatusConflict, "Password sign-in is switched off on this Knobs, so a password reset link would let nobody in: members sign in with "+ssoName+".")
	if r.has("/reset/") {
		t.Errorf("the refusal shows a reset link")
	}
	if strings.Contains(srv.log.String(), "password reset link made") {
		t.Errorf("a reset link was made while password sign-in is off")
	}
}
