package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func health(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errOut lockedBuffer
	code := Main(t.Context(), append([]string{"health"}, args...), func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// knobs health exits 0 against a running Knobs, found by its URL or by
// the KNOBS_ADDR it listens on (0.0.0.0 as in the container), and 1 with
// the reason when nothing listens or the server is unwell.
func TestHealth(t *testing.T) {
	s := newTestServer(t)
	if r := health(t, nil, s.url); r.code != 0 || r.stdout != s.url+"/healthz: ok\n" || r.stderr != "" {
		t.Errorf("health %s: exit %d, %q %q", s.url, r.code, r.stdout, r.stderr)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.url, "http://"))
	for _, addr := range []string{"0.0.0.0:" + port, "127.0.0.1:" + port, ":" + port, "[::]:" + port} {
		if r := health(t, map[string]string{"KNOBS_ADDR": addr}); r.code != 0 || !strings.HasPrefix(r.stdout, "http://127.0.0.1:"+port+"/healthz: ok") {
			t.Errorf("health with KNOBS_ADDR=%s: exit %d, %q %q", addr, r.code, r.stdout, r.stderr)
		}
	}

	// Nothing listening: a port that was just free.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	if r := health(t, nil, closed); r.code != 1 || !strings.HasPrefix(r.stderr, "knobs health: "+closed+"/healthz: ") || !strings.Contains(r.stderr, "refused") {
		t.Errorf("health of a closed port: exit %d, %q", r.code, r.stderr)
	}

	// A server that answers 503, as Knobs does when its database does not.
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		http.Error(w, "database unreachable", http.StatusServiceUnavailable)
	}))
	defer sick.Close()
	if r := health(t, nil, sick.URL+"/"); r.code != 1 || r.stderr != "knobs health: "+sick.URL+"/healthz answered 503 Service Unavailable: database unreachable\n" {
		t.Errorf("health of a sick server: exit %d, %q", r.code, r.stderr)
	}

	for _, bad := range [][]string{{"ftp://x"}, {s.url, s.url}, {"--timeout", "0s", s.url}} {
		if r := health(t, nil, bad...); r.code != 2 {
			t.Errorf("health %q: exit %d, %q", bad, r.code, r.stderr)
		}
	}
	if r := health(t, map[string]string{"KNOBS_ADDR": "8080"}); r.code != 1 || !strings.Contains(r.stderr, "KNOBS_ADDR") {
		t.Errorf("health with a wrong KNOBS_ADDR: exit %d, %q", r.code, r.stderr)
	}
}
