package cli

import (
	"net"
	"regexp"
	"strings"
	"testing"
)

// TestTokenCreateListRevoke: create prints the secret alone on stdout and
// it works; list shows the token without its secret; revoke ends it, and
// the revoked token then gets a clear 401 message.
func TestTokenCreateListRevoke(t *testing.T) {
	s := newTestServer(t)
	r := s.knobs(t, "token", "create", "--name", "nightly job", "--scope", "read", "--expires", "30")
	if r.code != 0 {
		t.Fatalf("create: exit %d, stderr %q", r.code, r.stderr)
	}
	if !regexp.MustCompile(`^knobs_[A-Za-z0-9_-]{40,}\n$`).MatchString(r.stdout) {
		t.Fatalf("create printed %q, want the secret alone on its line", r.stdout)
	}
	secret := strings.TrimSpace(r.stdout)
	if strings.Contains(r.stderr, secret) || !strings.Contains(r.stderr, `"nightly job" (read, expires `) {
		t.Errorf("create's stderr %q", r.stderr)
	}

	// The new token reads: it lists both tokens, never a secret.
	withNew := invocation{env: map[string]string{"KNOBS_TOKEN": secret}}
	r = s.knobsWith(t, withNew, "token", "list")
	if r.code != 0 {
		t.Fatalf("list with the new token: exit %d, stderr %q", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "nightly job") || !strings.Contains(lines[1], secret[:12]+"…") || !strings.Contains(lines[2], "tests") {
		t.Errorf("list:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, secret) {
		t.Errorf("list shows the secret:\n%s", r.stdout)
	}
	id := strings.Fields(lines[1])[0]

	// A read token may not make tokens: the server's 403 is passed on.
	r = s.knobsWith(t, withNew, "token", "create", "--name", "more")
	if r.code != 1 || !strings.Contains(r.stderr, "write scope") {
		t.Errorf("create with a read token: exit %d, stderr %q", r.code, r.stderr)
	}

	r = s.knobs(t, "token", "revoke", id)
	if r.code != 0 || r.stdout != "revoked token "+id+"\n" {
		t.Fatalf("revoke: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	r = s.knobsWith(t, withNew, "token", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "revoked") || !strings.Contains(r.stderr, "KNOBS_TOKEN") {
		t.Errorf("list with the revoked token: exit %d, stderr %q", r.code, r.stderr)
	}
	r = s.knobs(t, "token", "list")
	if strings.Contains(r.stdout, "nightly job") {
		t.Errorf("the revoked token is still listed:\n%s", r.stdout)
	}

	// An unknown id is the server's 404; bad input is usage.
	if r := s.knobs(t, "token", "revoke", "9999"); r.code != 1 || !strings.Contains(r.stderr, "no such API token") {
		t.Errorf("revoke 9999: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"token", "create"},
		{"token", "create", "--name", "x", "--scope", "admin"},
		{"token", "create", "--name", "x", "--expires", "7"},
		{"token", "revoke", "abc"},
		{"token", "frobnicate"},
	} {
		if r := s.knobs(t, args...); r.code != exitUsage {
			t.Errorf("knobs %s: exit %d, stderr %q; want 2", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}

// TestMissingToken: without KNOBS_TOKEN a client command says how to get
// one, and a bad KNOBS_URL is named.
func TestMissingToken(t *testing.T) {
	s := newTestServer(t)
	r := s.knobsWith(t, invocation{env: map[string]string{"KNOBS_TOKEN": ""}}, "run", "--provider", "sim", "--model", "sim-fast", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "KNOBS_TOKEN is not set") || !strings.Contains(r.stderr, "Settings → API tokens") {
		t.Errorf("no token: exit %d, stderr %q", r.code, r.stderr)
	}
	if n := s.runCount(t); n != 0 {
		t.Errorf("a command without a token started %d runs", n)
	}
	r = s.knobsWith(t, invocation{env: map[string]string{"KNOBS_URL": "localhost:8080"}}, "token", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "KNOBS_URL") {
		t.Errorf("bad URL: exit %d, stderr %q", r.code, r.stderr)
	}
	// No server there: said so, naming the address.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	r = s.knobsWith(t, invocation{env: map[string]string{"KNOBS_URL": closed}}, "token", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "unable to reach Knobs at "+closed) {
		t.Errorf("no server: exit %d, stderr %q", r.code, r.stderr)
	}
	// A token that is not one: the server's 401, passed on.
	r = s.knobsWith(t, invocation{env: map[string]string{"KNOBS_TOKEN": "knobs_madeup"}}, "token", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "unknown, revoked or expired") {
		t.Errorf("made-up token: exit %d, stderr %q", r.code, r.stderr)
	}
	// --token overrides the environment.
	r = s.knobsWith(t, invocation{env: map[string]string{"KNOBS_TOKEN": ""}}, "token", "list", "--token", s.token)
	if r.code != 0 {
		t.Errorf("--token: exit %d, stderr %q", r.code, r.stderr)
	}
}
