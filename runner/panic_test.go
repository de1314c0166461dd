package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"knobs/db"
	"knobs/llm"
	"knobs/llm/sim"
	"knobs/runner"
)

// panickingStreamer is a provider client with a fault: it panics when a
// stream is opened.
type panickingStreamer struct{}

func (panickingStreamer) Stream(context.Context, llm.RunSpec) *llm.Stream {
	panic("a fault in a client")
}

// A fault in one run ends that run as an error, stored with what it had;
// the process and every other run go on.
func TestAPanicInARunEndsThatRunAlone(t *testing.T) {
	f := newFixture(t, runner.Options{})
	spec := chatSpec(`{"model":"sim-fast","messages":[{"role":"user","content":"hi"}]}`)
	bad := f.start(t, panickingStreamer{}, spec)
	good := f.start(t, simClient(t, sim.Options{}), spec)

	frames := listen(t, bad, 0)
	last := frames[len(frames)-1]
	if last.event != "done" || !strings.Contains(last.data, `"status":"error"`) {
		t.Errorf("the faulty run ended with %s %s, want done with status error", last.event, last.data)
	}
	var sawError bool
	for _, fr := range frames {
		if fr.event == "error" && strings.Contains(fr.data, "internal error") {
			sawError = true
		}
	}
	if !sawError {
		t.Errorf("the faulty run's listeners were not told of the internal error: %v", frames)
	}
	stored, err := f.store.Run(context.Background(), f.user, bad.ID)
	if err != nil || stored.Status != db.RunError {
		t.Errorf("the faulty run is stored as %q, %v; want error", stored.Status, err)
	}
	goodFrames := listen(t, good, 0)
	if end := goodFrames[len(goodFrames)-1]; !strings.Contains(end.data, `"status":"done"`) {
		t.Errorf("the other run ended %s", end.data)
	}
}

// A renderer that panics on an answer costs the answer its HTML, not the
// run.
func TestAPanicRenderingAnAnswerKeepsTheRun(t *testing.T) {
	f := newFixture(t, runner.Options{Render: func(string) string { panic("a fault in the renderer") }})
	run := f.start(t, simClient(t, sim.Options{}), chatSpec(`{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":5}`))
	frames := listen(t, run, 0)
	if end := frames[len(frames)-1]; end.event != "done" || !strings.Contains(end.data, `"status":"done"`) {
		t.Errorf("the run ended %s %s, want done", end.event, end.data)
	}
	stored, err := f.store.Run(context.Background(), f.user, run.ID)
	if err != nil || stored.Status != db.RunDone {
		t.Errorf("stored as %q, %v; want done", stored.Status, err)
	}
}

// What is stored of a run is byte for byte what its listeners got: the
// frames in the order and form they were sent, the request, the ending
// and the rendered answer after done, whether the run streamed past
// several checkpoints or ended before the first.
func TestStoredStreamIsWhatWasSent(t *testing.T) {
	for _, c := range []struct {
		name       string
		checkpoint time.Duration
		tokens     int
	}{{"no checkpoint", time.Hour, 30}, {"many checkpoints", time.Millisecond, 3000}} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, runner.Options{Checkpoint: c.checkpoint, Render: func(s string) string { return "<p>" + s + "</p>" }})
			body := fmt.Sprintf(`{"model":"sim-fast","messages":[{"role":"user","content":"hi"}],"n":2,"min_tokens":%d,"max_completion_tokens":%d}`, c.tokens, c.tokens)
			run := f.start(t, simClient(t, sim.Options{}), chatSpec(body))
			listen(t, run, 0)
			sent, finished, _ := run.Frames(0)
			if !finished {
				t.Fatal("the run is not finished")
			}
			// The rendered answer is stored just after the stream ends.
			var stored []byte
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				var err error
				if stored, err = f.store.RunEvents(context.Background(), f.user, run.ID); err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(stored, []byte("\nevent: rendered\n")) || time.Now().After(deadline) {
					break
				}
			}
			if !bytes.Equal(stored, bytes.Join(sent, nil)) {
				t.Errorf("stored %d bytes, %d frames; sent %d bytes, %d frames", len(stored), bytes.Count(stored, []byte("\n\n")), len(bytes.Join(sent, nil)), len(sent))
			}
			if !bytes.Contains(stored, []byte("\nevent: rendered\n")) {
				t.Error("the rendered answer is not stored")
			}
		})
	}
}
