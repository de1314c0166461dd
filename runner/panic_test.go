package runner_test

import (
	"context"
	"strings"
	"testing"

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
