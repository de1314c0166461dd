package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"knobs/db"
	"knobs/db/dbtest"
	"knobs/llm"
	"knobs/llm/sim"
	"knobs/runner"
)

// fixture is a real store with one user, and a runner over it.
type fixture struct {
	store *db.Store
	user  int64
	r     *runner.Runner
}

func newFixture(t *testing.T, opts runner.Options) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "knobs.db")
	dbtest.Fresh(t, path)
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	u, err := store.CreateUser(context.Background(), db.SignUp{Username: "ada", PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	r := runner.New(store, slog.New(slog.NewTextHandler(io.Discard, nil)), opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		store.Close()
	})
	return &fixture{store: store, user: u.ID, r: r}
}

// start stores a run row and starts it against client.
func (f *fixture) start(t *testing.T, client runner.Streamer, spec llm.RunSpec) *runner.Run {
	t.Helper()
	id, err := f.store.CreateRun(context.Background(), db.Run{UserID: f.user, Provider: spec.Provider, Endpoint: string(spec.Endpoint), Model: spec.Model(), Spec: "{}", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	run, err := f.r.Start(id, f.user, client, spec, llm.Model{ID: spec.Model(), PromptPrice: 1, CompletionPrice: 2})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// frame is one decoded SSE frame.
type frame struct {
	id    int
	event string
	data  string
}

func parseFrame(b []byte) frame {
	var f frame
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "id":
			f.id, _ = strconv.Atoi(v)
		case "event":
			f.event = v
		case "data":
			f.data = v
		}
	}
	return f
}

// withoutRendered drops the rendered answer that follows done, checking
// that it does, so that tests read done as the last frame.
func withoutRendered(t *testing.T, frames []frame) []frame {
	t.Helper()
	if n := len(frames); n > 0 && frames[n-1].event == "rendered" {
		if n < 2 || frames[n-2].event != "done" {
			t.Errorf("the rendered answer does not follow done: %+v", frames)
		}
		return frames[:n-1]
	}
	return frames
}

// listen reads every frame of run after `after` until it finishes, and
// returns them up to done.
func listen(t *testing.T, run *runner.Run, after int) []frame {
	t.Helper()
	leave := run.Subscribe()
	defer leave()
	var out []frame
	deadline := time.After(30 * time.Second)
	for {
		frames, finished, more := run.Frames(after)
		for _, b := range frames {
			out = append(out, parseFrame(b))
		}
		after += len(frames)
		if finished && len(frames) == 0 {
			return withoutRendered(t, out)
		}
		if len(frames) > 0 {
			continue
		}
		select {
		case <-more:
		case <-deadline:
			t.Fatal("run did not finish in 30s")
		}
	}
}

func simClient(t *testing.T, opts sim.Options) *llm.Client {
	t.Helper()
	up := httptest.NewServer(sim.NewHandler(opts))
	t.Cleanup(up.Close)
	return llm.NewClient(llm.ProviderConfig{ID: "sim", Dialect: llm.DialectSim, BaseURL: up.URL})
}

func chatSpec(body string) llm.RunSpec {
	return llm.RunSpec{Provider: "sim", Endpoint: llm.EndpointChat, Body: json.RawMessage(body)}
}

// stored loads the run back from the database.
func (f *fixture) stored(t *testing.T, id int64) (db.Run, runner.Result) {
	t.Helper()
	r, err := f.store.Run(context.Background(), f.user, id)
	if err != nil {
		t.Fatal(err)
	}
	var res runner.Result
	if err := json.Unmarshal([]byte(r.Result), &res); err != nil {
		t.Fatalf("stored result %q: %v", r.Result, err)
	}
	return r, res
}

// waitStored waits until the runner has written the run's final status.
func (f *fixture) waitStored(t *testing.T, id int64) (db.Run, runner.Result) {
	t.Helper()
	for i := 0; i < 500; i++ {
		r, res := f.stored(t, id)
		if r.Status != db.RunRunning {
			return r, res
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("run was never stored as finished")
	return db.Run{}, runner.Result{}
}

func TestRunRelaysEveryEventKindAndStoresTheResult(t *testing.T) {
	f := newFixture(t, runner.Options{Render: func(md string) string { return "<p>" + md + "</p>" }})
	client := simClient(t, sim.Options{TokensPerSecond: sim.NoPacing})
	tools := `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`
	tests := []struct {
		name  string
		body  string
		kinds []string
	}{
		{"content, logprobs, metrics", `{"model":"sim-fast","messages":[{"role":"user","content":"Tell me about tides"}],"logprobs":true,"top_logprobs":2,"max_completion_tokens":40}`,
			[]string{"request", "delta", "logprobs", "metrics", "done"}},
		{"reasoning before content", `{"model":"sim-reasoning","messages":[{"role":"user","content":"Why is the sea salty?"}],"reasoning_effort":"low","max_completion_tokens":300}`,
			[]string{"request", "reasoning", "delta", "done"}},
		{"tool calls", `{"model":"sim-fast","messages":[{"role":"user","content":"What is the weather in Lisbon?"}],"tools":` + tools + `,"tool_choice":"required"}`,
			[]string{"request", "tool_call", "done"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := f.start(t, client, chatSpec(tt.body))
			frames := listen(t, run, 0)
			seen := map[string]bool{}
			for i, fr := range frames {
				if fr.id != i+1 {
					t.Fatalf("frame %d has id %d; ids must count up from 1", i, fr.id)
				}
				seen[fr.event] = true
			}
			for _, k := range tt.kinds {
				if !seen[k] {
					t.Errorf("no %q event among %v", k, seen)
				}
			}
			last := frames[len(frames)-1]
			if last.event != "done" || !strings.Contains(last.data, `"status":"done"`) {
				t.Fatalf("last frame = %+v, want done with status done", last)
			}
			// What the listener saw is what was stored.
			var streamed strings.Builder
			for _, fr := range frames {
				if fr.event == "delta" {
					var d struct{ Text string }
					json.Unmarshal([]byte(fr.data), &d)
					streamed.WriteString(d.Text)
				}
			}
			r, res := f.waitStored(t, run.ID)
			if r.Status != db.RunDone {
				t.Fatalf("stored status %q", r.Status)
			}
			if res.Choices[0].Content != streamed.String() {
				t.Errorf("stored content differs from streamed:\nstored   %q\nstreamed %q", res.Choices[0].Content, streamed.String())
			}
			if res.Usage == nil || res.Usage.CompletionTokens == 0 {
				t.Errorf("stored usage = %+v", res.Usage)
			}
			if res.Metrics.TTFTMs <= 0 || res.Metrics.Tokens == 0 || res.Metrics.CostUSD <= 0 {
				t.Errorf("stored metrics = %+v, want TTFT, tokens and a cost from the prices", res.Metrics)
			}
			if strings.Contains(tt.name, "tool") && (len(res.Choices[0].ToolCalls) == 0 || res.Choices[0].ToolCalls[0].Name != "get_weather") {
				t.Errorf("stored tool calls = %+v", res.Choices[0].ToolCalls)
			}
			if strings.Contains(tt.name, "reasoning") && res.Choices[0].Reasoning == "" {
				t.Error("no reasoning stored")
			}
			if !strings.Contains(r.RawRequest, `"stream":true`) || !strings.Contains(r.RawRequest, "/v1/chat/completions") {
				t.Errorf("stored raw request = %s", r.RawRequest)
			}
			ev, err := f.store.RunEvents(context.Background(), f.user, run.ID)
			if err != nil || !bytes.HasPrefix(ev, []byte("id: 1\nevent: request\n")) || !bytes.HasSuffix(ev, []byte("\n\n")) {
				t.Errorf("stored events start %.60q (err %v)", ev, err)
			}
		})
	}
}

func TestJSONOutputIsCheckedAgainstTheSchema(t *testing.T) {
	f := newFixture(t, runner.Options{})
	client := simClient(t, sim.Options{TokensPerSecond: sim.NoPacing})
	run := f.start(t, client, chatSpec(`{"model":"sim-fast","messages":[{"role":"user","content":"A city"}],
		"response_format":{"type":"json_schema","json_schema":{"name":"city","schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}}`))
	frames := listen(t, run, 0)
	done := frames[len(frames)-1]
	if !strings.Contains(done.data, `"checks":[{"json":true,"valid":true`) {
		t.Errorf("done = %s, want a passing schema check", done.data)
	}
}

func TestReconnectResumesWithoutASecondUpstreamCall(t *testing.T) {
	var calls atomic.Int32
	h := sim.NewHandler(sim.Options{TokensPerSecond: 400})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		h.ServeHTTP(w, r)
	}))
	defer up.Close()
	client := llm.NewClient(llm.ProviderConfig{ID: "sim", Dialect: llm.DialectSim, BaseURL: up.URL})
	f := newFixture(t, runner.Options{})
	run := f.start(t, client, chatSpec(`{"model":"sim-fast","messages":[{"role":"user","content":"Rivers"}],"max_completion_tokens":120}`))

	// A first listener reads a few frames, then drops.
	leave := run.Subscribe()
	var first [][]byte
	for len(first) < 4 {
		frames, _, more := run.Frames(len(first))
		first = append(first, frames...)
		if len(first) < 4 {
			<-more
		}
	}
	leave()
	lastID := parseFrame(first[3]).id

	// The reconnect says Last-Event-ID and gets the rest, with no gap or repeat.
	rest := listen(t, run, lastID)
	if rest[0].id != lastID+1 {
		t.Fatalf("resumed at id %d, want %d", rest[0].id, lastID+1)
	}
	all := listen(t, run, 0)
	if len(all) != lastID+len(rest) {
		t.Errorf("first %d + resumed %d frames != all %d", lastID, len(rest), len(all))
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("upstream called %d times, want 1", n)
	}
}

// hangingUpstream streams one chunk, then waits until its request ends and
// reports when that was.
func hangingUpstream(t *testing.T) (*llm.Client, <-chan time.Time) {
	ended := make(chan time.Time, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hello"}}]}` + "\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		ended <- time.Now()
	}))
	t.Cleanup(up.Close)
	return llm.NewClient(llm.ProviderConfig{ID: "sim", Dialect: llm.DialectSim, BaseURL: up.URL}), ended
}

func waitFrame(t *testing.T, run *runner.Run, event string) {
	t.Helper()
	after := 0
	deadline := time.After(10 * time.Second)
	for {
		frames, _, more := run.Frames(after)
		for _, b := range frames {
			if parseFrame(b).event == event {
				return
			}
		}
		after += len(frames)
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("no %s frame within 10s", event)
		}
	}
}

func TestCancelEndsTheUpstreamRequestAtOnceAndKeepsThePartialOutput(t *testing.T) {
	client, ended := hangingUpstream(t)
	f := newFixture(t, runner.Options{})
	run := f.start(t, client, chatSpec(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	leave := run.Subscribe()
	defer leave()
	waitFrame(t, run, "delta")
	if !f.r.Cancel(run.ID, f.user) {
		t.Fatal("Cancel found no live run")
	}
	// The upstream never ends its stream: only the cancel can close it.
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("upstream request did not end after cancel")
	}
	r, res := f.waitStored(t, run.ID)
	if r.Status != db.RunCancelled || res.Choices[0].Content != "Hello" {
		t.Errorf("stored %q with %+v, want cancelled with the partial text", r.Status, res.Choices)
	}
	if f.r.Cancel(run.ID, f.user+1) {
		t.Error("another user could cancel the run")
	}
}

func TestARunNobodyListensToIsCancelled(t *testing.T) {
	client, ended := hangingUpstream(t)
	f := newFixture(t, runner.Options{StartGrace: 50 * time.Millisecond, IdleGrace: 50 * time.Millisecond})
	run := f.start(t, client, chatSpec(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("an unheard run kept its upstream request open")
	}
	if r, _ := f.waitStored(t, run.ID); r.Status != db.RunCancelled {
		t.Errorf("status %q, want cancelled", r.Status)
	}
}

func TestAListenerThatLeavesAndComesBackKeepsTheRun(t *testing.T) {
	// The stream lasts about 1.5 s, five times the idle grace: had the
	// return not stopped the idle timer, the run would end cancelled.
	f := newFixture(t, runner.Options{IdleGrace: 300 * time.Millisecond})
	client := simClient(t, sim.Options{TokensPerSecond: 100})
	run := f.start(t, client, chatSpec(`{"model":"sim-fast","messages":[{"role":"user","content":"Bridges"}],"min_completion_tokens":150,"max_completion_tokens":150}`))
	leave := run.Subscribe()
	waitFrame(t, run, "delta")
	leave()
	frames := listen(t, run, 0) // back within the grace, and staying
	if last := frames[len(frames)-1]; !strings.Contains(last.data, `"status":"done"`) {
		t.Errorf("run ended %s, want done", last.data)
	}
}

func TestUpstreamErrorsAreStoredWithTheirKindAndPartialOutput(t *testing.T) {
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		kind     llm.ErrorKind
		partial  string
		contains string
	}{
		{"bad key", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			w.Write([]byte(`{"message":"Wrong API Key","type":"invalid_request_error","param":"api_key","code":"wrong_api_key"}`))
		}, llm.ErrBadKey, "", "Wrong API Key"},
		{"rate limit", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "12")
			w.WriteHeader(429)
			w.Write([]byte(`{"message":"Requests per minute limit exceeded - too many requests sent.","type":"too_many_requests_error","param":"quota","code":"request_quota_exceeded"}`))
		}, llm.ErrRateLimit, "", `"retry_after_s":12`},
		{"error chunk mid-stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Par"}}]}` + "\n\n"))
			w.Write([]byte(`data: {"error":{"code":"internal","id":"e1","message":"The model crashed","param":"","type":"server_error"},"status_code":500}` + "\n\n"))
		}, llm.ErrStream, "Par", "The model crashed"},
		{"unknown model", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(404)
			w.Write([]byte(`{"message":"Model llama-9 does not exist or you do not have access to it.","type":"not_found_error","param":"model","code":"model_not_found"}`))
		}, llm.ErrUnknownModel, "", "llama-9 does not exist"},
		{"validation names the field", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(422)
			w.Write([]byte(`{"detail":[{"loc":["body","temperature"],"msg":"Input should be less than or equal to 2","type":"less_than_equal"}]}`))
		}, llm.ErrValidation, "", `"field":"temperature"`},
		{"server error", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			w.Write([]byte(`{"message":"Internal error, please retry","type":"server_error","param":"","code":"internal"}`))
		}, llm.ErrServer, "", "Internal error, please retry"},
		{"HTML error page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			w.Write([]byte(`<html><head><title>502 Bad Gateway</title></head><body><h1>502</h1>` + strings.Repeat("<p>cdn noise</p>", 200) + `</body></html>`))
		}, llm.ErrHTMLPage, "", "502 Bad Gateway"},
		{"out of credits", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(429)
			w.Write([]byte(`{"code":"Some resource has been exhausted","error":"Your team has either used all available credits or reached its monthly spending limit."}`))
		}, llm.ErrNoCredits, "", "used all available credits"},
		{"truncated", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Half an ans"}}]}` + "\n\n"))
		}, llm.ErrTruncated, "Half an ans", "truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := httptest.NewServer(tt.handler)
			defer up.Close()
			dialect := llm.DialectCerebras
			if tt.kind == llm.ErrNoCredits {
				dialect = llm.DialectXAI
			}
			client := llm.NewClient(llm.ProviderConfig{ID: "c", Dialect: dialect, BaseURL: up.URL, Key: "k"})
			f := newFixture(t, runner.Options{})
			run := f.start(t, client, chatSpec(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			frames := listen(t, run, 0)
			var errFrame *frame
			for i := range frames {
				if frames[i].event == "error" {
					errFrame = &frames[i]
				}
			}
			if errFrame == nil || !strings.Contains(errFrame.data, `"kind":"`+string(tt.kind)+`"`) || !strings.Contains(errFrame.data, tt.contains) {
				t.Fatalf("error frame = %+v, want kind %s with %q", errFrame, tt.kind, tt.contains)
			}
			if last := frames[len(frames)-1]; last.event != "done" || !strings.Contains(last.data, `"status":"error"`) {
				t.Errorf("last frame = %+v, want done with status error", last)
			}
			r, res := f.waitStored(t, run.ID)
			if r.Status != db.RunError || res.Error == nil || res.Error.Kind != tt.kind {
				t.Fatalf("stored %q, error %+v", r.Status, res.Error)
			}
			if res.Choices[0].Content != tt.partial {
				t.Errorf("stored partial output %q, want %q", res.Choices[0].Content, tt.partial)
			}
		})
	}
}

func TestNetworkFailureAndTimeoutAreStoredAsSuch(t *testing.T) {
	// A port nobody listens on: take one, then close it.
	closed := httptest.NewServer(http.NotFoundHandler())
	deadURL := closed.URL
	closed.Close()
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body first: only then does the server notice the client
		// hanging up and end the request's context.
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done() // never answers
	}))
	defer silent.Close()
	tests := []struct {
		name string
		cfg  llm.ProviderConfig
		kind llm.ErrorKind
	}{
		{"connection refused", llm.ProviderConfig{ID: "c", Dialect: llm.DialectCerebras, BaseURL: deadURL, Key: "k"}, llm.ErrNetwork},
		{"no first byte in time", llm.ProviderConfig{ID: "c", Dialect: llm.DialectCerebras, BaseURL: silent.URL, Key: "k", FirstByteTimeout: 100 * time.Millisecond}, llm.ErrTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, runner.Options{})
			run := f.start(t, llm.NewClient(tt.cfg), chatSpec(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			frames := listen(t, run, 0)
			if last := frames[len(frames)-1]; last.event != "done" || !strings.Contains(last.data, `"status":"error"`) {
				t.Errorf("last frame = %+v", last)
			}
			r, res := f.waitStored(t, run.ID)
			if r.Status != db.RunError || res.Error == nil || res.Error.Kind != tt.kind {
				t.Fatalf("stored %q with error %+v, want kind %s", r.Status, res.Error, tt.kind)
			}
		})
	}
}

func TestShutdownStoresLiveRunsAsInterrupted(t *testing.T) {
	client, _ := hangingUpstream(t)
	f := newFixture(t, runner.Options{})
	run := f.start(t, client, chatSpec(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	leave := run.Subscribe()
	defer leave()
	waitFrame(t, run, "delta")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.r.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	r, res := f.stored(t, run.ID)
	if r.Status != db.RunInterrupted || res.Choices[0].Content != "Hello" {
		t.Errorf("after shutdown: %q with %+v, want interrupted with the partial text", r.Status, res.Choices)
	}
	if _, err := f.r.Start(99, f.user, client, chatSpec(`{}`), llm.Model{}); err == nil {
		t.Error("a run started after shutdown")
	}
}

func TestARestartMarksRunningRunsInterruptedWithTheirCheckpoint(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "knobs.db")
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := store.CreateUser(context.Background(), db.SignUp{Username: "ada", PasswordHash: "x"})
	client, _ := hangingUpstream(t)
	r := runner.New(store, slog.New(slog.NewTextHandler(io.Discard, nil)), runner.Options{Checkpoint: 20 * time.Millisecond})
	id, _ := store.CreateRun(context.Background(), db.Run{UserID: u.ID, Provider: "sim", Endpoint: "chat", Model: "m", Spec: "{}", CreatedAt: time.Now()})
	run, err := r.Start(id, u.ID, client, chatSpec(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), llm.Model{})
	if err != nil {
		t.Fatal(err)
	}
	leave := run.Subscribe()
	defer leave()
	waitFrame(t, run, "delta")
	// Wait for a checkpoint with the partial text, then "crash": the process
	// goes away without the runner storing anything more.
	for i := 0; ; i++ {
		events, _ := store.RunEvents(context.Background(), u.ID, id)
		if strings.Contains(string(events), "Hello") {
			break
		}
		if i > 200 {
			t.Fatal("no checkpoint within 2s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	store.Close()

	// The next start of Knobs finds the run still marked running.
	store2, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer store2.Close()
	n, err := store2.InterruptRuns(context.Background(), runner.ResultFromFrames)
	if err != nil || n != 1 {
		t.Fatalf("InterruptRuns = %d, %v; want 1", n, err)
	}
	got, err := store2.Run(context.Background(), u.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != db.RunInterrupted || !strings.Contains(got.Result, "Hello") {
		t.Errorf("after restart: %q %s", got.Status, got.Result)
	}
	// Replaying it gives the partial text and a done event.
	replay := string(runner.Replay(got.Status, got.Result))
	if !strings.Contains(replay, `"text":"Hello"`) || !strings.Contains(replay, `"status":"interrupted"`) {
		t.Errorf("replay = %s", replay)
	}
	// The first runner is still holding its (now closed) store; stop it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.Shutdown(ctx)
}
