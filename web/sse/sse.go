// Package sse writes server-sent events to a browser from Fiber, in the
// way that was measured to work on this stack (docs/ARCHITECTURE.md,
// "Event streams"): one function writes every frame and
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
	"slices"
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
	// FlushEvery is the least time between two writes to the client
	// once the first is out: what arrives meanwhile goes in the next
	// write, its text merged (see appendFrames). Zero means
	// DefaultFlushEvery; negative, no pacing.
	FlushEvery time.Duration
}

// DefaultFlushEvery is about one frame of the browser's display: a page
// gains nothing from events more often than it paints, and each event
// costs it time (about 60 µs of the page's main thread per event, as
// measured in Chromium).
const DefaultFlushEvery = 16 * time.Millisecond

// Serve answers with the frames of src after `after`, until src is
// finished, the client leaves or stops reading, or the server shuts
// down; leave is called when the stream ends.
//
// fasthttp sets a write deadline once per response, if at all, so the
// stream sets its own before every flush, on the connection itself: the
// writer gets a pipe to the server's goroutine, which does the socket
// writes and fails when the deadline passes, and that ends the writer's
// next write. The connection is kept alive after the stream, its
// deadline cleared (see deadline.clear), so that the page's next run
// posts on it without a new connection.
func Serve(c *fiber.Ctx, src Source, after int, leave func(), o Options) error {
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-cache, no-transform")
	c.Set("X-Accel-Buffering", "no")
	// Copied: the ctx must not be touched inside the writer.
	path := c.Path()
	dl := &deadline{conn: c.Context().Conn(), timeout: cmp.Or(o.WriteTimeout, DefaultWriteTimeout)}
	shutdown := c.Context().Done()
	flushEvery := cmp.Or(o.FlushEvery, DefaultFlushEvery)
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
		// The connection outlives the stream (keep-alive: the page's next
		// run posts on it); its write deadline must not, or it would cut
		// a later response on it (a long export).
		defer dl.clear()
		go func() {
			// The writer may be blocked in a write that only the deadline
			// ends: shorten it from here.
			select {
			case <-shutdown:
				dl.shorten(shutdownGrace)
			case <-ended:
			}
		}()
		write(w, src, max(after, 0), pacing{ping: PingEvery, every: flushEvery}, dl, shutdown)
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

// clear removes the deadline when the stream is over, unless the server
// is shutting down (then the connection is closing anyway). What is left
// to send by then is at most one buffer, which a client that stopped
// reading holds no more than any other kept-alive connection does.
func (d *deadline) clear() {
	if d == nil || d.conn == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closing {
		d.conn.SetWriteDeadline(time.Time{})
	}
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

// Ender is a Source that tells when its ending is published (a run's
// done), so that a paced stream sends it at once.
type Ender interface {
	Ending() <-chan struct{}
}

// pacing is how often a stream writes: a ping while the source is
// silent, and at most one write per every (when every > 0).
type pacing struct {
	ping, every time.Duration
}

// write copies frames to w until src finishes, a flush fails or shutdown
// is closed; dl is extended before every flush. The first frames go out
// at once; after a write, the next waits until p.every has passed, and
// takes everything that arrived meanwhile in one write, with runs of
// text frames merged. The end of a stream is never held back.
func write(w *bufio.Writer, src Source, sent int, p pacing, dl *deadline, shutdown <-chan struct{}) {
	flush := func() error {
		dl.extend()
		return w.Flush()
	}
	// A retry hint: reconnect quickly, the runner keeps the frames.
	if _, err := w.WriteString("retry: 1000\n\n"); err != nil || flush() != nil {
		return
	}
	ping := time.NewTicker(p.ping)
	defer ping.Stop()
	var pace *time.Timer
	defer func() {
		if pace != nil {
			pace.Stop()
		}
	}()
	var last time.Time // when the last frames were written
	buf := make([]byte, 0, 4096)
	var ending <-chan struct{} // nil: the source does not say when it ends
	if e, ok := src.(Ender); ok {
		ending = e.Ending()
	}
	for {
		frames, finished, more := src.Frames(sent)
		if len(frames) > 0 && !finished && p.every > 0 && !last.IsZero() {
			if wait := p.every - time.Since(last); wait > 0 {
				if pace == nil {
					pace = time.NewTimer(wait)
				} else {
					pace.Reset(wait)
				}
				// Not woken by each new frame (that would cost a wake-up
				// per token): only the pace, the end of the source, or
				// shutdown.
				select {
				case <-pace.C:
				case <-ending:
					if !pace.Stop() {
						<-pace.C
					}
				case <-shutdown:
				}
				frames, _, _ = src.Frames(sent)
			}
		}
		if len(frames) > 0 {
			buf = appendFrames(buf[:0], frames)
			if _, err := w.Write(buf); err != nil {
				return
			}
			if flush() != nil {
				return
			}
			if cap(buf) > 1<<20 {
				buf = make([]byte, 0, 4096) // one long write is no reason to keep its buffer
			}
			sent += len(frames)
			if hasText(frames) {
				// Paced from the first text on: what comes before it
				// (the request) never holds the first token back.
				last = time.Now()
			}
			continue // read again before waiting: more may have come
		}
		if finished {
			return
		}
		select {
		case <-more:
			// Let the producer add what it has ready before this stream
			// writes (a yield, not a timer).
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
			w.Write(appendFrames(buf[:0], frames))
			flush()
			return
		}
	}
}

// appendFrames appends frames to b with every run of consecutive text
// frames (delta or reasoning) merged into one event carrying the id of
// the last: a page spends about the same time on an event whatever its
// size, so a fast stream costs it a few events per frame instead of
// hundreds, and the id of the last merged frame makes a reconnect with
// Last-Event-ID resume exactly after it. A run of one choice (and pane)
// keeps its event, its text joined. A run that mixes choices, panes or
// delta and reasoning (n > 1, a comparison) becomes one "texts" event:
// {"parts":[{"event":"delta","choice":0,"text":"..."}, ...]}, a part per
// choice and kind in order of first appearance, each with its texts
// joined in order.
func appendFrames(b []byte, frames [][]byte) []byte {
	var run []textFrame // the current run of text frames, each parsed once
	for i := 0; i < len(frames); {
		first, ok := parseText(frames[i])
		if !ok {
			b = append(b, frames[i]...)
			i++
			continue
		}
		run, mixed := append(run[:0], first), false
		for i+len(run) < len(frames) {
			u, ok := parseText(frames[i+len(run)])
			if !ok {
				break
			}
			mixed = mixed || !sameKind(u, first)
			run = append(run, u)
		}
		last := run[len(run)-1]
		switch {
		case len(run) == 1:
			b = append(b, frames[i]...)
		case !mixed:
			b = appendHead(b, last.id, first.event)
			b = append(b, first.head...)
			for _, u := range run {
				b = append(b, u.text...)
			}
			b = append(b, "\"}\n\n"...)
		default:
			b = appendParts(appendHead(b, last.id, []byte("texts")), run)
			b = append(b, "\n\n"...)
		}
		i += len(run)
	}
	return b
}

func appendHead(b, id, event []byte) []byte {
	b = append(b, "id: "...)
	b = append(b, id...)
	b = append(b, "\nevent: "...)
	b = append(b, event...)
	return append(b, "\ndata: "...)
}

// appendParts appends the data of a texts event for a run of text frames.
func appendParts(b []byte, run []textFrame) []byte {
	// The parts in order of first appearance; runs are short (one write's
	// worth), and a run's kinds fewer still, so a scan finds each part.
	var keys []textFrame
	for _, t := range run {
		if !slices.ContainsFunc(keys, func(k textFrame) bool { return sameKind(k, t) }) {
			keys = append(keys, t)
		}
	}
	b = append(b, `{"parts":[`...)
	for k, key := range keys {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"event":"`...)
		b = append(b, key.event...)
		b = append(b, `",`...)
		b = append(b, key.head[1:]...) // the members after its "{"
		for _, t := range run {
			if sameKind(t, key) {
				b = append(b, t.text...)
			}
		}
		b = append(b, `"}`...)
	}
	return append(b, "]}"...)
}

// sameKind says whether two text frames are of one choice, pane and kind.
func sameKind(a, b textFrame) bool {
	return bytes.Equal(a.event, b.event) && bytes.Equal(a.head, b.head)
}

// hasText says whether frames hold a text frame.
func hasText(frames [][]byte) bool {
	for _, f := range frames {
		if _, ok := parseText(f); ok {
			return true
		}
	}
	return false
}

// textFrame is a text frame cut into its parts: its id, its event, the
// data up to its text ({"choice":0,"text":" or, in a comparison,
// {"pane":1,"choice":0,"text":"), and the text as JSON string content.
type textFrame struct {
	id, event, head, text []byte
}

// parseText cuts a text frame as the runner writes them (see
// runner.appendTextFrame), with "pane" spliced in first by a comparison;
// any other frame is not one.
func parseText(f []byte) (textFrame, bool) {
	var t textFrame
	rest, ok := bytes.CutPrefix(f, []byte("id: "))
	if !ok {
		return t, false
	}
	if t.id, rest, ok = bytes.Cut(rest, []byte("\n")); !ok {
		return t, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte("event: ")); !ok {
		return t, false
	}
	if t.event, rest, ok = bytes.Cut(rest, []byte("\n")); !ok || (string(t.event) != "delta" && string(t.event) != "reasoning") {
		return t, false
	}
	data, ok := bytes.CutPrefix(rest, []byte("data: "))
	if !ok {
		return t, false
	}
	if data, ok = bytes.CutSuffix(data, []byte("\"}\n\n")); !ok {
		return t, false
	}
	k := bytes.Index(data, []byte(`"text":"`))
	if k < 0 || !textHead(data[:k]) {
		return t, false
	}
	t.head, t.text = data[:k+len(`"text":"`)], data[k+len(`"text":"`):]
	return t, true
}

// textHead says whether h is {"choice":N, or {"pane":N,"choice":N, ,
// the only members a text frame has before its text.
func textHead(h []byte) bool {
	if rest, ok := bytes.CutPrefix(h, []byte(`{"pane":`)); ok {
		n := digits(rest)
		if n == 0 {
			return false
		}
		if h, ok = bytes.CutPrefix(rest[n:], []byte(`,"choice":`)); !ok {
			return false
		}
	} else if h, ok = bytes.CutPrefix(h, []byte(`{"choice":`)); !ok {
		return false
	}
	n := digits(h)
	return n > 0 && string(h[n:]) == ","
}

func digits(b []byte) int {
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	return n
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
