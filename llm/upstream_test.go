package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// upstream is a real HTTP server standing in for a provider. It records
// what the client sent.
type upstream struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
}

type recorded struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
}

func newUpstream(t testing.TB, h http.HandlerFunc) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.requests = append(u.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		u.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) last(t testing.TB) recorded {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.requests) == 0 {
		t.Fatal("upstream got no request")
	}
	return u.requests[len(u.requests)-1]
}

func (u *upstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.requests)
}

// client returns a client of dialect d pointed at u, closed with the test.
func (u *upstream) client(t testing.TB, d Dialect, key string) *Client {
	t.Helper()
	c := NewClient(ProviderConfig{ID: string(d), Dialect: d, BaseURL: u.URL, Key: key})
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// sseHeader starts an event-stream answer.
func sseHeader(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
}

// writeChunks writes each string as it is and flushes after each, so the
// client sees the read boundaries the test chose.
func writeChunks(w http.ResponseWriter, parts ...string) {
	f := w.(http.Flusher)
	for _, p := range parts {
		io.WriteString(w, p)
		f.Flush()
	}
}

// streamOf answers with the given raw SSE parts.
func streamOf(parts ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writeChunks(w, parts...)
	}
}

// jsonAnswer answers with status and a JSON body.
func jsonAnswer(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func data(v string) string { return "data: " + v + "\n\n" }

// chatChunk builds a Cerebras-style chat chunk from a delta object.
func chatChunk(delta string) string {
	return data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-oss-120b","system_fingerprint":"fp","choices":[{"index":0,"delta":` + delta + `}]}`)
}

const chatSpecBody = `{"model":"gpt-oss-120b","messages":[{"role":"user","content":"hi"}],"temperature":0.5}`

func chatSpec() RunSpec {
	return RunSpec{Provider: "test", Endpoint: EndpointChat, Body: json.RawMessage(chatSpecBody)}
}

// collect reads a whole stream, leaving out the EventResponse labels,
// which TestStreamKeepsHowTheAnswerIsLabelled and the fidelity tests
// check on their own.
func collect(t testing.TB, s *Stream) []Event {
	t.Helper()
	var out []Event
	for _, e := range collectAll(t, s) {
		if e.Kind != EventResponse {
			out = append(out, e)
		}
	}
	return out
}

// collectAll reads a whole stream, every event.
func collectAll(t testing.TB, s *Stream) []Event {
	t.Helper()
	defer s.Close()
	var out []Event
	for s.Next() {
		out = append(out, s.Event())
		if len(out) > 1e6 {
			t.Fatal("runaway stream")
		}
	}
	return out
}

// run streams spec from c and returns the events and the error.
func run(t testing.TB, c *Client, spec RunSpec) ([]Event, *Error, *Stream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := c.Stream(ctx, spec)
	evs := collect(t, s)
	return evs, s.Err(), s
}

// texts joins the text of events of kind k for choice 0.
func texts(evs []Event, k EventKind) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Kind == k && e.Choice == 0 {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func kinds(evs []Event) string {
	var ks []string
	for _, e := range evs {
		ks = append(ks, string(e.Kind))
	}
	return strings.Join(ks, ",")
}

func describe(err *Error) string {
	if err == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%+v", *err)
}

// nextData advances s past the EventResponse labels to its next event.
func nextData(s *Stream) bool {
	for s.Next() {
		if s.Event().Kind != EventResponse {
			return true
		}
	}
	return false
}
