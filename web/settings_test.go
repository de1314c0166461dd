package web_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
)

// keyRow returns the table row of provider's key form at scope
// ("personal" or "team") on a settings page, or "".
func keyRow(body, scope, provider string) string {
	i := strings.Index(body, `id="`+scope+`-key-`+provider+`"`)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(body[:i], "<tr>")
	end := strings.Index(body[i:], "</tr>")
	if start < 0 || end < 0 {
		return ""
	}
	return body[start : i+end]
}

func wantKeyRow(t *testing.T, r *response, scope, provider string, texts ...string) {
	t.Helper()
	row := keyRow(r.body, scope, provider)
	if row == "" {
		t.Errorf("no %s key row for %s on %s", scope, provider, r.path)
		return
	}
	for _, s := range texts {
		if !strings.Contains(row, s) {
			t.Errorf("%s key row for %s lacks %q:\n%s", scope, provider, s, row)
		}
	}
}

func TestPersonalKeys(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")

	r := bob.open("/settings")
	wantKeyRow(t, r, "personal", "cerebras", `<span class="muted">none</span>`, "no key: runs will fail until one is set")

	r = bob.submit("/settings/keys", form("provider", "cerebras", "key", "  csk-first-key-0000wxyz  "))
	wantPage(t, r, http.StatusOK, "Saved the personal key for Cerebras.")
	wantKeyRow(t, r, "personal", "cerebras", "<code>••••wxyz</code>", "your key", `action="/settings/keys/remove"`)
	wantKeyRow(t, r, "personal", "xai", `<span class="muted">none</span>`)

	r = bob.submit("/settings/keys", form("provider", "cerebras", "key", "csk-second-key-1111abcd"))
	wantKeyRow(t, r, "personal", "cerebras", "<code>••••abcd</code>")
	if r.has("••••wxyz") {
		t.Errorf("the replaced key is still shown")
	}

	// Keys are the user's own: the admin does not see bob's.
	wantKeyRow(t, admin.open("/settings"), "personal", "cerebras", `<span class="muted">none</span>`)

	r = bob.submit("/settings/keys/remove", form("provider", "cerebras"))
	wantPage(t, r, http.StatusOK, "Removed the personal key for Cerebras.")
	wantKeyRow(t, r, "personal", "cerebras", `<span class="muted">none</span>`, "no key")
	wantPage(t, bob.submit("/settings/keys/remove", form("provider", "cerebras")), http.StatusOK, "There was no personal key for Cerebras.")

	// A key short enough that four characters would give much of it away.
	r = bob.submit("/settings/keys", form("provider", "xai", "key", "short-k3y9"))
	wantKeyRow(t, r, "personal", "xai", "<code>••••</code>", "your key")
	if r.has("k3y9") {
		t.Errorf("the end of a short key is shown")
	}

	for _, tt := range []struct {
		name, provider, key string
		status              int
		message             string
	}{
		{"empty key", "cerebras", "   ", 422, "Paste the key first."},
		{"space inside", "cerebras", "csk-has a-space-inside", 422, "An API key has no spaces or line breaks inside."},
		{"line break inside", "cerebras", "csk-line\nbreak-inside", 422, "An API key has no spaces or line breaks inside."},
		{"too long", "cerebras", strings.Repeat("k", 513), 422, "That is longer than any API key (at most 512 characters)."},
		{"unknown provider", "openai", "sk-unknown-provider-key", 404, "There is no provider &#34;openai&#34;."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := bob.postForm("/settings/keys", form("provider", tt.provider, "key", tt.key))
			wantPage(t, r, tt.status, tt.message)
			if strings.TrimSpace(tt.key) != "" && r.has(tt.key) {
				t.Errorf("the refused key is echoed back")
			}
		})
	}
	keys, err := srv.store.ProviderKeys(context.Background(), srv.userID(t, "bob"))
	if err != nil || len(keys) != 1 || keys[0].Provider != "xai" {
		t.Errorf("bob's stored keys after refused saves: %+v (%v), want only xai", keys, err)
	}
}

func TestKeyPrecedenceShown(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t, withEnv("CEREBRAS_API_KEY", "csk-from-the-environment-5555"))
	bob := admin.addMember("bob")

	wantKeyRow(t, bob.open("/settings"), "personal", "cerebras", "the server&#39;s environment")
	wantKeyRow(t, bob.open("/settings"), "personal", "xai", "no key")

	r := admin.submit("/settings/team-keys", form("provider", "cerebras", "key", "csk-team-key-77776789"))
	wantPage(t, r, http.StatusOK, "Saved the team key for Cerebras.")
	wantKeyRow(t, r, "team", "cerebras", "<code>••••6789</code>", "the team key, unless a member set their own")
	wantKeyRow(t, bob.open("/settings"), "personal", "cerebras", "the team key", `<span class="muted">none</span>`)

	bob.submit("/settings/keys", form("provider", "cerebras", "key", "csk-bobs-own-key-2222"))
	wantKeyRow(t, bob.open("/settings"), "personal", "cerebras", "your key", "<code>••••2222</code>")
	// The admin still uses the team key.
	wantKeyRow(t, admin.open("/settings"), "personal", "cerebras", "the team key")

	r = admin.submit("/settings/team-keys/remove", form("provider", "cerebras"))
	wantPage(t, r, http.StatusOK, "Removed the team key for Cerebras.")
	wantKeyRow(t, r, "personal", "cerebras", "the server&#39;s environment")
	if keys, _ := srv.store.ProviderKeys(context.Background(), 0); len(keys) != 0 {
		t.Errorf("team keys after removal: %+v", keys)
	}
}

func TestCustomProviders(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")

	r := admin.submit("/settings/providers", form("name", "Groq Cloud", "base_url", "https://api.groq.com/openai/v1/", "key", "gsk_team-provider-key-4321"))
	wantPage(t, r, http.StatusOK, "Added the provider Groq Cloud.", "<code>https://api.groq.com/openai</code>", "<code>••••4321</code>")
	wantKeyRow(t, r, "team", "groq-cloud", "<code>••••4321</code>")
	rb := bob.open("/settings")
	wantKeyRow(t, rb, "personal", "groq-cloud", "Groq Cloud API key", "the team key")
	bob.submit("/settings/keys", form("provider", "groq-cloud", "key", "gsk_bobs-groq-key-8888"))

	for _, tt := range []struct {
		name, pname, baseURL string
		status               int
		message              string
	}{
		{"empty name", "", "https://api.openai.com", 422, "Give the provider a name."},
		{"blank name", "   ", "https://api.openai.com", 422, "Give the provider a name."},
		{"no letters", "!!!", "https://api.openai.com", 422, "The name needs at least one letter or digit."},
		{"name too long", strings.Repeat("n", 41), "https://api.openai.com", 422, "A provider name has at most 40 characters."},
		{"reserved cerebras", "Cerebras", "https://api.openai.com", 422, "That name belongs to a built-in provider."},
		{"reserved xai", "xAI", "https://api.openai.com", 422, "That name belongs to a built-in provider."},
		{"reserved sim", "SIM", "https://api.openai.com", 422, "That name belongs to a built-in provider."},
		{"empty URL", "OpenAI", "", 422, "Give an http or https URL"},
		{"not a URL", "OpenAI", "api.openai.com", 422, "Give an http or https URL"},
		{"ftp URL", "OpenAI", "ftp://api.openai.com", 422, "Give an http or https URL"},
		{"URL with a password", "OpenAI", "https://user:pw@api.openai.com", 422, "Give an http or https URL"},
		{"taken name", "groq cloud", "https://other.example", 409, "A provider with that name exists."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := admin.postForm("/settings/providers", form("name", tt.pname, "base_url", tt.baseURL, "key", "sk-refused-provider-key-0000"))
			wantPage(t, r, tt.status, tt.message)
			if r.has("sk-refused-provider-key") {
				t.Errorf("the refused key is echoed back")
			}
		})
	}
	r = admin.postForm("/settings/providers", form("name", "OpenAI", "base_url", "https://api.openai.com", "key", "sk-has a-space"))
	wantPage(t, r, http.StatusUnprocessableEntity, "An API key has no spaces or line breaks inside.")
	ps, err := srv.store.CustomProviders(context.Background())
	if err != nil || len(ps) != 1 {
		t.Fatalf("providers after refused adds: %+v (%v), want only Groq Cloud", ps, err)
	}

	r = admin.submit("/settings/providers/groq-cloud/remove", nil)
	wantPage(t, r, http.StatusOK, "Removed the provider.")
	if r.has("Groq Cloud") || keyRow(r.body, "team", "groq-cloud") != "" {
		t.Errorf("the removed provider is still listed")
	}
	if keyRow(bob.open("/settings").body, "personal", "groq-cloud") != "" {
		t.Errorf("the removed provider is still offered to members")
	}
	for _, owner := range []int64{0, srv.userID(t, "bob")} {
		keys, _ := srv.store.ProviderKeys(context.Background(), owner)
		for _, k := range keys {
			if k.Provider == "groq-cloud" {
				t.Errorf("a key of the removed provider is still stored (owner %d)", owner)
			}
		}
	}
	wantPage(t, admin.postForm("/settings/providers/groq-cloud/remove", nil), http.StatusNotFound, "There is no such provider.")
	// A key for it is refused now.
	wantPage(t, bob.postForm("/settings/keys", form("provider", "groq-cloud", "key", "gsk_after-removal-1234")), http.StatusNotFound)
}

func TestKeysEncryptedAtRestAndNeverShown(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")
	keys := []string{
		"csk-PersonalAtRest-Zq8Rk2Lm9Vx4Np7Tw3Yb",
		"xai-TeamAtRest-Hg5Jd8Ks1Lq6WzPp0Oo",
		"gsk_ProviderAtRest_Mn4Bv7Cx2Zl9Qq1Rr",
		"sk-BobsOwnAtRest-Ty6Ui8Op3As5Df7Gh",
	}
	wantPage(t, admin.submit("/settings/keys", form("provider", "cerebras", "key", keys[0])), http.StatusOK, "Saved the personal key")
	wantPage(t, admin.submit("/settings/team-keys", form("provider", "xai", "key", keys[1])), http.StatusOK, "Saved the team key")
	wantPage(t, admin.submit("/settings/providers", form("name", "Local", "base_url", "http://127.0.0.1:11434", "key", keys[2])), http.StatusOK, "Added the provider")
	wantPage(t, bob.submit("/settings/keys", form("provider", "local", "key", keys[3])), http.StatusOK, "Saved the personal key")

	// Pages re-rendered after a refusal carry no key either.
	pages := []*response{
		admin.postForm("/settings/providers", form("name", "", "base_url", "http://x", "key", keys[0])),
		admin.postForm("/settings/invites", form("days", "99")),
	}
	for _, c := range []*client{admin, bob} {
		for _, p := range []string{"/", "/settings", "/compare", "/presets", "/history", "/login", "/signup", "/no-such-page"} {
			pages = append(pages, c.open(p))
		}
	}
	for _, p := range pages {
		for _, k := range keys {
			if p.has(k) || p.has(k[:len(k)-4]) {
				t.Errorf("%s shows a stored key (%s...)", p.path, k[:8])
			}
		}
	}
	// Each is shown by its last four only.
	for _, want := range []string{"••••w3Yb", "••••p0Oo", "••••q1Rr"} {
		wantPage(t, admin.open("/settings"), http.StatusOK, want)
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
	for _, k := range keys {
		for i, b := range files {
			if bytes.Contains(b, []byte(k)) || bytes.Contains(b, []byte(k[:len(k)-4])) {
				t.Errorf("the key %s... is readable in %s", k[:8], []string{"the database file", "the WAL"}[i])
			}
		}
	}
	// The rows are there, sealed.
	stored, err := srv.store.ProviderKeys(context.Background(), srv.userID(t, "admin"))
	if err != nil || len(stored) != 1 || len(stored[0].Sealed) < len(keys[0]) {
		t.Errorf("admin's sealed keys: %+v (%v)", stored, err)
	}
	if strings.Contains(srv.log.String(), keys[0][:16]) {
		t.Errorf("a key appears in the server's log")
	}
}

func TestAdminOnlyRoutes(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")
	admin.submit("/settings/providers", form("name", "Groq", "base_url", "https://api.groq.com/openai"))
	admin.invite()
	adminID, bobID := strconv.FormatInt(srv.userID(t, "admin"), 10), strconv.FormatInt(srv.userID(t, "bob"), 10)

	r := bob.open("/settings")
	if isAdminPage(r) || r.has("/settings/team-keys") || r.has("/settings/members/") {
		t.Errorf("a member's settings page shows the admin section")
	}

	for _, tt := range []struct {
		path string
		form []string
	}{
		{"/settings/team-keys", []string{"provider", "cerebras", "key", "csk-member-team-key-1234"}},
		{"/settings/team-keys/remove", []string{"provider", "cerebras"}},
		{"/settings/providers", []string{"name", "Evil", "base_url", "https://evil.example"}},
		{"/settings/providers/groq/remove", nil},
		{"/settings/invites", []string{"days", "7"}},
		{"/settings/invites/2/revoke", nil},
		{"/settings/signup-mode", []string{"mode", "open"}},
		{"/settings/members/" + bobID + "/role", []string{"role", "admin"}},
		{"/settings/members/" + adminID + "/role", []string{"role", "member"}},
		{"/settings/members/" + adminID + "/remove", nil},
	} {
		r := bob.postForm(tt.path, form(tt.form...))
		wantPage(t, r, http.StatusForbidden, "Only an admin can do that.")
		if inviteURL(r) != "" {
			t.Errorf("%s: a member got an invite link", tt.path)
		}
	}

	ctx := context.Background()
	if keys, _ := srv.store.ProviderKeys(ctx, 0); len(keys) != 0 {
		t.Errorf("a member stored a team key")
	}
	if ps, _ := srv.store.CustomProviders(ctx); len(ps) != 1 || ps[0].ID != "groq" {
		t.Errorf("providers after a member's attempts: %+v", ps)
	}
	if in, _ := srv.store.Invites(ctx); len(in) != 2 {
		t.Errorf("invites after a member's attempts: %+v", in)
	}
	if mode, _ := srv.store.Setting(ctx, "signup_mode"); mode == "open" {
		t.Errorf("a member opened sign-up")
	}
	if u, _ := srv.store.UserByName(ctx, "bob"); u.IsAdmin() {
		t.Errorf("a member made themselves admin")
	}
	if u, err := srv.store.UserByName(ctx, "admin"); err != nil || !u.IsAdmin() {
		t.Errorf("a member demoted or removed the admin: %+v %v", u, err)
	}
	if isAdminPage(bob.open("/settings")) {
		t.Errorf("the member's page shows the admin section after the attempts")
	}
}

func TestMembers(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")
	carol := admin.addMember("carol")
	adminID, bobID, carolID := srv.userID(t, "admin"), srv.userID(t, "bob"), srv.userID(t, "carol")
	role := func(id int64) string { return "/settings/members/" + strconv.FormatInt(id, 10) + "/role" }
	remove := func(id int64) string { return "/settings/members/" + strconv.FormatInt(id, 10) + "/remove" }

	r := admin.open("/settings")
	wantPage(t, r, http.StatusOK, "bob", "carol", `<span class="muted">(you)</span>`)
	if r.has(`action="` + remove(adminID) + `"`) {
		t.Errorf("the admin is offered to remove their own account")
	}

	// The only admin cannot step down.
	r = admin.submit(role(adminID), form("role", "member"))
	wantPage(t, r, http.StatusOK, "The team needs at least one admin: make someone else admin first.")
	if !isAdminPage(r) {
		t.Errorf("the last admin lost the admin section")
	}

	wantPage(t, admin.submit(role(bobID), form("role", "admin")), http.StatusOK, "Changed the role.")
	if !isAdminPage(bob.open("/settings")) {
		t.Errorf("a promoted member has no admin section")
	}
	wantPage(t, admin.postForm(role(bobID), form("role", "owner")), http.StatusUnprocessableEntity, "Choose member or admin.")
	wantPage(t, admin.postForm(role(9999), form("role", "admin")), http.StatusNotFound, "There is no such member.")
	wantPage(t, admin.postForm("/settings/members/x/role", form("role", "admin")), http.StatusNotFound, "There is no such member.")

	// With two admins, one may step down; then bob is the last one.
	wantPage(t, admin.submit(role(adminID), form("role", "member")), http.StatusOK, "Changed the role.")
	if isAdminPage(admin.open("/settings")) {
		t.Errorf("a demoted admin still has the admin section")
	}
	wantPage(t, admin.postForm(role(adminID), form("role", "admin")), http.StatusForbidden, "Only an admin can do that.")
	wantPage(t, bob.submit(role(bobID), form("role", "member")), http.StatusOK, "The team needs at least one admin")
	wantPage(t, bob.submit(remove(bobID), nil), http.StatusOK, "You cannot remove your own account here.")

	// Removal signs the member out and their account is gone.
	carol.submit("/settings/keys", form("provider", "xai", "key", "xai-carols-key-00001111"))
	wantPage(t, bob.submit(remove(carolID), nil), http.StatusOK, "Removed the member.")
	wantRedirect(t, carol.get("/settings"), "/login?next=%2Fsettings")
	if srv.canLogIn(t, "carol", testPassword) {
		t.Errorf("a removed member can still sign in")
	}
	if keys, _ := srv.store.ProviderKeys(context.Background(), carolID); len(keys) != 0 {
		t.Errorf("a removed member's keys are still stored")
	}
	if r := bob.open("/settings"); strings.Contains(r.body, "carol") {
		t.Errorf("a removed member is still listed")
	}
	wantPage(t, bob.postForm(remove(carolID), nil), http.StatusNotFound, "There is no such member.")

	// The name is free again.
	admin.submit("/settings/signup-mode", form("mode", "open")) // refused: admin is a member now
	bob.submit("/settings/signup-mode", form("mode", "open"))
	srv.newClient(t).signUp("Carol", "")
}
