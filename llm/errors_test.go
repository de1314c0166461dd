package llm

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestErrorKinds has a real upstream produce every kind of failure and
// checks what the user would be told.
func TestErrorKinds(t *testing.T) {
	html := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=UTF-8")
			w.WriteHeader(status)
			w.Write([]byte("<!DOCTYPE html>\n<html><head><meta charset=utf-8>\n<TITLE>\n  502 Bad Gateway | api.cerebras.ai \n</TITLE><style>" + strings.Repeat("body{}", 500) + "</style></head><body><h1>Bad gateway</h1><script>secret()</script></body></html>"))
		}
	}
	tests := []struct {
		name    string
		dialect Dialect
		handler http.HandlerFunc
		want    Error
	}{
		{
			name: "Cerebras wrong key", dialect: DialectCerebras,
			handler: jsonAnswer(401, `{"message":"Wrong API Key","type":"invalid_request_error","param":"api_key","code":"wrong_api_key"}`),
			want:    Error{Kind: ErrBadKey, Status: 401, Message: "Wrong API Key", Code: "wrong_api_key", Type: "invalid_request_error"},
		},
		{
			name: "xAI wrong key is a 400", dialect: DialectXAI,
			handler: jsonAnswer(400, `{"code":"Client specified an invalid argument","error":"Incorrect API key provided: xa***yz. You can obtain an API key from https://console.x.ai."}`),
			want:    Error{Kind: ErrBadKey, Status: 400, Message: "Incorrect API key provided: xa***yz. You can obtain an API key from https://console.x.ai.", Code: "Client specified an invalid argument"},
		},
		{
			name: "no permission", dialect: DialectOpenAI,
			handler: jsonAnswer(403, `{"error":{"message":"You are not allowed to use this model","type":"permission_error","param":null,"code":null}}`),
			want:    Error{Kind: ErrPermission, Status: 403, Message: "You are not allowed to use this model", Type: "permission_error"},
		},
		{
			name: "unknown model", dialect: DialectCerebras,
			handler: jsonAnswer(404, `{"message":"Model llama-3.3-70b does not exist or you do not have access to it.","type":"not_found_error","param":"model","code":"model_not_found"}`),
			want:    Error{Kind: ErrUnknownModel, Status: 404, Message: "Model llama-3.3-70b does not exist or you do not have access to it.", Code: "model_not_found", Type: "not_found_error", Field: "model"},
		},
		{
			name: "Cerebras unsupported field", dialect: DialectCerebras,
			handler: jsonAnswer(422, `{"message":"body.store: property 'body.store' is unsupported","type":"invalid_request_error","param":"validation_error","code":"wrong_api_format"}`),
			want:    Error{Kind: ErrValidation, Status: 422, Message: "body.store: property 'body.store' is unsupported", Code: "wrong_api_format", Type: "invalid_request_error", Field: "store"},
		},
		{
			name: "seed 422 detail form", dialect: DialectCerebras,
			handler: jsonAnswer(422, `{"detail":[{"loc":["body","temperature"],"msg":"Input should be less than or equal to 2","type":"less_than_equal"}]}`),
			want:    Error{Kind: ErrValidation, Status: 422, Message: "Input should be less than or equal to 2", Field: "temperature"},
		},
		{
			name: "OpenAI 400 with param", dialect: DialectOpenAI,
			handler: jsonAnswer(400, `{"error":{"message":"Unsupported parameter: 'stop' is not supported with this model.","type":"invalid_request_error","param":"stop","code":"unsupported_parameter"}}`),
			want:    Error{Kind: ErrValidation, Status: 400, Message: "Unsupported parameter: 'stop' is not supported with this model.", Code: "unsupported_parameter", Type: "invalid_request_error", Field: "stop"},
		},
		{
			name: "Cerebras rate limit with reset header", dialect: DialectCerebras,
			handler: jsonAnswer(429, `{"message":"Requests per minute limit exceeded - too many requests sent.","type":"too_many_requests_error","param":"quota","code":"request_quota_exceeded"}`,
				"x-ratelimit-remaining-tokens-minute", "0", "x-ratelimit-reset-tokens-minute", "7.5",
				"x-ratelimit-remaining-requests-day", "100", "x-ratelimit-reset-requests-day", "30000"),
			want: Error{Kind: ErrRateLimit, Status: 429, Message: "Requests per minute limit exceeded - too many requests sent.", Code: "request_quota_exceeded", Type: "too_many_requests_error", RetryAfter: 7500 * time.Millisecond},
		},
		{
			name: "rate limit with Retry-After", dialect: DialectOpenAI,
			handler: jsonAnswer(429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, "Retry-After", "20"),
			want:    Error{Kind: ErrRateLimit, Status: 429, Message: "Rate limit reached", Code: "rate_limit_exceeded", Type: "requests", RetryAfter: 20 * time.Second},
		},
		{
			name: "xAI out of credits is a 429", dialect: DialectXAI,
			handler: jsonAnswer(429, `{"code":"Some resource has been exhausted","error":"Your team has either used all available credits or reached its monthly spending limit."}`),
			want:    Error{Kind: ErrNoCredits, Status: 429, Message: "Your team has either used all available credits or reached its monthly spending limit.", Code: "Some resource has been exhausted"},
		},
		{
			name: "payment required", dialect: DialectOpenAI,
			handler: jsonAnswer(402, `{"error":{"message":"Insufficient balance"}}`),
			want:    Error{Kind: ErrNoCredits, Status: 402, Message: "Insufficient balance"},
		},
		{
			name: "server error", dialect: DialectCerebras,
			handler: jsonAnswer(500, `{"message":"Internal server error","type":"server_error","param":"","code":"internal_error"}`),
			want:    Error{Kind: ErrServer, Status: 500, Message: "Internal server error", Code: "internal_error", Type: "server_error"},
		},
		{
			name: "server error with a plain body", dialect: DialectOpenAI,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(503)
				w.Write([]byte("upstream connect error\n"))
			},
			want: Error{Kind: ErrServer, Status: 503, Message: "upstream connect error"},
		},
		{
			name: "HTML error page", dialect: DialectCerebras, handler: html(502),
			want: Error{Kind: ErrHTMLPage, Status: 502, Message: "502 Bad Gateway | api.cerebras.ai"},
		},
		{
			name: "error chunk after event: error", dialect: DialectCerebras,
			handler: streamOf(chatChunk(`{"content":"partial"}`), "event: error\n"+data(`{"error":{"code":"internal","id":"err_1","message":"Model crashed","param":"","type":"server_error"},"status_code":500}`)),
			want:    Error{Kind: ErrStream, Status: 500, Message: "Model crashed", Code: "internal", Type: "server_error"},
		},
		{
			name: "error chunk without an event line", dialect: DialectCerebras,
			handler: streamOf(chatChunk(`{"content":"partial"}`), data(`{"error":{"code":"","message":"Request timed out","type":"timeout"},"status_code":504}`)),
			want:    Error{Kind: ErrStream, Status: 504, Message: "Request timed out", Type: "timeout"},
		},
		{
			name: "vLLM error after a 200", dialect: DialectOpenAI,
			handler: streamOf(chatChunk(`{"content":"partial"}`), data(`{"error":{"object":"error","message":"CUDA out of memory","type":"InternalServerError","param":null,"code":500}}`)),
			want:    Error{Kind: ErrStream, Message: "CUDA out of memory", Code: "500", Type: "InternalServerError"},
		},
		{
			name: "truncated stream", dialect: DialectCerebras,
			handler: streamOf(chatChunk(`{"content":"partial"}`)),
			want:    Error{Kind: ErrTruncated, Status: 200, Message: "the stream ended without [DONE] or a finish reason: the answer may be cut short"},
		},
		{
			name: "empty 200", dialect: DialectOpenAI,
			handler: func(w http.ResponseWriter, r *http.Request) {},
			want:    Error{Kind: ErrTruncated, Status: 200, Message: "the stream ended without [DONE] or a finish reason: the answer may be cut short"},
		},
		{
			name: "malformed chunk", dialect: DialectCerebras,
			handler: streamOf(data(`{"choices":[`)),
			want:    Error{Kind: ErrBadResponse, Message: "a stream chunk is not valid JSON (unexpected end of JSON input): {\"choices\":["},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, tt.handler)
			evs, err, _ := run(t, u.client(t, tt.dialect, "k"), chatSpec())
			if err == nil {
				t.Fatalf("Err = nil, want %+v", tt.want)
			}
			if *err != tt.want {
				t.Fatalf("Err =\n %+v\nwant\n %+v", *err, tt.want)
			}
			if strings.Contains(tt.name, "chunk") || tt.name == "truncated stream" {
				// What came before the failure was delivered.
				if got := texts(evs, EventDelta); got != "partial" && tt.name != "malformed chunk" {
					t.Errorf("content before the error = %q", got)
				}
			}
		})
	}
}

func TestErrorConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := NewClient(ProviderConfig{Dialect: DialectCerebras, BaseURL: "http://" + addr, Key: "k"})
	defer c.CloseIdleConnections()
	evs, e, s := run(t, c, chatSpec())
	if e == nil || e.Kind != ErrNetwork || !strings.Contains(e.Message, "connection refused") || len(evs) != 0 {
		t.Fatalf("Err = %s, want a network error saying connection refused", describe(e))
	}
	if s.Status() != 0 || s.Header() != nil || s.RawResponse() != nil {
		t.Errorf("status %d header %v raw %q on a failed connection", s.Status(), s.Header(), s.RawResponse())
	}
}

func TestErrorResetMidStream(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writeChunks(w, chatChunk(`{"content":"partial"}`))
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		buf.Flush()
		conn.(*net.TCPConn).SetLinger(0) // close with RST
		conn.Close()
	})
	evs, err, _ := run(t, u.client(t, DialectCerebras, "k"), chatSpec())
	if err == nil || err.Kind != ErrNetwork || !strings.Contains(err.Message, "mid-stream") {
		t.Fatalf("Err = %s, want a mid-stream network error", describe(err))
	}
	if got := texts(evs, EventDelta); got != "partial" {
		t.Fatalf("content before the reset = %q", got)
	}
}

func TestErrorFirstByteTimeout(t *testing.T) {
	for _, headersFirst := range []bool{false, true} {
		u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			if headersFirst {
				sseHeader(w)
				w.(http.Flusher).Flush()
			}
			<-r.Context().Done()
		})
		c := NewClient(ProviderConfig{Dialect: DialectCerebras, BaseURL: u.URL, Key: "k", FirstByteTimeout: 50 * time.Millisecond})
		evs, err, _ := run(t, c, chatSpec())
		c.CloseIdleConnections()
		if err == nil || err.Kind != ErrTimeout || err.Message != "no answer from the provider within 50ms" || len(evs) != 0 {
			t.Fatalf("headers first %v: Err = %s, want the first-byte timeout", headersFirst, describe(err))
		}
	}
}

func TestErrorFirstByteTimerStopsAfterFirstByte(t *testing.T) {
	release := make(chan struct{})
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writeChunks(w, chatChunk(`{"content":"a"}`))
		select { // silent for longer than the first-byte timeout
		case <-release:
		case <-r.Context().Done():
			return
		}
		writeChunks(w, data(`{"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}`), data("[DONE]"))
	})
	c := NewClient(ProviderConfig{Dialect: DialectCerebras, BaseURL: u.URL, Key: "k", FirstByteTimeout: 30 * time.Millisecond})
	defer c.CloseIdleConnections()
	s := c.Stream(context.Background(), chatSpec())
	defer s.Close()
	if !nextData(s) || s.Event().Text != "a" {
		t.Fatalf("first event = %+v, err %s", s.Event(), describe(s.Err()))
	}
	time.Sleep(100 * time.Millisecond) // well past the first-byte timeout
	close(release)
	var got strings.Builder
	for s.Next() {
		got.WriteString(s.Event().Text)
	}
	if s.Err() != nil || got.String() != "b" {
		t.Fatalf("after the pause: %q, Err = %s", got.String(), describe(s.Err()))
	}
}

func TestErrorCanceled(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c := u.client(t, DialectCerebras, "k")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := c.Stream(ctx, chatSpec())
	defer s.Close()
	if s.Next() {
		t.Fatal("Next on a canceled request")
	}
	if err := s.Err(); err == nil || err.Kind != ErrCanceled {
		t.Fatalf("Err = %s, want canceled", describe(err))
	}
}

func TestClassifyResponse(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string
		want   Error
	}{
		{"Retry-After as a date", 429, http.Header{"Retry-After": {"Sun, 29 Nov 2026 12:00:30 GMT"}}, `{"message":"slow down"}`,
			Error{Kind: ErrRateLimit, Status: 429, Message: "slow down", RetryAfter: 30 * time.Second}},
		{"retry-after-ms", 429, http.Header{"Retry-After-Ms": {"1500"}}, `{"message":"slow down"}`,
			Error{Kind: ErrRateLimit, Status: 429, Message: "slow down", RetryAfter: 1500 * time.Millisecond}},
		{"OpenAI-style reset durations, none exhausted", 429, http.Header{"X-Ratelimit-Reset-Requests": {"6m0s"}, "X-Ratelimit-Reset-Tokens": {"1.5s"}}, `{"message":"slow down"}`,
			Error{Kind: ErrRateLimit, Status: 429, Message: "slow down", RetryAfter: 1500 * time.Millisecond}},
		{"OpenAI insufficient_quota", 429, nil, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}`,
			Error{Kind: ErrNoCredits, Status: 429, Message: "You exceeded your current quota, please check your plan and billing details.", Type: "insufficient_quota", Code: "insufficient_quota"}},
		{"nested detail loc", 422, nil, `{"detail":[{"loc":["body","messages",0,"content"],"msg":"Field required","type":"missing"},{"loc":["body","model"],"msg":"Field required","type":"missing"}]}`,
			Error{Kind: ErrValidation, Status: 422, Message: "Field required; Field required", Field: "messages.0.content"}},
		{"detail string", 400, nil, `{"detail":"Invalid request"}`,
			Error{Kind: ErrValidation, Status: 400, Message: "Invalid request"}},
		{"Ollama string error", 404, nil, `{"error":"model \"llama9\" not found, try pulling it first"}`,
			Error{Kind: ErrUnknownModel, Status: 404, Message: `model "llama9" not found, try pulling it first`}},
		{"404 that is not about a model", 404, nil, `404 page not found`,
			Error{Kind: ErrNoEndpoint, Status: 404, Message: "404 page not found"}},
		{"xAI missing content type", 415, nil, `{"code":"Client specified an invalid argument","error":"Expected request with Content-Type: application/json"}`,
			Error{Kind: ErrValidation, Status: 415, Message: "Expected request with Content-Type: application/json", Code: "Client specified an invalid argument"}},
		{"empty body", 500, nil, ``, Error{Kind: ErrServer, Status: 500, Message: "Internal Server Error"}},
		{"HTML without a content type or title", 503, nil, "<html><body>down</body></html>", Error{Kind: ErrHTMLPage, Status: 503, Message: "Service Unavailable"}},
		{"gateway timeout", 504, nil, `{"message":"upstream timed out"}`, Error{Kind: ErrTimeout, Status: 504, Message: "upstream timed out"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.header
			if h == nil {
				h = http.Header{}
			}
			got := classifyResponse(tt.status, h, []byte(tt.body), now)
			if *got != tt.want {
				t.Fatalf("got\n %+v\nwant\n %+v", *got, tt.want)
			}
		})
	}
}

func TestErrorMessageIsShort(t *testing.T) {
	body := strings.Repeat("é", 5000)
	got := classifyResponse(500, http.Header{}, []byte(body), time.Now())
	if len(got.Message) > 1010 || !strings.HasSuffix(got.Message, "…") || !strings.HasPrefix(body, strings.TrimSuffix(got.Message, "…")) {
		t.Fatalf("message of %d bytes: %q", len(got.Message), got.Message[:40])
	}
}

func TestErrorKeyEchoedBackIsRedacted(t *testing.T) {
	const key = "csk-0123456789abcdef"
	u := newUpstream(t, jsonAnswer(401, `{"message":"Wrong API Key `+key+`","type":"invalid_request_error","param":"api_key","code":"wrong_api_key"}`))
	_, err, s := run(t, u.client(t, DialectCerebras, key), chatSpec())
	if err == nil || err.Kind != ErrBadKey || err.Message != "Wrong API Key ***" {
		t.Fatalf("Err = %s", describe(err))
	}
	if raw := string(s.RawResponse()); strings.Contains(raw, key) || !strings.Contains(raw, "Wrong API Key ***") {
		t.Fatalf("raw response = %q", raw)
	}
}

// TestErrorFidelity: issue 12 item 10. Each case was misread before: a
// message lost beside a string error, a missing route called an unknown
// model, error chunks in a 200 stream all called "stream error".
func TestErrorFidelity(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name   string
		status int
		body   string
		want   Error
	}{
		{"string error and message both kept", 400, `{"error":"Bad request","message":"temperature must be at most 2"}`,
			Error{Kind: ErrValidation, Status: 400, Message: "Bad request: temperature must be at most 2"}},
		{"the same text in both is said once", 400, `{"error":"Bad request","message":"Bad request"}`,
			Error{Kind: ErrValidation, Status: 400, Message: "Bad request"}},
		{"missing route whose body mentions a model", 404, `{"error":{"message":"Invalid URL (POST /v1/completions): this server serves chat models only","type":"invalid_request_error"}}`,
			Error{Kind: ErrNoEndpoint, Status: 404, Message: "Invalid URL (POST /v1/completions): this server serves chat models only", Type: "invalid_request_error"}},
		{"FastAPI not found", 404, `{"detail":"Not Found"}`,
			Error{Kind: ErrNoEndpoint, Status: 404, Message: "Not Found"}},
		{"a model that does not exist is still one", 404, `{"error":{"message":"The model gpt-9 does not exist","type":"invalid_request_error"}}`,
			Error{Kind: ErrUnknownModel, Status: 404, Message: "The model gpt-9 does not exist", Type: "invalid_request_error"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := classifyResponse(tt.status, http.Header{}, []byte(tt.body), now)
			if *got != tt.want {
				t.Fatalf("got\n %+v\nwant\n %+v", *got, tt.want)
			}
		})
	}

	for _, tt := range []struct {
		name   string
		header http.Header
		chunk  string
		want   Error
	}{
		{"status_code 429 is a rate limit, with the wait the headers give", http.Header{"Retry-After": {"7"}},
			`{"error":{"code":"request_quota_exceeded","message":"Requests per minute limit exceeded - too many requests sent.","type":"too_many_requests_error","param":"quota","id":""},"status_code":429}`,
			Error{Kind: ErrRateLimit, Status: 429, Message: "Requests per minute limit exceeded - too many requests sent.", Code: "request_quota_exceeded", Type: "too_many_requests_error", RetryAfter: 7 * time.Second}},
		{"rate_limit_exceeded without a status", nil,
			`{"error":{"code":"rate_limit_exceeded","message":"Slow down"}}`,
			Error{Kind: ErrRateLimit, Message: "Slow down", Code: "rate_limit_exceeded"}},
		{"invalid_api_key is a bad key", nil,
			`{"error":{"code":"invalid_api_key","message":"Incorrect API key provided"}}`,
			Error{Kind: ErrBadKey, Message: "Incorrect API key provided", Code: "invalid_api_key"}},
		{"a server error mid-stream stays a stream error", nil,
			`{"error":{"code":"","message":"internal error","type":"server_error"},"status_code":500}`,
			Error{Kind: ErrStream, Status: 500, Message: "internal error", Type: "server_error"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.header
			if h == nil {
				h = http.Header{}
			}
			got := streamError([]byte(tt.chunk), h, now)
			if *got != tt.want {
				t.Fatalf("got\n %+v\nwant\n %+v", *got, tt.want)
			}
		})
	}
}
