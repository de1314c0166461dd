package sim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"knobs/llm"
)

// benchBody asks for exactly 2,000 tokens, streamed.
var benchBody = chatBody("sim-fast", prompt, map[string]any{"seed": 1, "stream": true, "min_tokens": 2000, "max_tokens": 2000})

const benchTokens = 2000

// discard is a ResponseWriter that flushes into nothing.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Flush()                      {}

func reportTokens(b *testing.B, start time.Time) {
	b.ReportMetric(float64(benchTokens*b.N)/time.Since(start).Seconds(), "tokens/s")
}

// BenchmarkHandler is the handler alone, unpaced: generation, chunk
// encoding and one flush per token.
func BenchmarkHandler(b *testing.B) {
	h := NewHandler(Options{TokensPerSecond: NoPacing})
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(benchBody))
		h.ServeHTTP(&discard{h: http.Header{}}, req)
	}
	reportTokens(b, start)
}

// BenchmarkTransport is the same through the in-process transport, with
// the body read as a client would.
func BenchmarkTransport(b *testing.B) {
	c := &http.Client{Transport: Transport(NewHandler(Options{TokensPerSecond: NoPacing}))}
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		resp, err := c.Post(BaseURL+"/v1/chat/completions", "application/json", strings.NewReader(benchBody))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	reportTokens(b, start)
}

// BenchmarkHTTP is the same over a real loopback HTTP server.
func BenchmarkHTTP(b *testing.B) {
	srv := httptest.NewServer(NewHandler(Options{TokensPerSecond: NoPacing}))
	defer srv.Close()
	c := srv.Client()
	start := time.Now()
	for b.Loop() {
		resp, err := c.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(benchBody))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	reportTokens(b, start)
}

// BenchmarkClient is the product path: the real client's typed events from
// the in-process simulator.
func BenchmarkClient(b *testing.B) {
	c := llm.NewClient(NewConfig(Options{TokensPerSecond: NoPacing}))
	start := time.Now()
	for b.Loop() {
		s := c.Stream(context.Background(), llm.RunSpec{Provider: "sim", Endpoint: llm.EndpointChat, Body: json.RawMessage(benchBody)})
		for s.Next() {
		}
		if err := s.Err(); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	reportTokens(b, start)
}

// BenchmarkPacedFast checks that sim-fast's profile (2,000 tokens/s) is
// the rate a reader sees, not less, when the machine is busy.
func BenchmarkPacedFast(b *testing.B) {
	c := &http.Client{Transport: Transport(NewHandler(Options{}))}
	start := time.Now()
	for b.Loop() {
		resp, err := c.Post(BaseURL+"/v1/chat/completions", "application/json", strings.NewReader(benchBody))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	reportTokens(b, start)
}
