package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultFirstByteTimeout bounds the wait for the first byte of an answer
// when ProviderConfig.FirstByteTimeout is zero.
const DefaultFirstByteTimeout = 60 * time.Second

// DefaultIdleTimeout bounds the silence in the middle of an answer when
// ProviderConfig.IdleTimeout is zero. It is long: a reasoning model may
// think for minutes before it streams anything.
const DefaultIdleTimeout = 5 * time.Minute

// maxErrorBody bounds how much of a failed answer is read to classify it.
const maxErrorBody = 1 << 20

// Client talks to one provider. It is safe for concurrent use; each Stream
// is one request.
type Client struct {
	cfg       ProviderConfig
	base      string
	dialect   wireDialect
	http      *http.Client
	transport *http.Transport // ours, when cfg.HTTPClient was nil
	firstByte time.Duration
	idle      time.Duration

	modelsMu sync.Mutex
	models   modelCache
}

// NewClient returns a client for cfg. A BaseURL that ends in "/v1" is
// accepted too (admins paste "https://api.groq.com/openai/v1").
func NewClient(cfg ProviderConfig) *Client {
	c := &Client{cfg: cfg, dialect: dialectOf(cfg.Dialect), firstByte: cfg.FirstByteTimeout}
	c.base = strings.TrimSuffix(strings.TrimRight(cfg.BaseURL, "/"), "/v1")
	if c.firstByte <= 0 {
		c.firstByte = DefaultFirstByteTimeout
	}
	c.idle = cmp.Or(max(cfg.IdleTimeout, 0), DefaultIdleTimeout)
	if cfg.HTTPClient == nil {
		// A transport of our own rather than http.DefaultTransport: no
		// state shared with the rest of the process, and its idle
		// connections can be closed with the client.
		c.transport = http.DefaultTransport.(*http.Transport).Clone()
		if !cfg.AllowLinkLocal {
			guard(c.transport)
		}
		c.http = &http.Client{Transport: c.transport, CheckRedirect: noRedirects}
	} else {
		// A copy, so that the caller's client keeps its own redirect rule.
		hc := *cfg.HTTPClient
		hc.CheckRedirect = noRedirects
		c.http = &hc
	}
	return c
}

// CloseIdleConnections closes the client's idle keep-alive connections.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// Stream sends spec as a streamed request and returns once the response
// headers have arrived or the request has failed. It never returns nil:
// a failure shows as a Stream whose Next is false and whose Err says why.
// The caller must Close the Stream.
func (c *Client) Stream(ctx context.Context, spec RunSpec) *Stream {
	s := newStream(ctx, c, spec.Endpoint)
	url := c.base + spec.Endpoint.Path()
	body, added, err := streamBody(spec.Body, c.dialect.includeUsage)
	if err != nil {
		body = spec.Body
	}
	accept := "text/event-stream"
	if err == nil && !Streamed(body) {
		// The user asked for one JSON answer; it becomes the same events.
		accept = "application/json"
	}
	s.req = RawRequest{Method: http.MethodPost, URL: url, Headers: c.shownHeaders(accept), Body: rawJSON(body), Added: added}
	if !spec.Endpoint.Valid() {
		s.fail(&Error{Kind: ErrValidation, Field: "endpoint", Message: "unknown endpoint " + string(spec.Endpoint)})
		return s
	}
	if err != nil {
		s.fail(&Error{Kind: ErrValidation, Message: err.Error()})
		return s
	}

	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		s.fail(&Error{Kind: ErrBadResponse, Message: "cannot build the request: " + err.Error()})
		return s
	}
	c.setHeaders(req.Header)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	// Identity encoding keeps the raw view byte-exact and stops a proxy
	// from buffering a gzip stream.
	req.Header.Set("Accept-Encoding", "identity")

	s.started = time.Now()
	s.timer = time.AfterFunc(c.firstByte, s.firstByteTimeout)
	resp, err := c.http.Do(req)
	if err != nil {
		s.fail(s.transportError(err, false))
		return s
	}
	s.start(resp)
	return s
}

// setHeaders adds authorization; the key goes nowhere else.
func (c *Client) setHeaders(h http.Header) {
	if c.cfg.Key != "" {
		h.Set("Authorization", "Bearer "+c.cfg.Key)
	}
}

// shownHeaders are the request headers for the raw view, key redacted.
func (c *Client) shownHeaders(accept string) map[string]string {
	h := map[string]string{
		"Content-Type":    "application/json",
		"Accept":          accept,
		"Accept-Encoding": "identity",
	}
	if c.cfg.Key != "" {
		h["Authorization"] = "Bearer ***"
	}
	return h
}

// rawJSON keeps a body that is not valid JSON showable in RawRequest,
// whose Body would otherwise fail to marshal.
func rawJSON(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	if json.Valid(b) {
		return b
	}
	q, _ := json.Marshal(string(b))
	return q
}

// readCapped reads at most n bytes of r.
func readCapped(r io.Reader, n int64) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, n))
}
