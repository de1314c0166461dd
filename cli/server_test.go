package cli

// The tests' Knobs: the real app, built as main.go builds it, on a real
// SQLite file, over real HTTP on 127.0.0.1:0, with the simulator as its
// "sim" provider; and the knobs command run against it as a user runs it.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"knobs/config"
	"knobs/db"
	"knobs/db/dbtest"
	"knobs/handlers"
	"knobs/markdown"
	"knobs/runner"
	"knobs/vault"
	"knobs/web"
	"knobs/web/session"
)

// testPassword is the test user's password, for the pages.
const testPassword = "correct horse battery"

// testServer is one running Knobs and a user with a write token.
type testServer struct {
	url    string
	dbPath string
	store  *db.Store
	user   int64
	token  string // a write token of user
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	env := map[string]string{
		"KNOBS_ADDR":   "127.0.0.1:0",
		"KNOBS_DB":     filepath.Join(t.TempDir(), "knobs.db"),
		"KNOBS_SECRET": "test-secret-0123456789-abcdefghijklmnop",
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	dbtest.Fresh(t, cfg.DBPath)
	store, err := db.Open(context.Background(), cfg.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	box, err := vault.New(cfg.Secret)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	runs := runner.New(store, log, runner.Options{Render: markdown.New().Render, MaxOutputBytes: cfg.MaxOutputBytes,
		MaxDuration: cfg.MaxRunDuration, MaxRunsPerUser: cfg.MaxRunsPerUser, MaxRuns: cfg.MaxRuns})
	h := handlers.New(handlers.Options{Store: store, Box: box, Config: cfg, Log: log, Runner: runs, BcryptCost: 4})
	app := web.New(h, session.NewManager(cfg.Secret, cfg.SecureCookies), log)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := runs.Shutdown(ctx); err != nil {
			t.Errorf("runs shutdown: %v", err)
		}
		if err := app.ShutdownWithTimeout(5 * time.Second); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		store.Close()
	})

	ctx := context.Background()
	// Hashed as sign-up hashes it (handlers' passwordInput: bcrypt of the
	// password's SHA-256 in base64), so that the pages accept it.
	sum := sha256.Sum256([]byte(testPassword))
	hash, err := bcrypt.GenerateFromPassword([]byte(base64.StdEncoding.EncodeToString(sum[:])), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	u, err := store.CreateUser(ctx, db.SignUp{Username: "ada", PasswordHash: string(hash)})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := store.CreateToken(ctx, db.NewTokenInput{User: u.ID, Name: "tests", Scope: db.ScopeWrite}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{url: "http://" + ln.Addr().String(), dbPath: cfg.DBPath, store: store, user: u.ID, token: secret}
}

// result is what one knobs command did.
type result struct {
	code           int
	stdout, stderr string
}

// invocation is one knobs command to run.
type invocation struct {
	ctx    context.Context
	env    map[string]string // added to KNOBS_URL and KNOBS_TOKEN; "" unsets
	stdin  string
	stdout io.Writer // also gets stdout, if set
}

// knobs runs the command args against s with its token, and checks that
// the token shows nowhere in what it printed.
func (s *testServer) knobs(t *testing.T, args ...string) result {
	t.Helper()
	return s.knobsWith(t, invocation{}, args...)
}

func (s *testServer) knobsWith(t *testing.T, in invocation, args ...string) result {
	t.Helper()
	env := map[string]string{"KNOBS_URL": s.url, "KNOBS_TOKEN": s.token}
	for k, v := range in.env {
		env[k] = v
	}
	ctx := in.ctx
	if ctx == nil {
		ctx = t.Context()
	}
	var stdout, stderr lockedBuffer
	var out io.Writer = &stdout
	if in.stdout != nil {
		out = io.MultiWriter(&stdout, in.stdout)
	}
	code := Main(ctx, args, func(k string) string { return env[k] }, strings.NewReader(in.stdin), out, &stderr)
	r := result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	if tok := env["KNOBS_TOKEN"]; tok != "" && strings.Contains(r.stdout+r.stderr, tok) {
		t.Errorf("knobs %s printed the token it was given", strings.Join(args, " "))
	}
	return r
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// api calls the REST API with s's token and decodes the answer into out
// when out is not nil; it returns the status and the answer's bytes.
func (s *testServer) api(t *testing.T, method, path string, body any, out any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.url+"/api/v1"+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode, raw
}

// storedRun is GET /api/v1/runs/{id} as the tests read it.
type storedRun struct {
	ID      int64  `json:"id"`
	Status  string `json:"status"`
	Model   string `json:"model"`
	Request *struct {
		Body map[string]any `json:"body"`
	} `json:"request"`
	Choices []struct {
		Text      string `json:"text"`
		Reasoning string `json:"reasoning"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (s *testServer) run(t *testing.T, id int64) storedRun {
	t.Helper()
	var r storedRun
	if status, raw := s.api(t, "GET", "/runs/"+strconv.FormatInt(id, 10), nil, &r); status != http.StatusOK {
		t.Fatalf("GET run %d: %d %s", id, status, raw)
	}
	return r
}

// latestRun is the newest of the user's runs.
func (s *testServer) latestRun(t *testing.T) storedRun {
	t.Helper()
	var page struct {
		Items []struct {
			ID int64 `json:"id"`
		} `json:"items"`
	}
	s.api(t, "GET", "/runs?limit=1", nil, &page)
	if len(page.Items) == 0 {
		t.Fatal("no run was stored")
	}
	return s.run(t, page.Items[0].ID)
}

// runCount is how many runs the user has.
func (s *testServer) runCount(t *testing.T) int {
	t.Helper()
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	s.api(t, "GET", "/runs?limit=100", nil, &page)
	return len(page.Items)
}
