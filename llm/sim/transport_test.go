package sim

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// watched wraps the handler so a test can see it return.
func watched(opts Options) (http.Handler, <-chan struct{}) {
	done := make(chan struct{})
	h := NewHandler(opts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		h.ServeHTTP(w, r)
	}), done
}

// guard is how long a test waits for what should happen at once before
// calling it a hang; it is not a timing assertion.
const guard = 10 * time.Second

func waitDone(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(guard):
		t.Fatalf("%s: the handler is still running", what)
	}
}

func slowStream(t *testing.T, client *http.Client, base string, ctx context.Context) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/chat/completions",
		strings.NewReader(chatBody("sim-slow", prompt, map[string]any{"stream": true})))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The role chunk and a first token arrive; the rest would take seconds.
	r := bufio.NewReader(resp.Body)
	for range 2 {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	return resp
}

func TestCancelStopsTheHandler(t *testing.T) {
	t.Run("transport, context", func(t *testing.T) {
		h, done := watched(Options{})
		ctx, cancel := context.WithCancel(context.Background())
		resp := slowStream(t, &http.Client{Transport: Transport(h)}, BaseURL, ctx)
		cancel()
		waitDone(t, done, "cancelled context")
		if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
			t.Errorf("read after cancel: %v, want context.Canceled", err)
		}
		resp.Body.Close()
	})
	t.Run("transport, body closed", func(t *testing.T) {
		h, done := watched(Options{})
		resp := slowStream(t, &http.Client{Transport: Transport(h)}, BaseURL, context.Background())
		resp.Body.Close()
		select {
		case <-done:
		default:
			t.Fatal("Close returned before the handler ended")
		}
	})
	t.Run("transport, before the first byte", func(t *testing.T) {
		h, done := watched(Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond) // sim-slow's queue is 300ms
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", BaseURL+"/v1/chat/completions",
			strings.NewReader(chatBody("sim-slow", prompt, map[string]any{"stream": false})))
		if _, err := (&http.Client{Transport: Transport(h)}).Do(req); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err %v, want the deadline", err)
		}
		waitDone(t, done, "deadline before headers")
	})
	t.Run("http server", func(t *testing.T) {
		h, done := watched(Options{})
		srv := httptest.NewServer(h)
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		resp := slowStream(t, srv.Client(), srv.URL, ctx)
		cancel()
		resp.Body.Close()
		waitDone(t, done, "client gone")
	})
}

func TestTransportStreamsChunksAsWritten(t *testing.T) {
	// At 20 tokens/s the first chunks must arrive long before the answer
	// is complete: nothing is buffered on the way.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, done := watched(Options{})
	resp := slowStream(t, &http.Client{Transport: Transport(h)}, BaseURL, ctx)
	if resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" || resp.StatusCode != 200 || resp.ContentLength != -1 {
		t.Errorf("response %d %v", resp.StatusCode, resp.Header)
	}
	resp.Body.Close()
	waitDone(t, done, "close")
}

func TestTransportServesAnyHandlerAndPanics(t *testing.T) {
	tr := Transport(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic("boom")
		}
		w.Header().Set("X-Test", "yes")
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, "short and stout")
	}))
	c := &http.Client{Transport: tr}
	resp, err := c.Get(BaseURL + "/tea")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot || resp.Header.Get("X-Test") != "yes" || string(b) != "short and stout" {
		t.Errorf("%d %v %q", resp.StatusCode, resp.Header, b)
	}
	resp, err = c.Get(BaseURL + "/panic")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("panic: %d %v", resp.StatusCode, err)
	}
}
