package llm

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockingUpstream sends one chunk, then holds the request open until the
// client goes, and reports when it saw its request context end.
func blockingUpstream(t *testing.T) (*upstream, <-chan time.Time) {
	ended := make(chan time.Time, 1)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writeChunks(w, chatChunk(`{"content":"a"}`))
		select {
		case <-r.Context().Done():
			ended <- time.Now()
		case <-time.After(10 * time.Second):
		}
	})
	return u, ended
}

// TestCancelEndsUpstreamRequest: the upstream, which never ends its
// stream, sees its request end once the caller cancels its context or
// closes the stream, whether or not another goroutine is reading with
// Next at the time. How soon is BenchmarkCancel's to measure.
func TestCancelEndsUpstreamRequest(t *testing.T) {
	for _, tt := range []struct {
		name      string
		viaClose  bool
		whileNext bool
		wantKind  ErrorKind
	}{
		{"cancel context", false, false, ErrCanceled},
		{"cancel context while Next reads", false, true, ErrCanceled},
		{"Close", true, false, ErrCanceled},
		{"Close while Next reads", true, true, ErrCanceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u, ended := blockingUpstream(t)
			c := u.client(t, DialectCerebras, "k")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := c.Stream(ctx, chatSpec())
			defer s.Close()
			if !nextData(s) || s.Event().Text != "a" {
				t.Fatalf("first event = %+v, Err = %s", s.Event(), describe(s.Err()))
			}
			var wg sync.WaitGroup
			var more bool
			if tt.whileNext {
				reading := make(chan struct{})
				wg.Add(1)
				go func() {
					defer wg.Done()
					close(reading)
					more = nextData(s)
				}()
				<-reading // Next is called or about to be: either way it must end
			}
			if tt.viaClose {
				s.Close()
			} else {
				cancel()
			}
			select {
			case <-ended:
			case <-time.After(10 * time.Second):
				t.Fatal("upstream never saw the request end")
			}
			if tt.whileNext {
				wg.Wait()
			} else {
				more = nextData(s)
			}
			if more {
				t.Fatal("Next returned data after the cancel")
			}
			if err := s.Err(); err == nil || err.Kind != tt.wantKind {
				t.Fatalf("Err = %s, want %s", describe(err), tt.wantKind)
			}
		})
	}
}

// BenchmarkCancel measures how long after a cancel the upstream sees its
// request end: each iteration opens a stream, reads its first chunk and
// cancels; the reported figure is the mean from the cancel to the
// upstream handler's context ending.
func BenchmarkCancel(b *testing.B) {
	var total time.Duration
	for b.Loop() {
		ended := make(chan time.Time, 1)
		u := newUpstream(b, func(w http.ResponseWriter, r *http.Request) {
			sseHeader(w)
			writeChunks(w, chatChunk(`{"content":"a"}`))
			<-r.Context().Done()
			ended <- time.Now()
		})
		c := u.client(b, DialectCerebras, "k")
		ctx, cancel := context.WithCancel(context.Background())
		s := c.Stream(ctx, chatSpec())
		if !nextData(s) {
			b.Fatalf("no first chunk: %s", describe(s.Err()))
		}
		start := time.Now()
		cancel()
		total += (<-ended).Sub(start)
		s.Close()
		c.CloseIdleConnections()
		u.Close()
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms-cancel-to-upstream")
}

// TestStreamMemoryStaysFlat streams 100,000 chunks and checks that the
// heap in use after the second half is no larger than after the first,
// give or take a bound far below what keeping the chunks would take
// (50,000 chunks are some 7 MB on the wire).
func TestStreamMemoryStaysFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 100,000 chunks")
	}
	const chunks = 100_000
	chunk := chatChunk(`{"content":" token"}`)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		f := w.(http.Flusher)
		for i := range chunks {
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
			if i%64 == 0 {
				f.Flush()
			}
		}
		fmt.Fprint(w, data(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`), data("[DONE]"))
	})
	c := u.client(t, DialectCerebras, "k")
	s := c.Stream(context.Background(), chatSpec())
	defer s.Close()

	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	var n int
	var half uint64
	var textBytes int
	for s.Next() {
		if e := s.Event(); e.Kind == EventDelta {
			n++
			textBytes += len(e.Text)
			if n == chunks/2 {
				half = heap()
			}
		}
	}
	end := heap()
	if err := s.Err(); err != nil {
		t.Fatalf("Err = %s", describe(err))
	}
	if n != chunks || textBytes != chunks*len(" token") {
		t.Fatalf("got %d deltas, %d bytes of text; want %d", n, textBytes, chunks)
	}
	t.Logf("heap in use: %d bytes after 50,000 chunks, %d after 100,000", half, end)
	const slack = 2 << 20
	if end > half+slack {
		t.Errorf("heap in use grew from %d to %d bytes over the second 50,000 chunks", half, end)
	}
	raw := s.RawResponse()
	if len(raw) != MaxRawResponse+len(rawCapNote) || !strings.HasSuffix(string(raw), rawCapNote) {
		t.Errorf("raw capture is %d bytes, want the %d-byte cap and the note", len(raw), MaxRawResponse)
	}
	if s.RawResponseSize() < int64(chunks*len(chunk)) {
		t.Errorf("RawResponseSize = %d, want at least %d", s.RawResponseSize(), chunks*len(chunk))
	}
}
