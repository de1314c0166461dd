package sim

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Transport serves requests with h in process: no socket, no network. The
// response body is a pipe the handler writes into, so every flushed
// chunk reaches the reader as it is written, and closing the body or
// cancelling the request's context stops the handler at once.
func Transport(h http.Handler) http.RoundTripper { return transport{h} }

type transport struct{ h http.Handler }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	pr, pw := io.Pipe()
	// Closing the write side with the context's error wakes both a reader
	// blocked in Read and a handler blocked in Write.
	stopWatch := context.AfterFunc(ctx, func() { pw.CloseWithError(context.Cause(ctx)) })

	inner := req.Clone(ctx)
	if inner.Body == nil {
		inner.Body = http.NoBody
	}
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer stopWatch()
		defer inner.Body.Close()
		defer func() {
			if p := recover(); p != nil {
				pw.CloseWithError(fmt.Errorf("sim: handler panic: %v", p))
				w.sendHeader(http.StatusInternalServerError)
				return
			}
			w.sendHeader(http.StatusOK)
			pw.Close()
		}()
		t.h.ServeHTTP(w, inner)
	}()

	select {
	case <-w.ready:
	case <-ctx.Done():
		// The closed pipe and the cancelled context end the handler soon.
		pr.Close()
		<-done
		cancel()
		return nil, ctx.Err()
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          &pipeBody{pr: pr, cancel: cancel, done: done},
		ContentLength: -1,
		Request:       req,
	}, nil
}

// pipeWriter is the handler's side of an in-process response.
type pipeWriter struct {
	header http.Header
	pw     *io.PipeWriter
	once   sync.Once
	ready  chan struct{} // closed when status and headers are decided
	status int
	sent   http.Header // the headers as they were when the status was written
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(status int) { w.sendHeader(status) }

func (w *pipeWriter) sendHeader(status int) {
	w.once.Do(func() {
		w.status, w.sent = status, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.sendHeader(http.StatusOK)
	if len(b) == 0 {
		return 0, nil
	}
	return w.pw.Write(b)
}

// Flush has nothing to do: a pipe write returns only once it was read.
func (w *pipeWriter) Flush() {}

// pipeBody is the client's side of an in-process response.
type pipeBody struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
	done   <-chan struct{}
}

func (b *pipeBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

// Close stops the handler and waits for it, so that no goroutine of the
// request outlives its body.
func (b *pipeBody) Close() error {
	b.cancel()
	b.pr.Close()
	<-b.done
	return nil
}
