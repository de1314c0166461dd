package llm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// benchStream is a gpt-oss-120b answer of n tokens as Cerebras streams
// it: a quarter reasoning, the rest content, then finish, usage and
// time_info.
func benchStream(n int) []byte {
	var b bytes.Buffer
	const head = `data: {"id":"chatcmpl-2f6a3f0e-9a1c-4a5e-9a43-0d2c1b7e8f11","choices":[{"delta":`
	const tail = `,"index":0}],"created":1764441600,"model":"gpt-oss-120b","system_fingerprint":"fp_3a8c2e1f","object":"chat.completion.chunk"}` + "\n\n"
	b.WriteString(head + `{"role":"assistant"}` + tail)
	for i := range n {
		field := "content"
		if i < n/4 {
			field = "reasoning"
		}
		fmt.Fprintf(&b, "%s{\"%s\":\" tok%d\"}%s", head, field, i, tail)
	}
	b.WriteString(`data: {"id":"chatcmpl-1","choices":[{"delta":{},"finish_reason":"stop","index":0}],"created":1764441600,"model":"gpt-oss-120b","system_fingerprint":"fp","object":"chat.completion.chunk","usage":{"prompt_tokens":40,"completion_tokens":1000,"total_tokens":1040,"prompt_tokens_details":{"cached_tokens":0}},"time_info":{"queue_time":0.0001,"prompt_time":0.002,"completion_time":0.33,"total_time":0.34,"created":1764441600.1}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

const benchTokens = 1000

// benchRun streams one answer and returns how many events it gave.
func benchRun(b *testing.B, c *Client) int {
	s := c.Stream(context.Background(), chatSpec())
	n := 0
	for s.Next() {
		n++
	}
	s.Close()
	if err := s.Err(); err != nil {
		b.Fatalf("Err = %s", describe(err))
	}
	return n
}

// BenchmarkClientStream streams a 1,000-token answer per op from a local
// httptest upstream over loopback TCP: the whole client path, HTTP
// included.
func BenchmarkClientStream(b *testing.B) {
	body := benchStream(benchTokens)
	u := newUpstream(b, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		w.Write(body)
	})
	c := u.client(b, DialectCerebras, "k")
	events := 0
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		events += benchRun(b, c)
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
}

// memTransport answers every request with the same stream from memory, so
// BenchmarkStreamDecode measures the client's own per-chunk cost.
type memTransport struct{ body []byte }

func (t memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(t.body)),
		Request:    r,
	}, nil
}

// BenchmarkStreamDecode is BenchmarkClientStream without the network:
// SSE decoding, JSON decoding and event building per chunk.
func BenchmarkStreamDecode(b *testing.B) {
	for _, d := range []Dialect{DialectCerebras, DialectOpenAI} {
		b.Run(string(d), func(b *testing.B) {
			body := benchStream(benchTokens)
			c := NewClient(ProviderConfig{Dialect: d, BaseURL: "http://mem", Key: "k",
				HTTPClient: &http.Client{Transport: memTransport{body: body}}})
			events := 0
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				events += benchRun(b, c)
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
		})
	}
}

func TestBenchStreamIsWellFormed(t *testing.T) {
	c := NewClient(ProviderConfig{Dialect: DialectCerebras, BaseURL: "http://mem",
		HTTPClient: &http.Client{Transport: memTransport{body: benchStream(8)}}})
	evs, err, _ := run(t, c, chatSpec())
	if err != nil || len(evs) != 8+3 || !strings.HasPrefix(texts(evs, EventDelta), " tok2 tok3") {
		t.Fatalf("%d events, content %q, err %s", len(evs), texts(evs, EventDelta), describe(err))
	}
}
