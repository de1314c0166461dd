// Package sse writes server-sent events to a browser from Fiber, as
// STACK-NOTES.md measured works: one function writes every frame and
// flushes it at once, pings while the source is silent, notices a client
// that left on the next write, drops one that stopped reading after a
// write deadline, and never touches the Fiber ctx once the body stream
// writer runs.
package sse

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Source is a growing list of encoded SSE frames.
type Source interface {
	// Frames returns the frames after the first `after`, whether the list
	// is complete, and a channel closed when there is more.
	Frames(after int) (frames [][]byte, finished bool, more <-chan struct{})
}

// PingEvery is how often a silent stream sends a comment, so that a client
// that left is noticed and proxies keep the connection.
const PingEvery = 3 * time.Second

// DefaultWriteTimeout is Options.WriteTimeout when it is zero.
const DefaultWriteTimeout = 30 * time.Second

// shutdownGrace is how long a stream's last writes may take once the
// server shuts down: a client that reads gets its closing frames in
// milliseconds, and one that stopped reading must not hold the shutdown.
const shutdownGrace = time.Second

// Options tune a stream.
type Options struct {
	// WriteTimeout bounds each write to the client: one that accepts no
	// byte for that long has stopped reading (a frozen tab, a dead proxy)
	// and is dropped, its connection closed. Zero means
	// DefaultWriteTimeout.
	WriteTimeout time.Duration
	// Log gets a panic in the stream.
	Log *slog.Logger
}

// Serve answers with the frames of src after `after`, until src is
// finished, the client leaves or stops reading, or the server shuts
// down; leave is called when the stream ends.
//
// fasthttp sets a write deadline once per response, if at all, so the
// stream sets its own before every flush, on the connection itself: the
// writer gets a pipe to the server's goroutine, which does the socket
// writes and fails when the deadline passes, and that ends the writer's
// next write. The deadline stays on the connection after the stream, so
// each stream closes its connection when it ends rather than leave a kept-
// alive one to cut the next response; EventSource reconnects on a new one
// anyway.
func Serve(c *fiber.Ctx, src Source, after int, leave func(), o Options) error {
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-cache, no-transform")
	c.Set("X-Accel-Buffering", "no")
	c.Context().SetConnectionClose()
	// Copied: the ctx must not be touched inside the writer.
	path := c.Path()
	dl := &deadline{conn: c.Context().Conn(), timeout: cmp.Or(o.WriteTimeout, DefaultWriteTimeout)}
	shutdown := c.Context().Done()
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer leave()
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic in event stream", "path", path, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			}
		}()
		ended := make(chan struct{})
		defer close(ended)
		go func() {
			// The writer may be blocked in a write that only the deadline
			// ends: shorten it from here.
			select {
			case <-shutdown:
				dl.shorten(shutdownGrace)
			case <-ended:
			}
		}()
		write(w, src, max(after, 0), PingEvery, dl, shutdown)
	})
	return nil
}

// deadline keeps the write deadline of a stream's connection ahead of
// its writes. A nil conn (in tests) sets nothing.
type deadline struct {
	conn    net.Conn
	timeout time.Duration

	mu      sync.Mutex // the shutdown watcher shortens it
	set     time.Time  // when the deadline was last moved
	closing bool       // shortened for shutdown: never moved again
}

// extend moves the deadline to timeout from now before a flush. Moving it
// costs a little, so it moves only when an eighth of the timeout has
// passed: a write always has at least 7/8 of it.
func (d *deadline) extend() {
	if d == nil || d.conn == nil {
		return
	}
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing || now.Sub(d.set) < d.timeout/8 {
		return
	}
	d.set = now
	d.conn.SetWriteDeadline(now.Add(d.timeout))
}

// shorten gives the stream's writes grace at most, for good.
func (d *deadline) shorten(grace time.Duration) {
	if d == nil || d.conn == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closing = true
	d.conn.SetWriteDeadline(time.Now().Add(grace))
}

// write copies frames to w until src finishes, a flush fails or shutdown
// is closed; dl is extended before every flush.
func write(w *bufio.Writer, src Source, sent int, pingEvery time.Duration, dl *deadline, shutdown <-chan struct{}) {
	flush := func() error {
		dl.extend()
		return w.Flush()
	}
	// A retry hint: reconnect quickly, the runner keeps the frames.
	if _, err := w.WriteString("retry: 1000\n\n"); err != nil || flush() != nil {
		return
	}
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for {
		frames, finished, more := src.Frames(sent)
		for _, f := range frames {
			if _, err := w.Write(f); err != nil {
				return
			}
		}
		if len(frames) > 0 {
			if flush() != nil {
				return
			}
			sent += len(frames)
			continue // read again before waiting: more may have come
		}
		if finished {
			return
		}
		select {
		case <-more:
			// Let the producer add what it has ready before this stream
			// writes: at thousands of tokens per second this turns many
			// one-frame writes into few larger ones, at no cost in latency
			// (a yield, not a timer).
			runtime.Gosched()
		case <-ping.C:
			if _, err := w.WriteString(": ping\n\n"); err != nil || flush() != nil {
				return
			}
		case <-shutdown:
			// Live runs have published their closing frames by now (the
			// runner shuts down first): send what there is and end, so
			// that the connection closes. A reconnect to the next process
			// resumes after the last id sent.
			frames, _, _ := src.Frames(sent)
			for _, f := range frames {
				if _, err := w.Write(f); err != nil {
					return
				}
			}
			flush()
			return
		}
	}
}

// Recorded is a finished list of frames, read back from storage.
type Recorded [][]byte

// Split cuts stored SSE text into its frames; every frame ends with a
// blank line and JSON data never holds a raw newline.
func Split(text []byte) Recorded {
	var out Recorded
	for len(text) > 0 {
		i := bytes.Index(text, []byte("\n\n"))
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+2])
		text = text[i+2:]
	}
	return out
}

// Frames implements Source.
func (r Recorded) Frames(after int) ([][]byte, bool, <-chan struct{}) {
	if after < 0 {
		after = 0
	}
	if after >= len(r) {
		return nil, true, nil
	}
	return r[after:], true, nil
}
