// Package sse writes server-sent events to a browser from Fiber, as
// STACK-NOTES.md measured works: one function writes every frame and
// flushes it at once, pings while the source is silent, notices a client
// that left on the next write, and never touches the Fiber ctx once the
// body stream writer runs.
package sse

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
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

// Serve answers with the frames of src after `after`, until src is
// finished or the client leaves; leave is called when the stream ends.
func Serve(c *fiber.Ctx, src Source, after int, leave func(), log *slog.Logger) error {
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-cache, no-transform")
	c.Set(fiber.HeaderConnection, "keep-alive")
	c.Set("X-Accel-Buffering", "no")
	path := c.Path() // copied: the ctx must not be touched inside the writer
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer leave()
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic in event stream", "path", path, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			}
		}()
		write(w, src, max(after, 0), PingEvery)
	})
	return nil
}

// write copies frames to w until src finishes or a flush fails.
func write(w *bufio.Writer, src Source, sent int, pingEvery time.Duration) {
	// A retry hint: reconnect quickly, the runner keeps the frames.
	if _, err := w.WriteString("retry: 1000\n\n"); err != nil || w.Flush() != nil {
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
			if w.Flush() != nil {
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
			if _, err := w.WriteString(": ping\n\n"); err != nil || w.Flush() != nil {
				return
			}
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
