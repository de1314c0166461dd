package cli

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// TestRunStreamsTheAnswer: a quick run prints the simulator's answer on
// stdout, exactly the text Knobs stored, and exits 0; the prompt (from
// stdin with "-") and the system message went into the request.
func TestRunStreamsTheAnswer(t *testing.T) {
	s := newTestServer(t)
	r := s.knobsWith(t, invocation{stdin: "Tell me about sea otters"},
		"run", "--provider", "sim", "--model", "sim-fast", "--system", "Be brief.", "--set", "max_completion_tokens=40", "-")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	run := s.latestRun(t)
	if run.Status != "done" || len(run.Choices) != 1 || run.Choices[0].Text == "" {
		t.Fatalf("stored run: %+v", run)
	}
	if r.stdout != run.Choices[0].Text+"\n" && r.stdout != run.Choices[0].Text {
		t.Errorf("stdout %q\nis not the stored answer %q", r.stdout, run.Choices[0].Text)
	}
	body, _ := json.Marshal(run.Request.Body)
	for _, want := range []string{`"content":"Be brief.","role":"system"`, `"content":"Tell me about sea otters","role":"user"`, `"max_completion_tokens":40`, `"model":"sim-fast"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the request sent upstream lacks %s: %s", want, body)
		}
	}
}

// TestRunReasoningToStderr: a reasoning model's reasoning goes to stderr,
// its answer alone to stdout.
func TestRunReasoningToStderr(t *testing.T) {
	s := newTestServer(t)
	r := s.knobs(t, "run", "--provider", "sim", "--model", "sim-reasoning", "Why is the sky blue?")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	run := s.latestRun(t)
	if run.Choices[0].Reasoning == "" {
		t.Fatalf("the simulator gave no reasoning: %+v", run)
	}
	if strings.TrimSuffix(r.stdout, "\n") != run.Choices[0].Text {
		t.Errorf("stdout %q\nis not the answer %q", r.stdout, run.Choices[0].Text)
	}
	if strings.TrimSuffix(r.stderr, "\n") != run.Choices[0].Reasoning {
		t.Errorf("stderr %q\nis not the reasoning %q", r.stderr, run.Choices[0].Reasoning)
	}
}

// TestRunErrorExits1: a run the provider fails ends the command with
// status 1 and the provider's message on stderr, after the partial answer.
func TestRunErrorExits1(t *testing.T) {
	s := newTestServer(t)
	r := s.knobs(t, "run", "--provider", "sim", "--model", "sim-flaky", "Tell me a long story")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", r.code, r.stderr)
	}
	run := s.latestRun(t)
	if run.Status != "error" || run.Error == nil || run.Error.Message == "" {
		t.Fatalf("stored run: %+v", run)
	}
	if !strings.Contains(r.stderr, "failed: "+run.Error.Message) {
		t.Errorf("stderr %q does not give the provider's message %q", r.stderr, run.Error.Message)
	}
	if strings.TrimSuffix(r.stdout, "\n") != run.Choices[0].Text {
		t.Errorf("stdout %q is not the partial answer %q", r.stdout, run.Choices[0].Text)
	}
}

// TestRunJSON: --json prints the finished run as the API has it, and
// still exits 1 for an error run.
func TestRunJSON(t *testing.T) {
	s := newTestServer(t)
	for _, tc := range []struct {
		model, status string
		code          int
	}{{"sim-fast", "done", 0}, {"sim-flaky", "error", 1}} {
		r := s.knobs(t, "run", "--json", "--provider", "sim", "--model", tc.model, "hello there")
		if r.code != tc.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", tc.model, r.code, tc.code, r.stderr)
		}
		var got storedRun
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%s: stdout is not JSON: %v\n%s", tc.model, err, r.stdout)
		}
		stored := s.latestRun(t)
		if got.ID != stored.ID || got.Status != tc.status || got.Model != tc.model || len(got.Choices) == 0 || got.Choices[0].Text != stored.Choices[0].Text {
			t.Errorf("%s: --json printed %+v, the run is %+v", tc.model, got, stored)
		}
	}
}

// TestRunInterrupted: Ctrl-C (the context ends) while the answer streams
// cancels the run on the server before the command exits, with 130.
func TestRunInterrupted(t *testing.T) {
	s := newTestServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var once sync.Once
	first := writerFunc(func(p []byte) (int, error) { once.Do(cancel); return len(p), nil })
	r := s.knobsWith(t, invocation{ctx: ctx, stdout: first}, "run", "--provider", "sim", "--model", "sim-slow", "Tell me a long story")
	if r.code != exitInterrupt {
		t.Fatalf("exit %d, want %d; stderr %q", r.code, exitInterrupt, r.stderr)
	}
	run := s.latestRun(t)
	if run.Status != "cancelled" {
		t.Errorf("the run on the server is %s, want cancelled", run.Status)
	}
	if !strings.Contains(r.stderr, "cancelled run") {
		t.Errorf("stderr %q does not say the run was cancelled", r.stderr)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestRunUsage: bad flags and arguments exit 2 with a message, and start
// no run.
func TestRunUsage(t *testing.T) {
	s := newTestServer(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "give --preset"},
		{[]string{"run", "--preset", "x", "--provider", "sim"}, "not both"},
		{[]string{"run", "--provider", "sim", "hi"}, "--model"},
		{[]string{"run", "--provider", "sim", "--model", "sim-fast"}, "prompt"},
		{[]string{"run", "--provider", "sim", "--model", "sim-fast", "--endpoint", "embed", "hi"}, "chat or completion"},
		{[]string{"run", "--provider", "sim", "--model", "sim-fast", "--set", "temperature=warm", "hi"}, "not JSON"},
		{[]string{"run", "--preset", "x", "--label", "production", "--version", "2"}, "not both"},
		{[]string{"run", "--preset", "x", "--var", "novalue"}, "name=value"},
		{[]string{"run", "--nonsense"}, "nonsense"},
	} {
		r := s.knobs(t, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("knobs %s: exit %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
	if n := s.runCount(t); n != 0 {
		t.Errorf("bad usage started %d runs", n)
	}
}

// TestRunRefused: what the server refuses (an unknown model) is reported
// with its message, exit 1.
func TestRunRefused(t *testing.T) {
	s := newTestServer(t)
	r := s.knobs(t, "run", "--provider", "nope", "--model", "m", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "provider") {
		t.Errorf("unknown provider: exit %d, stderr %q", r.code, r.stderr)
	}
}
