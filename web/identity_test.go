package web_test

// Identity and sessions under attack: a removed member's cookie, a
// demoted admin's open pages, a copied cookie after sign-out, password
// changes and resets, and parallel password guesses.

import (
	"context"
	"database/sql"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"knobs/db"
	"knobs/web/session"
)

// cookieCopy is a client that carries the same session cookie as c, as a
// thief with a copy of it would.
func (c *client) cookieCopy() *client {
	c.t.Helper()
	u, _ := url.Parse(c.srv.url)
	thief := c.srv.newClientFrom(c.t, "127.0.0.3")
	var found bool
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == session.CookieName {
			thief.http.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/"}})
			found = true
		}
	}
	if !found {
		c.t.Fatalf("the client has no session cookie to copy")
	}
	return thief
}

// signedInAs is the name the page says is signed in, or "".
func (c *client) signedInAs() string {
	c.t.Helper()
	r := c.get("/settings")
	if r.status != http.StatusOK {
		return ""
	}
	return regexpFind(`Signed in as <strong>([^<]*)</strong>`, r.body)
}

func memberPath(id int64, action string) string {
	return "/settings/members/" + strconv.FormatInt(id, 10) + "/" + action
}

// The newest member is removed and someone new signs up: the removed
// member's cookie must not sign in as the newcomer (who would otherwise
// get the same user id).
func TestRemovedMembersCookieIsNotANewcomer(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")
	bobID := srv.userID(t, "bob")
	stolen := bob.cookieCopy()
	if got := stolen.signedInAs(); got != "bob" {
		t.Fatalf("the copied cookie signs in as %q before the removal, want bob", got)
	}
	wantPage(t, admin.submit(memberPath(bobID, "remove"), nil), http.StatusOK, "Removed the member.")
	admin.submit("/settings/signup-mode", form("mode", "open"))
	srv.newClient(t).signUp("dave", "")
	if daveID := srv.userID(t, "dave"); daveID == bobID {
		t.Errorf("the newcomer got the removed member's id %d", bobID)
	}
	for _, c := range []*client{bob, stolen} {
		if got := c.signedInAs(); got != "" {
			t.Errorf("the removed member's cookie is signed in as %q", got)
		}
	}
}

// A demoted admin's sessions end at once: their open pages cannot take
// admin actions, and a copy of their cookie signs nobody in.
func TestDemotedAdminsSessionsEnd(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")
	bobID := srv.userID(t, "bob")
	wantPage(t, admin.submit(memberPath(bobID, "role"), form("role", "admin")), http.StatusOK, "Changed the role.")
	bob.open("/settings") // bob's page, with its form token, is open
	copied := bob.cookieCopy()
	wantPage(t, admin.submit(memberPath(bobID, "role"), form("role", "member")), http.StatusOK, "Changed the role.")

	r := bob.postForm("/settings/signup-mode", form("mode", "open"))
	if r.status != http.StatusForbidden && r.status != http.StatusUnauthorized {
		t.Errorf("a demoted admin's open page changed a team setting: %d %s", r.status, errorText(r))
	}
	if mode, _ := srv.store.Setting(context.Background(), db.SettingSignUpMode); mode == "open" {
		t.Errorf("sign-up was opened by a demoted admin")
	}
	for _, c := range []*client{bob, copied} {
		if got := c.signedInAs(); got != "" {
			t.Errorf("a demoted admin's cookie is still signed in as %q", got)
		}
	}
	// Stepping down yourself keeps your own session.
	wantPage(t, admin.submit(memberPath(bobID, "role"), form("role", "admin")), http.StatusOK, "Changed the role.")
	bob.mustLogIn("bob")
	wantPage(t, bob.submit(memberPath(srv.userID(t, "admin"), "role"), form("role", "member")), http.StatusOK, "Changed the role.")
	if got := admin.signedInAs(); got != "" {
		t.Errorf("the demoted admin is still signed in as %q", got)
	}
	wantPage(t, bob.submit(memberPath(bobID, "role"), form("role", "admin")), http.StatusOK, "Changed the role.")
	if got := bob.signedInAs(); got != "bob" {
		t.Errorf("an admin who changed their own role was signed out: %q", got)
	}
}

// Signing out ends the session on the server: a copy of the cookie taken
// before is signed out too.
func TestCopiedCookieDiesAtLogout(t *testing.T) {
	t.Parallel()
	_, admin := newTeam(t)
	copied := admin.cookieCopy()
	if got := copied.signedInAs(); got != "admin" {
		t.Fatalf("the copy signs in as %q before sign-out, want admin", got)
	}
	wantRedirect(t, admin.logOut(), "/login")
	if got := copied.signedInAs(); got != "" {
		t.Errorf("a copied cookie is still signed in as %q after sign-out", got)
	}
	if !strings.HasPrefix(copied.get("/history").location, "/login") {
		t.Errorf("a copied cookie still opens history after sign-out")
	}
}

func TestChangePassword(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	laptop := srv.newClientFrom(t, "127.0.0.2")
	laptop.mustLogIn("admin")
	admin.open("/settings")

	const newPassword = "a brand new passphrase"
	for _, tt := range []struct {
		name                         string
		current, password, password2 string
		field, message               string
	}{
		{"wrong current", "not my password", newPassword, newPassword, "err-current", "That is not your current password."},
		{"empty current", "", newPassword, newPassword, "err-current", "Enter your current password."},
		{"too short", testPassword, "short", "short", "err-password", "A password needs at least 8 characters."},
		{"too long", testPassword, strings.Repeat("p", 1025), strings.Repeat("p", 1025), "err-password", "A password has at most 1,024 bytes."},
		{"repeated wrong", testPassword, newPassword, newPassword + "!", "err-password2", "The two passwords differ."},
	} {
		r := admin.postForm("/settings/password", form("current", tt.current, "password", tt.password, "password2", tt.password2))
		wantPage(t, r, http.StatusUnprocessableEntity, `id="`+tt.field+`"`, tt.message)
	}
	if !srv.canLogIn(t, "admin", testPassword) || laptop.signedInAs() != "admin" {
		t.Fatalf("a refused password change changed something")
	}

	r := admin.submit("/settings/password", form("current", testPassword, "password", newPassword, "password2", newPassword))
	wantPage(t, r, http.StatusOK, "Your password is changed; every other session is signed out.")
	if got := admin.signedInAs(); got != "admin" {
		t.Errorf("the session that changed the password was signed out (%q)", got)
	}
	if got := laptop.signedInAs(); got != "" {
		t.Errorf("another session survived the password change as %q", got)
	}
	if srv.canLogIn(t, "admin", testPassword) {
		t.Errorf("the old password still signs in")
	}
	if !srv.canLogIn(t, "admin", newPassword) {
		t.Errorf("the new password does not sign in")
	}
}

func TestSignOutEverywhere(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")
	phone := srv.newClientFrom(t, "127.0.0.2")
	phone.mustLogIn("admin")
	wantPage(t, admin.open("/settings"), http.StatusOK, "You are signed in on 2 devices.")

	r := admin.postForm("/settings/sessions/end", nil)
	wantRedirect(t, r, "/login")
	wantPage(t, admin.follow(r), http.StatusOK, "You are signed out on every device.")
	for _, c := range []*client{admin, phone} {
		if got := c.signedInAs(); got != "" {
			t.Errorf("a session survived signing out everywhere as %q", got)
		}
	}
	if got := bob.signedInAs(); got != "bob" {
		t.Errorf("another user's session ended too (%q)", got)
	}
	admin.mustLogIn("admin")
	wantPage(t, admin.open("/settings"), http.StatusOK, "You are signed in on 1 device.")
}

var resetInput = `id="reset-url"[^>]*value="([^"]*)"`

func TestPasswordResetLink(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")
	carol := admin.addMember("carol")
	bobID := srv.userID(t, "bob")

	// Members cannot make links.
	wantPage(t, carol.postForm(memberPath(bobID, "reset"), nil), http.StatusForbidden, "Only an admin can do that.")
	wantPage(t, admin.postForm(memberPath(9999, "reset"), nil), http.StatusNotFound, "There is no such member.")

	r := admin.submit(memberPath(bobID, "reset"), nil)
	wantPage(t, r, http.StatusOK, "Send this link to bob only")
	link := regexpFind(resetInput, r.body)
	if !strings.HasPrefix(link, srv.url+"/reset/") {
		t.Fatalf("reset link %q", link)
	}
	path := strings.TrimPrefix(link, srv.url)
	if strings.Contains(srv.log.String(), path) {
		t.Errorf("the reset link's token is in the log")
	}

	// Bob forgot his password; his old session (say, a lost laptop) ends.
	visitor := srv.newClientFrom(t, "127.0.0.2")
	wantPage(t, visitor.get(path), http.StatusOK, "For <strong>bob</strong>")
	wantPage(t, visitor.postForm(path, form("password", "short", "password2", "short")), http.StatusUnprocessableEntity, "A password needs at least 8 characters.")
	const fresh = "bob's fresh passphrase"
	r = visitor.postForm(path, form("password", fresh, "password2", fresh))
	wantRedirect(t, r, "/")
	if got := visitor.signedInAs(); got != "bob" {
		t.Errorf("after the reset the visitor is signed in as %q, want bob", got)
	}
	if got := bob.signedInAs(); got != "" {
		t.Errorf("bob's other session survived the reset as %q", got)
	}
	if !srv.canLogIn(t, "bob", fresh) || srv.canLogIn(t, "bob", testPassword) {
		t.Errorf("the reset did not replace bob's password")
	}

	// Single use.
	again := srv.newClient(t)
	wantPage(t, again.get(path), http.StatusNotFound, "unknown, used or expired")
	wantPage(t, again.postForm(path, form("password", "attacker's password", "password2", "attacker's password")), http.StatusNotFound, "unknown, used or expired")
	if srv.canLogIn(t, "bob", "attacker's password") {
		t.Errorf("a used reset link set a password")
	}

	// Expired.
	r = admin.submit(memberPath(bobID, "reset"), nil)
	path = strings.TrimPrefix(regexpFind(resetInput, r.body), srv.url)
	raw, err := sql.Open("sqlite", "file:"+srv.dbPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE password_resets SET expires_at = 0 WHERE used_at IS NULL`); err != nil {
		t.Fatal(err)
	}
	wantPage(t, srv.newClient(t).get(path), http.StatusNotFound, "unknown, used or expired")

	// A newer link replaces an older one.
	first := strings.TrimPrefix(regexpFind(resetInput, admin.submit(memberPath(bobID, "reset"), nil).body), srv.url)
	second := strings.TrimPrefix(regexpFind(resetInput, admin.submit(memberPath(bobID, "reset"), nil).body), srv.url)
	wantPage(t, srv.newClient(t).get(first), http.StatusNotFound, "unknown, used or expired")
	wantPage(t, srv.newClient(t).get(second), http.StatusOK, "For <strong>bob</strong>")
}

// 200 parallel guesses for one account: at most the limit of them reach
// the password check; the rest are refused before it.
func TestSignInLimitHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	admin.logOut()
	clients := make([]*client, 200)
	for i := range clients {
		clients[i] = srv.newClient(t)
		clients[i].get("/login")
	}
	statuses := make([]int, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = c.postForm("/login", form("username", "admin", "password", "guess "+strconv.Itoa(i))).status
		}()
	}
	wg.Wait()
	checked, refused := 0, 0
	for _, s := range statuses {
		switch s {
		case http.StatusUnauthorized:
			checked++
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Errorf("a guess got status %d", s)
		}
	}
	if checked > 10 || checked+refused != len(clients) {
		t.Errorf("%d guesses reached the password check and %d were refused; want at most 10 checked", checked, refused)
	}
}

// A removed member's live run stops at once: its upstream request ends
// and nothing of it is left, in the runner or the database.
func TestRemovedMembersRunsStop(t *testing.T) {
	t.Parallel()
	up := hangingUpstream(t)
	srv, admin := newTeam(t, withSim(upstreamConfig(up.srv)))
	bob := admin.addMember("bob")
	bobID := srv.userID(t, "bob")
	bob.open("/")
	status, body, err := bob.postRunNow("/runs", runSpec(foreverBody), bob.token())
	if err != nil || status != http.StatusCreated {
		t.Fatalf("bob's run: %d %s %v", status, body, err)
	}
	wantPage(t, admin.submit(memberPath(bobID, "remove"), nil), http.StatusOK, "Removed the member.")
	up.waitEnded(t, 1)
	if runs, _, err := srv.store.Runs(context.Background(), db.RunFilter{UserID: bobID}); err != nil || len(runs) != 0 {
		t.Errorf("a removed member's runs are left: %d, %v", len(runs), err)
	}
}
