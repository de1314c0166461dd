package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixedClock makes ids and "created" the same on every run.
func fixedClock() time.Time { return time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC) }

// target is one way to reach the simulator: a real HTTP server or the
// in-process transport.
type target struct {
	name   string
	client *http.Client
	base   string
}

func targets(t *testing.T, opts Options) []target {
	t.Helper()
	srv := httptest.NewServer(NewHandler(opts))
	t.Cleanup(srv.Close)
	return []target{
		{"http", srv.Client(), srv.URL},
		{"transport", &http.Client{Transport: Transport(NewHandler(opts))}, BaseURL},
	}
}

// fast is the options most tests use: no pacing, a fixed clock.
var fast = Options{TokensPerSecond: NoPacing, Now: fixedClock}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (tg target) post(t *testing.T, path, body string) answer {
	t.Helper()
	resp, err := tg.client.Post(tg.base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s: POST %s: %v", tg.name, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: read %s: %v", tg.name, path, err)
	}
	return answer{resp.StatusCode, resp.Header, b}
}

// dataLines checks the event-stream framing (every event one "data: "
// line followed by a blank line) and returns the payloads.
func dataLines(t *testing.T, raw []byte) []string {
	t.Helper()
	text := string(raw)
	if !strings.HasSuffix(text, "\n\n") {
		t.Fatalf("stream does not end with a blank line: %q", tail(text))
	}
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(text, "\n\n"), "\n\n") {
		if strings.Contains(ev, "\n") || !strings.HasPrefix(ev, "data: ") {
			t.Fatalf("event is not one data line: %q", ev)
		}
		out = append(out, strings.TrimPrefix(ev, "data: "))
	}
	return out
}

func tail(s string) string { return s[max(0, len(s)-200):] }

// chatStream is a chat stream put back together.
type chatStream struct {
	chunks    []chatChunk
	content   map[int]string
	reasoning map[int]string
	finish    map[int]string
	calls     map[int][]toolCallDelta // merged by index
	fragments map[int]int             // argument fragments per choice
	logprobs  map[int][]logprobEntry
	usage     *usage
	timeInfo  *timeInfo
	order     []string // "reasoning" / "content" per chunk of choice 0, in arrival order
	done      bool
	errChunk  *errorChunk
}

func readChat(t *testing.T, raw []byte) *chatStream {
	t.Helper()
	s := &chatStream{content: map[int]string{}, reasoning: map[int]string{}, finish: map[int]string{},
		calls: map[int][]toolCallDelta{}, fragments: map[int]int{}, logprobs: map[int][]logprobEntry{}}
	for _, d := range dataLines(t, raw) {
		if s.done {
			t.Fatalf("data after [DONE]: %s", d)
		}
		if d == "[DONE]" {
			s.done = true
			continue
		}
		if strings.HasPrefix(d, `{"error"`) {
			s.errChunk = new(errorChunk)
			mustDecode(t, d, s.errChunk)
			continue
		}
		var c chatChunk
		mustDecode(t, d, &c)
		s.chunks = append(s.chunks, c)
		if c.Usage != nil {
			s.usage, s.timeInfo = c.Usage, c.TimeInfo
		}
		for _, ch := range c.Choices {
			i := ch.Index
			if ch.Delta.Content != nil {
				s.content[i] += *ch.Delta.Content
				if i == 0 {
					s.order = append(s.order, "content")
				}
			}
			if ch.Delta.Reasoning != nil {
				s.reasoning[i] += *ch.Delta.Reasoning
				if i == 0 {
					s.order = append(s.order, "reasoning")
				}
			}
			if ch.FinishReason != "" {
				s.finish[i] = ch.FinishReason
			}
			if ch.Logprobs != nil {
				s.logprobs[i] = append(s.logprobs[i], ch.Logprobs.Content...)
			}
			for _, tc := range ch.Delta.ToolCalls {
				for len(s.calls[i]) <= tc.Index {
					s.calls[i] = append(s.calls[i], toolCallDelta{})
				}
				k := &s.calls[i][tc.Index]
				if tc.ID != "" {
					k.ID, k.Function.Name, k.Type = tc.ID, tc.Function.Name, tc.Type
				}
				k.Function.Arguments += tc.Function.Arguments
				if tc.Function.Arguments != "" {
					s.fragments[i]++
				}
			}
		}
	}
	return s
}

func mustDecode(t *testing.T, s string, v any) {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
}

// chat posts a chat body (stream forced on) and reads the stream.
func (tg target) chat(t *testing.T, body string) *chatStream {
	t.Helper()
	a := tg.post(t, "/v1/chat/completions", withStream(t, body))
	if a.status != 200 {
		t.Fatalf("%s: status %d: %s", tg.name, a.status, a.body)
	}
	return readChat(t, a.body)
}

// withStream sets "stream": true on a JSON body.
func withStream(t *testing.T, body string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("test body: %v", err)
	}
	m["stream"] = json.RawMessage("true")
	b, _ := json.Marshal(m)
	return string(b)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// chatBody builds a chat body around one user message plus extra fields.
func chatBody(model, prompt string, extra map[string]any) string {
	m := map[string]any{"model": model, "messages": []map[string]any{{"role": "user", "content": prompt}}}
	for k, v := range extra {
		m[k] = v
	}
	return mustJSON(m)
}

func cancelAfter(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}
