package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func envFrom(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestHelpListsEveryVariable(t *testing.T) {
	var out bytes.Buffer
	err := run(t.Context(), []string{"-h"}, envFrom(nil), &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Errorf("run -h: %v, want flag.ErrHelp (main exits quietly on it)", err)
	}
	for _, name := range []string{"KNOBS_ADDR", "KNOBS_DB", "KNOBS_SECRET", "KNOBS_SECURE_COOKIES", "CEREBRAS_API_KEY", "CEREBRAS_BASE_URL", "XAI_API_KEY", "XAI_BASE_URL"} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("knobs -h does not list %s:\n%s", name, out.String())
		}
	}
}

func TestBadAddress(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "knobs.db")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, addr := range []string{"8080", "no-port", "127.0.0.1:99999", busy.Addr().String()} {
		var out bytes.Buffer
		err := run(t.Context(), nil, envFrom(map[string]string{"KNOBS_ADDR": addr, "KNOBS_DB": dbPath, "KNOBS_SECRET": strings.Repeat("s", 32)}), &out)
		if err == nil || !strings.Contains(err.Error(), "KNOBS_ADDR") {
			t.Errorf("KNOBS_ADDR=%s: %v, want an error naming KNOBS_ADDR", addr, err)
		}
	}
	var out bytes.Buffer
	err = run(t.Context(), []string{"-nonsense"}, envFrom(nil), &out)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		t.Errorf("an unknown flag: %v, want an error", err)
	}
}

// startLog is stdout for run: it keeps the log and hands over the address
// once the server listens.
type startLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	addr chan string
}

var listening = regexp.MustCompile(`msg="Knobs is listening" url=(\S+)`)

func (l *startLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if m := listening.FindSubmatch(p); m != nil {
		l.addr <- string(m[1])
	}
	return len(p), nil
}

func (l *startLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// start runs Knobs until the returned stop is called; stop returns the
// log and run's error.
func start(t *testing.T, env map[string]string) (base string, stop func() (string, error)) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	l := &startLog{addr: make(chan string, 1)}
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, envFrom(env), l) }()
	select {
	case base = <-l.addr:
	case err := <-done:
		cancel()
		t.Fatalf("run returned before listening: %v\n%s", err, l.String())
	}
	return base, func() (string, error) {
		cancel()
		err := <-done
		return l.String(), err
	}
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)"`)

func TestRunServesAndKeepsItsSecret(t *testing.T) {
	env := map[string]string{"KNOBS_ADDR": "127.0.0.1:0", "KNOBS_DB": filepath.Join(t.TempDir(), "knobs.db")}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	get := func(u string) (int, string) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}

	base, stop := start(t, env)
	if code, body := get(base + "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("healthz: %d %q", code, body)
	}
	_, page := get(base + "/signup")
	m := csrfMeta.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no csrf token on /signup")
	}
	resp, err := client.PostForm(base+"/signup", url.Values{"_csrf": {m[1]}, "username": {"alice"}, "password": {"a good password"}, "password2": {"a good password"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign up: %d", resp.StatusCode)
	}
	client.CloseIdleConnections()
	log, err := stop()
	if err != nil {
		t.Errorf("run after cancel: %v, want nil", err)
	}
	// A first start without KNOBS_SECRET is normal: an information line
	// that says where the secret is kept and what it is for.
	if line := lineWith(log, "generated the secret"); !strings.Contains(line, "level=INFO") || !strings.Contains(line, "kept it in the database") || !strings.Contains(line, "signs sessions and encrypts stored API keys") {
		t.Errorf("the first start's line about the secret is %q:\n%s", line, log)
	}
	if strings.Contains(log, "level=WARN") {
		t.Errorf("a normal first start warns:\n%s", log)
	}
	if !strings.Contains(log, "shutting down") {
		t.Errorf("no shutdown line:\n%s", log)
	}

	// Second start on the same file: the same secret, so the session
	// cookie made by the first process still signs alice in.
	base, stop = start(t, env)
	code, page := get(base + "/settings")
	client.CloseIdleConnections()
	log, err = stop()
	if err != nil {
		t.Errorf("second run after cancel: %v", err)
	}
	if strings.Contains(log, "generated the secret") || !strings.Contains(log, "using the secret kept in the database") {
		t.Errorf("the second start's log about the secret is wrong:\n%s", log)
	}
	if code != http.StatusOK || !strings.Contains(page, "Signed in as <strong>alice</strong>") {
		t.Errorf("after a restart the session is lost: %d", code)
	}

	// With KNOBS_SECRET set, the kept one is not used and nothing is said.
	env["KNOBS_SECRET"] = strings.Repeat("x", 40)
	base, stop = start(t, env)
	code, _ = get(base + "/settings")
	client.CloseIdleConnections()
	log, err = stop()
	if err != nil {
		t.Errorf("third run: %v", err)
	}
	if strings.Contains(log, "secret kept in the database") || strings.Contains(log, "generated the secret") {
		t.Errorf("with KNOBS_SECRET set, the log talks about a kept secret:\n%s", log)
	}
	if code != http.StatusSeeOther {
		t.Errorf("a cookie signed with the kept secret was accepted under KNOBS_SECRET: %d", code)
	}
}

// lockedBuffer is a bytes.Buffer safe to write from another goroutine.
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

func TestASecondSignalExitsAtOnce(t *testing.T) {
	exited := make(chan struct{})
	var stderr lockedBuffer
	ctx, stop := shutdownOnSignal(&stderr, func() { close(exited) }, syscall.SIGTERM)
	defer stop()

	// The first SIGTERM starts the graceful shutdown and nothing more.
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first SIGTERM did not start the shutdown")
	}
	select {
	case <-exited:
		t.Fatal("the first SIGTERM exited at once, without a graceful shutdown")
	default:
	}
	if !strings.Contains(stderr.String(), "shutting down") {
		t.Errorf("the first signal says nothing: %q", stderr.String())
	}

	// The second exits while the shutdown is still going.
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("a second SIGTERM during the shutdown was swallowed")
	}
	if !strings.Contains(stderr.String(), "stopping at once") {
		t.Errorf("the second signal says nothing: %q", stderr.String())
	}
}

// lineWith is the first line of log holding s, or "".
func lineWith(log, s string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}
