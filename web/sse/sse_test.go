package sse

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
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
		write(w, rec, tt.after, pacing{ping: time.Hour}, nil, nil)
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
		write(bufio.NewWriter(out), src, 0, pacing{ping: 10 * time.Millisecond}, nil, nil)
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), ": ping\n\n"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no ping within 10s of silence")
		}
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
		write(bufio.NewWriterSize(failing{}, 16), src, 0, pacing{ping: 10 * time.Millisecond}, nil, nil)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("write kept going after the client left")
	}
}

// Runs of text frames of one choice (and pane) go out as one event with
// the texts joined and the id of the last; anything else goes out as it
// is; and resuming after a merged event's id continues exactly.
func TestTextFramesAreMergedAndResumeExactly(t *testing.T) {
	f := func(id, event, data string) []byte {
		return []byte("id: " + id + "\nevent: " + event + "\ndata: " + data + "\n\n")
	}
	frames := Recorded{
		f("1", "request", `{"model":"m"}`),
		f("2", "delta", `{"choice":0,"text":"Hel"}`),
		f("3", "delta", `{"choice":0,"text":"lo \"x\"\n"}`),
		f("4", "delta", `{"choice":1,"text":"other"}`),
		f("5", "delta", `{"choice":0,"text":"é"}`),
		f("6", "reasoning", `{"choice":0,"text":"a"}`),
		f("7", "reasoning", `{"choice":0,"text":"b"}`),
		f("8", "metrics", `{"tokens":3}`),
		f("9.4", "delta", `{"pane":1,"choice":0,"text":"p"}`),
		f("9.5", "delta", `{"pane":1,"choice":0,"text":"q"}`),
		f("10.5", "delta", `{"pane":0,"choice":0,"text":"r"}`),
		f("11", "done", `{"status":"done"}`),
	}
	var out bytes.Buffer
	out.Write(appendFrames(nil, frames))
	got := Split(out.Bytes())
	want := []string{
		string(frames[0]),
		"id: 7\nevent: texts\ndata: {\"parts\":[{\"event\":\"delta\",\"choice\":0,\"text\":\"Hello \\\"x\\\"\\né\"},{\"event\":\"delta\",\"choice\":1,\"text\":\"other\"},{\"event\":\"reasoning\",\"choice\":0,\"text\":\"ab\"}]}\n\n",
		string(frames[7]),
		"id: 10.5\nevent: texts\ndata: {\"parts\":[{\"event\":\"delta\",\"pane\":1,\"choice\":0,\"text\":\"pq\"},{\"event\":\"delta\",\"pane\":0,\"choice\":0,\"text\":\"r\"}]}\n\n",
		string(frames[11]),
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d:\n%s", len(got), len(want), out.String())
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("event %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
	var parts struct {
		Parts []struct {
			Event  string
			Pane   *int
			Choice int
			Text   string
		}
	}
	if err := json.Unmarshal(bytes.TrimSuffix(bytes.SplitN(got[1], []byte("data: "), 2)[1], []byte("\n\n")), &parts); err != nil || len(parts.Parts) != 3 || parts.Parts[0].Text != "Hello \"x\"\né" {
		t.Errorf("texts data: %+v, %v", parts, err)
	}
	// One choice alone keeps its event, its texts joined.
	out.Reset()
	out.Write(appendFrames(nil, frames[1:3]))
	got = Split(out.Bytes())
	// Every merged event's data is JSON whose text is the frames' texts joined.
	if len(got) != 1 || string(got[0]) != "id: 3\nevent: delta\ndata: {\"choice\":0,\"text\":\"Hello \\\"x\\\"\\n\"}\n\n" {
		t.Fatalf("one choice merged: %q", got)
	}
	var d struct{ Text string }
	data := bytes.TrimSuffix(bytes.SplitN(got[0], []byte("data: "), 2)[1], []byte("\n\n"))
	if err := json.Unmarshal(data, &d); err != nil || d.Text != "Hello \"x\"\n" {
		t.Errorf("merged data %s: %q, %v", data, d.Text, err)
	}
	// A reader who saw the merged event with id 3 resumes after frame 3.
	var rest bytes.Buffer
	rest.Write(appendFrames(nil, frames[3:]))
	if r := rest.String(); strings.Contains(r, "Hel") || !strings.Contains(r, `"text":"other"`) || !strings.HasPrefix(r, "id: 7\n") {
		t.Errorf("resuming after id 3 gave %q; want frames 4 on, merged", r)
	}
	// Frames that only look like text frames are left alone.
	odd := Recorded{
		f("1", "delta", `{"choice":0,"text":"a","extra":1}`),
		f("2", "delta", `{"choice":0,"text":"b","extra":1}`),
		f("3", "delta", `{"choice":x,"text":"c"}`),
		f("4", "delta", `{"choice":x,"text":"d"}`),
	}
	if got := appendFrames(nil, odd); !bytes.Equal(got, bytes.Join(odd, nil)) {
		t.Errorf("frames that are not the runner's text frames were changed:\n%s", got)
	}
}

// A paced stream of a live source writes the source's frames complete
// and in order, whatever it merges.
func TestPacedStreamWritesEveryFrame(t *testing.T) {
	src := &live{more: make(chan struct{})}
	var want strings.Builder
	for i := range 2000 {
		want.WriteString(strconv.Itoa(i) + " ")
	}
	go func() {
		for i := range 2000 {
			text := strconv.Itoa(i) + " "
			src.add([]byte("id: "+strconv.Itoa(i+1)+"\nevent: delta\ndata: {\"choice\":0,\"text\":\""+text+"\"}\n\n"), i == 1999)
		}
	}()
	var out bytes.Buffer
	write(bufio.NewWriter(&out), src, 0, pacing{ping: time.Hour, every: time.Millisecond}, nil, nil)
	var got strings.Builder
	lastID := 0
	for _, fr := range Split(out.Bytes())[1:] { // after the retry hint
		var d struct{ Text string }
		data := bytes.TrimSuffix(bytes.SplitN(fr, []byte("data: "), 2)[1], []byte("\n\n"))
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("event %q: %v", fr, err)
		}
		got.WriteString(d.Text)
		id, _ := strconv.Atoi(string(bytes.TrimPrefix(bytes.SplitN(fr, []byte("\n"), 2)[0], []byte("id: "))))
		if id <= lastID {
			t.Fatalf("ids go backwards: %d after %d", id, lastID)
		}
		lastID = id
	}
	if got.String() != want.String() || lastID != 2000 {
		t.Errorf("the paced stream wrote %d bytes of text up to id %d; want %d bytes up to 2000", got.Len(), lastID, want.Len())
	}
}
