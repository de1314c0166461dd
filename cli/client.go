package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// defaultURL is KNOBS_URL when it is unset: a Knobs started with its
// defaults on this machine.
const defaultURL = "http://127.0.0.1:8080"

// apiPrefix is where the REST API lives on a Knobs server.
const apiPrefix = "/api/v1"

// Caps on what the client reads of an answer: a misbehaving server or
// proxy cannot make it hold more than this.
const (
	maxAnswer    = 64 << 20 // a run with a long answer, a list page
	maxErrorBody = 64 << 10
)

// callTimeout bounds each request that is not a stream.
const callTimeout = 2 * time.Minute

// serverFlags are the flags every client command takes: they override
// KNOBS_URL and KNOBS_TOKEN.
type serverFlags struct {
	url, token string
}

func addServerFlags(fs *flag.FlagSet) *serverFlags {
	var s serverFlags
	fs.StringVar(&s.url, "url", "", "the Knobs server (default $KNOBS_URL, else "+defaultURL+")")
	fs.StringVar(&s.token, "token", "", "a personal API token (default $KNOBS_TOKEN); prefer the variable, which does not show in ps")
	return &s
}

// client talks to one Knobs server's REST API with a token.
type client struct {
	base  string // http(s)://host[:port][/prefix], without a trailing slash
	token string // never printed
	http  *http.Client
}

// client builds the client from the flags, else the environment. A
// missing token is an error that says how to get one.
func (s *serverFlags) client(e *env) (*client, error) {
	raw := firstSet(s.url, e.getenv("KNOBS_URL"), defaultURL)
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return nil, fmt.Errorf("KNOBS_URL (or --url) %q is not the address of a Knobs server: want http(s)://host:port, such as %s", raw, defaultURL)
	}
	token := strings.TrimSpace(firstSet(s.token, e.getenv("KNOBS_TOKEN")))
	if token == "" {
		return nil, errors.New("KNOBS_TOKEN is not set: make a personal API token in Knobs (Settings → API tokens) and set KNOBS_TOKEN to it")
	}
	base := strings.TrimRight(u.String(), "/")
	base = strings.TrimSuffix(base, apiPrefix)
	return &client{base: base, token: token, http: &http.Client{}}, nil
}

// firstSet is the first of vals that is not empty.
func firstSet(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// apiError is the server's refusal: {"error", "fields"} and its status.
type apiError struct {
	Status  int
	Message string            `json:"error"`
	Fields  map[string]string `json:"fields"`
}

func (a *apiError) Error() string {
	var b strings.Builder
	b.WriteString(a.Message)
	names := make([]string, 0, len(a.Fields))
	for n := range a.Fields {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\n  %s: %s", n, a.Fields[n])
	}
	return b.String()
}

// statusIs reports whether err is the server's answer with status.
func statusIs(err error, status int) bool {
	var a *apiError
	return errors.As(err, &a) && a.Status == status
}

// request sends method path (under /api/v1) with body as JSON (bytes as
// they are), and returns the answer when its status is below 400; else
// the answer's error as an *apiError. The caller closes the body.
func (c *client) request(ctx context.Context, method, path string, body any, header http.Header) (*http.Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("unable to encode the request: %w", err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+apiPrefix+path, rd)
	if err != nil {
		return nil, fmt.Errorf("unable to make the request: %w", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The error names the URL, never the header with the token.
		return nil, fmt.Errorf("unable to reach Knobs at %s (KNOBS_URL): %w", c.base, errors.Unwrap(err))
	}
	if resp.StatusCode < 400 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	a := &apiError{}
	if json.Unmarshal(raw, a) != nil || a.Message == "" {
		a.Message = fmt.Sprintf("Knobs at %s answered %s; is KNOBS_URL the address of a Knobs server?", c.base, resp.Status)
	}
	a.Status = resp.StatusCode
	if a.Status == http.StatusUnauthorized {
		a.Message += " (the token comes from KNOBS_TOKEN or --token)"
	}
	return nil, a
}

// call is request for an answer read whole (up to maxAnswer), with a
// time limit; it returns the answer's bytes and headers.
func (c *client) call(ctx context.Context, method, path string, body any) ([]byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := c.request(ctx, method, path, body, nil)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, nil, fmt.Errorf("unable to read Knobs' answer: %w", err)
	}
	if len(raw) > maxAnswer {
		return nil, nil, fmt.Errorf("Knobs' answer is larger than %d MiB; not read", maxAnswer>>20)
	}
	return raw, resp.Header, nil
}

// callJSON is call with the answer decoded into out (when not nil).
func (c *client) callJSON(ctx context.Context, method, path string, body, out any) error {
	raw, _, err := c.call(ctx, method, path, body)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("Knobs answered %s %s with something that is not the JSON expected: %w", method, path, err)
	}
	return nil
}
