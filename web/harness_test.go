package web_test

// The harness: the real app, built as main.go builds it, on a real SQLite
// file, over real HTTP; and a client with a cookie jar that reads the CSRF
// token from each page and sends it back with its forms.

import (
	"bytes"
	"context"
	"errors"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/crypto/bcrypt"

	"knobs/config"
	"knobs/db"
	"knobs/db/dbtest"
	"knobs/experiment"
	"knobs/handlers"
	"knobs/llm"
	"knobs/logs"
	"knobs/markdown"
	"knobs/metrics"
	"knobs/runner"
	"knobs/vault"
	"knobs/web"
	"knobs/web/session"
)

// testSecret stands in for KNOBS_SECRET.
const testSecret = "test-secret-0123456789-abcdefghijklmnop"

// testPassword is the password the helpers sign up with.
const testPassword = "correct horse battery"

// server is one running Knobs over its own database file.
type server struct {
	url    string // http://127.0.0.1:port
	dbPath string
	store  *db.Store
	runs   *runner.Runner
	app    *fiber.App
	cfg    config.Config
	log    *logBuffer
	// metricsURL is http://host:port/metrics of KNOBS_METRICS_ADDR, when
	// the test set it.
	metricsURL string
	// beginStop tells the handlers Knobs is shutting down, as main's
	// context does, without stopping anything yet.
	beginStop func()
	// stop shuts the server down as a stop of Knobs does (experiments,
	// runs, then the listener), once; the test's cleanup calls it too.
	stop func()
}

// serverSetup is what a serverOption may change before the server starts.
type serverSetup struct {
	env    map[string]string // the environment config.Load reads
	runner runner.Options
	sim    llm.ProviderConfig // zero: the in-process simulator
	// runStore, when set, wraps what the runner writes runs to, so that a
	// test can make those writes fail.
	runStore func(*db.Store) runner.Store
	accept   func(net.Conn)   // called on each accepted connection, if set
	now      func() time.Time // the handlers' clock; nil: time.Now
	// experiments tune the experiments' retries; zero: the defaults.
	experiments experiment.Options
}

// serverOption changes how newServer builds the app.
type serverOption func(*serverSetup)

// withEnv sets one environment variable for the server.
func withEnv(name, value string) serverOption {
	return func(s *serverSetup) { s.env[name] = value }
}

// withRunner sets the runner's options (Render is filled in when nil).
func withRunner(o runner.Options) serverOption {
	return func(s *serverSetup) { s.runner = o }
}

// withSim points the "sim" provider at cfg, such as a simulator served by
// httptest or one built with sim.NewConfig at another speed.
func withSim(cfg llm.ProviderConfig) serverOption {
	return func(s *serverSetup) { s.sim = cfg }
}

// withRunStore has the runner write runs through wrap(store).
func withRunStore(wrap func(*db.Store) runner.Store) serverOption {
	return func(s *serverSetup) { s.runStore = wrap }
}

// withAccepted calls f on every connection the server accepts, before it
// serves it: tests shrink socket buffers with it.
func withAccepted(f func(net.Conn)) serverOption {
	return func(s *serverSetup) { s.accept = f }
}

// hookedListener calls accept on each connection it accepts.
type hookedListener struct {
	net.Listener
	accept func(net.Conn)
}

func (l hookedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accept(c)
	}
	return c, err
}

// newServer starts Knobs on 127.0.0.1:0 with a fresh database in
// t.TempDir(); it stops when the test ends.
func newServer(t testing.TB, opts ...serverOption) *server {
	t.Helper()
	setup := serverSetup{env: map[string]string{
		"KNOBS_ADDR":   "127.0.0.1:0",
		"KNOBS_DB":     filepath.Join(t.TempDir(), "knobs.db"),
		"KNOBS_SECRET": testSecret,
	}}
	for _, o := range opts {
		o(&setup)
	}
	cfg, err := config.Load(func(k string) string { return setup.env[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logBuf := &logBuffer{}
	log := logs.New(logBuf, cfg.LogFormat)

	if _, err := os.Stat(cfg.DBPath); os.IsNotExist(err) {
		dbtest.Fresh(t, cfg.DBPath)
	}
	store, err := db.Open(context.Background(), cfg.DBPath)
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	box, err := vault.New(cfg.Secret)
	if err != nil {
		t.Fatalf("vault: %v", err)
	}
	if setup.runner.Render == nil {
		setup.runner.Render = markdown.New().Render
	}
	// The bounds come from the config, as main.go passes them, unless the
	// test set its own.
	def := func(v *int, c int) {
		if *v == 0 {
			*v = c
		}
	}
	if setup.runner.MaxOutputBytes == 0 {
		setup.runner.MaxOutputBytes = cfg.MaxOutputBytes
	}
	if setup.runner.MaxDuration == 0 {
		setup.runner.MaxDuration = cfg.MaxRunDuration
	}
	def(&setup.runner.MaxRunsPerUser, cfg.MaxRunsPerUser)
	def(&setup.runner.MaxRuns, cfg.MaxRuns)
	// Metrics as main.go counts and serves them.
	var m *metrics.Metrics
	var metricsURL string
	if cfg.MetricsAddr != "" || cfg.MetricsToken != "" {
		m = metrics.New()
		store.ObserveWrites(m.DBWrite)
		setup.runner.Metrics = m
	}
	if cfg.MetricsAddr != "" {
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			t.Fatalf("metrics listen: %v", err)
		}
		msrv := m.Server()
		go msrv.Serve(mln)
		t.Cleanup(func() { msrv.Close() })
		metricsURL = "http://" + mln.Addr().String() + "/metrics"
	}
	var runStore runner.Store = store
	if setup.runStore != nil {
		runStore = setup.runStore(store)
	}
	runs := runner.New(runStore, log, setup.runner)
	stopping := make(chan struct{}) // closed as a stop of Knobs begins, as main's context is
	beginStop := sync.OnceFunc(func() { close(stopping) })
	h := handlers.New(handlers.Options{Store: store, Box: box, Config: cfg, Log: log, Runner: runs, BcryptCost: bcrypt.MinCost, Sim: setup.sim, Now: setup.now,
		Experiments: setup.experiments, Metrics: m, Stopping: stopping})
	app := web.New(h, session.NewManager(cfg.Secret, cfg.SecureCookies), log)

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		store.Close()
		t.Fatalf("listen: %v", err)
	}
	if setup.accept != nil {
		ln = hookedListener{ln, setup.accept}
	}
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	if err := h.ResumeExperiments(context.Background()); err != nil {
		t.Errorf("resume experiments: %v", err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			beginStop()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := h.ShutdownExperiments(ctx); err != nil {
				t.Errorf("experiments shutdown: %v", err)
			}
			if err := runs.Shutdown(ctx); err != nil {
				t.Errorf("runs shutdown: %v", err)
			}
			if err := app.ShutdownWithTimeout(5 * time.Second); err != nil {
				t.Errorf("shutdown: %v", err)
			}
			if err := <-served; err != nil {
				t.Errorf("serve: %v", err)
			}
			store.Close() // a test may have closed it already
		})
	}
	t.Cleanup(stop)
	return &server{url: "http://" + ln.Addr().String(), dbPath: cfg.DBPath, store: store, runs: runs, app: app, cfg: cfg, log: logBuf, stop: stop,
		metricsURL: metricsURL, beginStop: beginStop}
}

// logBuffer collects the server's log for tests that look at it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// userID looks up a user's id in the server's database.
func (s *server) userID(t testing.TB, name string) int64 {
	t.Helper()
	u, err := s.store.UserByName(context.Background(), name)
	if err != nil {
		t.Fatalf("user %q: %v", name, err)
	}
	return u.ID
}

// client is one browser: a cookie jar, and the CSRF token of the last page.
type client struct {
	t    testing.TB
	srv  *server
	http *http.Client
	csrf string
}

// newClient returns a client with an empty cookie jar.
func (s *server) newClient(t testing.TB) *client {
	return s.newClientFrom(t, "")
}

// newClientFrom returns a client whose connections come from the loopback
// address ip (such as 127.0.0.2), so that it counts as another client
// address; "" lets the system choose.
func (s *server) newClientFrom(t testing.TB, ip string) *client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	if ip != "" {
		dialer.LocalAddr = &net.TCPAddr{IP: net.ParseIP(ip)}
	}
	tr := &http.Transport{DialContext: dialer.DialContext, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &client{
		t:   t,
		srv: s,
		http: &http.Client{
			Jar:           jar,
			Transport:     tr,
			Timeout:       30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// response is what came back for one request, body read.
type response struct {
	status   int
	header   http.Header
	body     string
	location string // the Location header of a redirect
	path     string // the path that was asked for last (after following)
}

// has reports whether the body contains s.
func (r *response) has(s string) bool { return strings.Contains(r.body, s) }

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)"`)

// do sends req and reads the whole answer, keeping the page's CSRF token.
func (c *client) do(req *http.Request) *response {
	c.t.Helper()
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: reading body: %v", req.Method, req.URL.Path, err)
	}
	r := &response{status: resp.StatusCode, header: resp.Header, body: string(body), location: resp.Header.Get("Location"), path: req.URL.RequestURI()}
	if m := csrfMeta.FindStringSubmatch(r.body); m != nil {
		c.csrf = html.UnescapeString(m[1])
	} else if len(resp.Cookies()) > 0 {
		// A new cookie may carry a new token (sign-in, sign-out).
		c.csrf = ""
	}
	return r
}

// get asks for path without following redirects.
func (c *client) get(path string) *response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.srv.url+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.do(req)
}

// open asks for path and follows redirects, as a browser does.
func (c *client) open(path string) *response {
	c.t.Helper()
	return c.follow(c.get(path))
}

// follow follows r's redirects, if any.
func (c *client) follow(r *response) *response {
	c.t.Helper()
	for i := 0; r.status >= 300 && r.status < 400; i++ {
		if i == 10 {
			c.t.Fatalf("too many redirects, last to %s", r.location)
		}
		r = c.get(r.location)
	}
	return r
}

// token returns the session's CSRF token, loading a page to read it when
// the client has none yet.
func (c *client) token() string {
	c.t.Helper()
	if c.csrf == "" {
		r := c.get("/login")
		if r.status == http.StatusSeeOther { // signed in: any page has it
			c.get("/compare")
		}
		if c.csrf == "" {
			c.t.Fatalf("no csrf-token meta on the page")
		}
	}
	return c.csrf
}

// postForm posts form with the session's CSRF token as _csrf, without
// following redirects. A "_csrf" already in form is sent as it is, so
// tests can send a wrong one; delete it with noCSRF.
func (c *client) postForm(path string, form url.Values) *response {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["_csrf"]; !ok {
		form.Set("_csrf", c.token())
	}
	return c.post(path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()), nil)
}

// noCSRF marks a form to be sent without any _csrf field.
func noCSRF(form url.Values) url.Values {
	form["_csrf"] = nil
	return form
}

// submit posts form and follows the redirect, as a browser does.
func (c *client) submit(path string, form url.Values) *response {
	c.t.Helper()
	return c.follow(c.postForm(path, form))
}

// post sends body as contentType with extra headers.
func (c *client) post(path, contentType string, body io.Reader, header http.Header) *response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.srv.url+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header[k] = v
	}
	return c.do(req)
}

// form builds url.Values from pairs: form("a", "1", "b", "2").
func form(pairs ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Add(pairs[i], pairs[i+1])
	}
	return v
}

// signUpForm posts the sign-up form (loading /signup first for its token)
// and returns the answer, not followed.
func (c *client) signUpForm(username, password, password2, invite string) *response {
	c.t.Helper()
	c.get("/signup")
	return c.postForm("/signup", form("username", username, "password", password, "password2", password2, "invite", invite))
}

// signUp creates an account with testPassword (using invite when not "")
// and fails the test unless it lands signed in on the playground.
func (c *client) signUp(username, invite string) *response {
	c.t.Helper()
	r := c.signUpForm(username, testPassword, testPassword, invite)
	if r.status != http.StatusSeeOther || r.location != "/" {
		c.t.Fatalf("sign up %q: got %d to %q, want 303 to /; page:\n%s", username, r.status, r.location, errorText(r))
	}
	r = c.follow(r)
	if r.status != http.StatusOK || !r.has("Signed in as <strong>"+username+"</strong>") {
		c.t.Fatalf("after sign-up of %q: got %d, page does not say who is signed in:\n%s", username, r.status, r.body)
	}
	return r
}

// logIn posts the sign-in form and returns the answer, not followed.
func (c *client) logIn(username, password string) *response {
	c.t.Helper()
	c.get("/login")
	return c.postForm("/login", form("username", username, "password", password))
}

// mustLogIn signs in with testPassword or fails the test.
func (c *client) mustLogIn(username string) {
	c.t.Helper()
	if r := c.logIn(username, testPassword); r.status != http.StatusSeeOther {
		c.t.Fatalf("log in %q: got %d, want 303; page:\n%s", username, r.status, errorText(r))
	}
}

// signedIn reports whether c's session is signed in, by asking for a page
// that needs it.
func (c *client) signedIn() bool {
	c.t.Helper()
	return c.get("/").status == http.StatusOK
}

// logOut signs out through the user menu's form.
func (c *client) logOut() *response {
	c.t.Helper()
	return c.postForm("/logout", nil)
}

// newTeam starts a server with an admin signed in, as "admin".
func newTeam(t testing.TB, opts ...serverOption) (*server, *client) {
	t.Helper()
	srv := newServer(t, opts...)
	admin := srv.newClient(t)
	admin.signUp("admin", "")
	return srv, admin
}

// invite has the admin make an invite link and returns its URL path and
// query (/signup?invite=...).
func (c *client) invite() string {
	c.t.Helper()
	r := c.postForm("/settings/invites", form("days", "7"))
	link := inviteURL(r)
	if r.status != http.StatusOK || link == "" {
		c.t.Fatalf("make invite: got %d and no link:\n%s", r.status, errorText(r))
	}
	if !strings.HasPrefix(link, c.srv.url+"/signup?invite=") {
		c.t.Fatalf("invite link %q does not point at %s/signup", link, c.srv.url)
	}
	return strings.TrimPrefix(link, c.srv.url)
}

// addMember has the admin invite name, who signs up in a new client.
func (c *client) addMember(name string) *client {
	c.t.Helper()
	link := c.invite()
	m := c.srv.newClient(c.t)
	m.signUp(name, inviteToken(link))
	return m
}

var inviteInput = regexp.MustCompile(`id="invite-url"[^>]*value="([^"]*)"`)

// inviteURL is the invite link shown on a settings page, or "".
func inviteURL(r *response) string {
	if m := inviteInput.FindStringSubmatch(r.body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

// inviteToken takes the token out of an invite link.
func inviteToken(link string) string {
	u, err := url.Parse(link)
	if err != nil {
		return ""
	}
	return u.Query().Get("invite")
}

var alertText = regexp.MustCompile(`(?s)role="(?:alert|status)">([^<]*)<|<h1>([^<]*)</h1>`)

// errorText gives the messages of a page, for failure output.
func errorText(r *response) string {
	var out []string
	for _, m := range alertText.FindAllStringSubmatch(r.body, -1) {
		out = append(out, strings.TrimSpace(m[1]+m[2]))
	}
	if len(out) == 0 {
		if len(r.body) > 500 {
			return r.body[:500]
		}
		return r.body
	}
	return strings.Join(out, " | ")
}

// wantPage fails the test unless r has status and every one of texts.
func wantPage(t testing.TB, r *response, status int, texts ...string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d, want %d; page says: %s", r.path, r.status, status, errorText(r))
	}
	for _, s := range texts {
		if !r.has(s) {
			t.Errorf("%s: page lacks %q; it says: %s", r.path, s, errorText(r))
		}
	}
}

// wantRedirect fails the test unless r is a 303 to location.
func wantRedirect(t testing.TB, r *response, location string) {
	t.Helper()
	if r.status != http.StatusSeeOther || r.location != location {
		t.Errorf("%s: got %d to %q, want 303 to %q; page says: %s", r.path, r.status, r.location, location, errorText(r))
	}
}

// canLogIn reports whether username can sign in with password, from a
// fresh client so that the caller's session is untouched.
func (s *server) canLogIn(t testing.TB, username, password string) bool {
	t.Helper()
	r := s.newClient(t).logIn(username, password)
	switch r.status {
	case http.StatusSeeOther:
		return true
	case http.StatusUnauthorized:
		return false
	}
	t.Fatalf("log in %q: unexpected %d: %s", username, r.status, errorText(r))
	return false
}

// isAdminPage reports whether a settings page shows the admin section.
func isAdminPage(r *response) bool {
	return r.has(`id="team-keys-h"`) && r.has(`id="members-h"`)
}

var errNoCookie = errors.New("no session cookie")

// sessionCookie returns the Set-Cookie of the session cookie in r.
func sessionCookie(r *response) (*http.Cookie, error) {
	for _, line := range r.header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			return nil, err
		}
		if c.Name == session.CookieName {
			return c, nil
		}
	}
	return nil, errNoCookie
}

// regexpFind returns the first group of pattern in s, or "".
func regexpFind(pattern, s string) string {
	if m := regexp.MustCompile(pattern).FindStringSubmatch(s); len(m) > 1 {
		return html.UnescapeString(m[1])
	}
	return ""
}
