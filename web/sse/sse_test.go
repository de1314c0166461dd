package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func frames(n int) Recorded {
	var r Recorded
	for i := 1; i <= n; i++ {
		r = append(r, []byte(fmt.Sprintf("id: %d\nevent: delta\ndata: {\"text\":\"t%d\"}\n\n", i, i)))
	}
	return r
}

func TestSplitGivesBackTheFrames(t *testing.T) {
	want := frames(5)
	got := Split(bytes.Join(want, nil))
	if len(got) != len(want) {
		t.Fatalf("Split gave %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("frame %d = %q, want %q", i, got[i], want[i])
		}
	}
	if len(Split(nil)) != 0 {
		t.Error("Split(nil) is not empty")
	}
}

func TestWriteResumesWithoutRepeats(t *testing.T) {
	rec := frames(6)
	for _, tt := range []struct {
		after int
		first string
		n     int
	}{{0, "id: 1", 6}, {4, "id: 5", 2}, {6, "", 0}, {99, "", 0}} {
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		write(w, rec, tt.after, time.Hour, nil, nil)
		out := strings.TrimPrefix(buf.String(), "retry: 1000\n\n")
		if got := strings.Count(out, "event: delta"); got != tt.n {
			t.Errorf("after %d: %d frames written, want %d", tt.after, got, tt.n)
		}
		if tt.first != "" && !strings.HasPrefix(out, tt.first+"\n") {
			t.Errorf("after %d: output starts %.20q, want %q", tt.after, out, tt.first)
		}
	}
}

// live is a Source that grows while the writer waits.
type live struct {
	mu       sync.Mutex
	frames   [][]byte
	finished bool
	more     chan struct{}
}

func (l *live) Frames(after int) ([][]byte, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out [][]byte
	if after < len(l.frames) {
		out = l.frames[after:]
	}
	return out, l.finished, l.more
}

func (l *live) add(f []byte, finish bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.frames = append(l.frames, f)
	l.finished = finish
	close(l.more)
	l.more = make(chan struct{})
}

// syncBuffer is a bytes.Buffer safe to read while the writer writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestWritePingsWhileSilentAndEndsWhenFinished(t *testing.T) {
	src := &live{more: make(chan struct{})}
	out := &syncBuffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		write(bufio.NewWriter(out), src, 0, 10*time.Millisecond, nil, nil)
	}()
	for !strings.Contains(out.String(), ": ping\n\n") {
		time.Sleep(5 * time.Millisecond)
	}
	src.add([]byte("id: 1\nevent: done\ndata: {}\n\n"), true)
	<-done
	if !strings.HasSuffix(out.String(), "event: done\ndata: {}\n\n") {
		t.Errorf("stream ended with %q", out.String())
	}
}

// failing is a writer whose client has gone.
type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestWriteStopsWhenTheClientLeaves(t *testing.T) {
	src := &live{more: make(chan struct{})} // never finishes
	done := make(chan struct{})
	go func() {
		defer close(done)
		write(bufio.NewWriterSize(failing{}, 16), src, 0, 10*time.Millisecond, nil, nil)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("write kept going after the client left")
	}
}
