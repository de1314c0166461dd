package web_test

// Bounds on runs, seen from outside: an upstream that never stops, more
// runs at once than Knobs allows, and a browser that reconnects to a run
// after the server that ran it went away.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"knobs/db"
	"knobs/llm/sim"
	"knobs/runner"
)

// chunk is one Cerebras chat stream chunk carrying text.
func chunk(text string) string {
	return `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":` + strconv.Quote(text) + `}}]}` + "\n\n"
}

// fakeUpstream is an httptest upstream speaking the Cerebras wire format
// that counts its requests and tells when each one ended.
type fakeUpstream struct {
	srv      *httptest.Server
	requests atomic.Int64
	ended    chan struct{} // one send per request that ended
}

// endlessUpstream sends deltas as fast as the reader takes them and never
// ends a stream on its own: only the client going away stops it.
func endlessUpstream(t *testing.T) *fakeUpstream {
	t.Helper()
	up := &fakeUpstream{ended: make(chan struct{}, 100)}
	up.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up.requests.Add(1)
		defer func() { up.ended <- struct{}{} }()
		w.Header().Set("Content-Type", "text/event-stream")
		block := strings.Repeat(chunk("and on and on "), 64)
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, block); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(up.srv.Close)
	return up
}

// hangingUpstream sends one delta, "Hello", then nothing until the client
// goes away.
func hangingUpstream(t *testing.T) *fakeUpstream {
	t.Helper()
	up := &fakeUpstream{ended: make(chan struct{}, 100)}
	up.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up.requests.Add(1)
		defer func() { up.ended <- struct{}{} }()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk("Hello"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(up.srv.Close)
	return up
}

// waitEnded waits until n of the upstream's requests have ended.
func (up *fakeUpstream) waitEnded(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for range n {
		select {
		case <-up.ended:
		case <-deadline:
			t.Fatal("the upstream request was not ended within 10s")
		}
	}
}

const foreverBody = `{"model":"sim-fast","messages":[{"role":"user","content":"Go on forever"}]}`

// deltaText is the text of a delta event.
func deltaText(t testing.TB, e sseEvent) string {
	var d struct{ Text string }
	if err := json.Unmarshal([]byte(e.data), &d); err != nil {
		t.Fatalf("delta %q: %v", e.data, err)
	}
	return d.Text
}

func TestAnEndlessAnswerStopsAtTheOutputLimit(t *testing.T) {
	const limit = 64 << 10
	up := endlessUpstream(t)
	s, admin := newTeam(t, withSim(upstreamConfig(up.srv)), withEnv("KNOBS_MAX_OUTPUT_BYTES", strconv.Itoa(limit)))
	r, run := admin.postRun(runSpec(foreverBody))
	if r.status != http.StatusCreated {
		t.Fatalf("POST /runs = %d %s", r.status, r.body)
	}
	var streamed strings.Builder
	_, events := admin.readEvents(run.Events, 0, func(e sseEvent) bool {
		if e.event == "delta" {
			streamed.WriteString(deltaText(t, e))
		}
		// Without a limit the stream never ends: give up well past it.
		return streamed.Len() > 16*limit
	})
	if streamed.Len() > limit {
		t.Fatalf("%d bytes of text were relayed, past the limit of %d", streamed.Len(), limit)
	}
	if streamed.Len() == 0 {
		t.Fatal("nothing was relayed before the limit")
	}
	last := events[len(events)-1]
	if last.event != "done" || !strings.Contains(last.data, `"status":"error"`) {
		t.Errorf("the stream ended with %s %s, want done with status error", last.event, last.data)
	}
	var limitError string
	for _, e := range events {
		if e.event == "error" {
			limitError = e.data
		}
	}
	for _, want := range []string{"output limit reached", "KNOBS_MAX_OUTPUT_BYTES", "64 KiB"} {
		if !strings.Contains(limitError, want) {
			t.Errorf("error event %q does not say %q", limitError, want)
		}
	}
	up.waitEnded(t, 1)
	// What streamed before the limit is what history keeps.
	stored, err := s.store.Run(context.Background(), s.userID(t, "admin"), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var res runner.Result
	if err := json.Unmarshal([]byte(stored.Result), &res); err != nil {
		t.Fatal(err)
	}
	if stored.Status != db.RunError || res.Choices[0].Content != streamed.String() || res.Error == nil || !strings.Contains(res.Error.Message, "output limit reached") {
		t.Errorf("stored %s with %d bytes of text (streamed %d) and error %+v; want error, the streamed text and the limit named",
			stored.Status, len(res.Choices[0].Content), streamed.Len(), res.Error)
	}
}

// postRunNow posts spec to path from c without touching c's state, so
// that many can go at once.
func (c *client) postRunNow(path, spec, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, c.srv.url+path, strings.NewReader(spec))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Csrf-Token", token)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// storedRuns counts user's runs in history.
func (s *server) storedRuns(t *testing.T, user string) int {
	t.Helper()
	runs, _, err := s.store.Runs(context.Background(), db.RunFilter{UserID: s.userID(t, user), Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

func TestConcurrentRunsAreLimitedPerUserAndInTotal(t *testing.T) {
	up := hangingUpstream(t)
	s, admin := newTeam(t, withSim(upstreamConfig(up.srv)),
		withEnv("KNOBS_MAX_RUNS_PER_USER", "2"), withEnv("KNOBS_MAX_RUNS", "3"))
	bob := admin.addMember("bob")
	spec := runSpec(foreverBody)

	// Ten at once: exactly the limit gets through, however they interleave.
	token := admin.token()
	type answer struct {
		status int
		body   string
	}
	answers := make([]answer, 10)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, body, err := admin.postRunNow("/runs", spec, token)
			if err != nil {
				t.Error(err)
			}
			answers[i] = answer{status, body}
		}()
	}
	wg.Wait()
	var created []int64
	for _, a := range answers {
		switch a.status {
		case http.StatusCreated:
			var out struct{ ID int64 }
			json.Unmarshal([]byte(a.body), &out)
			created = append(created, out.ID)
		case http.StatusTooManyRequests:
			if !strings.Contains(a.body, "KNOBS_MAX_RUNS_PER_USER") || !strings.Contains(a.body, "2 runs") {
				t.Errorf("429 says %s; want the per-user limit named with its value", a.body)
			}
		default:
			t.Errorf("POST /runs answered %d %s", a.status, a.body)
		}
	}
	if len(created) != 2 {
		t.Fatalf("%d of 10 parallel runs started, want the limit of 2", len(created))
	}
	// A comparison counts each pane as a run.
	r, _ := admin.postCompare("", runSpec(foreverBody), runSpec(foreverBody))
	if r.status != http.StatusTooManyRequests || !r.has("KNOBS_MAX_RUNS_PER_USER") {
		t.Errorf("a comparison past the limit answered %d %s, want 429 naming the limit", r.status, r.body)
	}
	if n := s.storedRuns(t, "admin"); n != 2 {
		t.Errorf("admin has %d runs stored, want 2: refused runs must store nothing", n)
	}

	// Another user fills the last slot of the total, then is refused by it.
	if r, _ := bob.postRun(spec); r.status != http.StatusCreated {
		t.Fatalf("bob's first run answered %d %s", r.status, r.body)
	}
	r, _ = bob.postRun(spec)
	if r.status != http.StatusTooManyRequests || !r.has("KNOBS_MAX_RUNS") || !r.has("3 runs") {
		t.Errorf("a run past the total answered %d %s, want 429 naming KNOBS_MAX_RUNS and 3", r.status, r.body)
	}
	// The three runs started reach the upstream (each on its own time);
	// the refused ones were never sent.
	for deadline := time.Now().Add(10 * time.Second); up.requests.Load() < 3 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
	}
	if n := up.requests.Load(); n != 3 {
		t.Errorf("the upstream got %d requests, want 3", n)
	}

	// A run that ends gives its slot back.
	path := fmt.Sprintf("/runs/%d", created[0])
	if r := admin.post(path+"/cancel", "application/json", nil, http.Header{"X-Csrf-Token": {admin.token()}, "Accept": {"application/json"}}); r.status != http.StatusAccepted {
		t.Fatalf("cancel answered %d %s", r.status, r.body)
	}
	if _, events := admin.readEvents(path+"/events", 0, nil); len(events) == 0 || events[len(events)-1].event != "done" {
		t.Fatalf("the cancelled run's stream ended with %+v", events)
	}
	if r, _ := admin.postRun(spec); r.status != http.StatusCreated {
		t.Errorf("after one run ended, a new one answered %d %s", r.status, r.body)
	}
}

func TestAReconnectAfterARestartGetsTheStoredEnding(t *testing.T) {
	up := hangingUpstream(t)
	first := newServer(t, withSim(upstreamConfig(up.srv)), withRunner(runner.Options{Checkpoint: 20 * time.Millisecond, IdleGrace: time.Hour}))
	admin := first.newClient(t)
	admin.signUp("admin", "")
	r, run := admin.postRun(runSpec(foreverBody))
	if r.status != http.StatusCreated {
		t.Fatalf("POST /runs = %d %s", r.status, r.body)
	}
	_, head := admin.readEvents(run.Events, 0, func(e sseEvent) bool { return e.event == "delta" })
	lastID := head[len(head)-1].id
	user := first.userID(t, "admin")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got, _ := first.store.RunEvents(context.Background(), user, run.ID); strings.Contains(string(got), "Hello") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint with the partial text within 10s")
		}
	}
	// The crash: from here on the first server stores nothing more.
	first.store.Close()

	second := newServer(t, withEnv("KNOBS_DB", first.dbPath))
	browser := second.newClient(t)
	browser.mustLogIn("admin")
	events := run.Events

	check := func(t *testing.T, status string) {
		// The browser reconnects where it was: it gets the ending, then the
		// stream ends.
		resp, tail := browser.readEvents(events, lastID, nil)
		if resp.StatusCode != http.StatusOK || len(tail) == 0 {
			t.Fatalf("reconnect with Last-Event-ID %d: %d with %d events, want the stored ending", lastID, resp.StatusCode, len(tail))
		}
		end := tail[len(tail)-1]
		if end.event != "done" || !strings.Contains(end.data, `"status":"`+status+`"`) || end.id <= lastID {
			t.Errorf("reconnect ended with %s (id %d) %s; want done with status %s after id %d", end.event, end.id, end.data, status, lastID)
		}
		// A reader from the start gets the partial output, then the ending.
		_, whole := browser.readEvents(events, 0, nil)
		var text strings.Builder
		for _, e := range whole {
			if e.event == "delta" {
				text.WriteString(deltaText(t, e))
			}
		}
		if text.String() != "Hello" || whole[len(whole)-1].event != "done" || !strings.Contains(whole[len(whole)-1].data, `"status":"`+status+`"`) {
			t.Errorf("replay from the start: %q then %+v; want Hello then done %s", text.String(), whole[len(whole)-1], status)
		}
		// The run's page does not wait for a run nobody runs.
		if page := browser.get(fmt.Sprintf("/runs/%d", run.ID)); page.status != http.StatusOK || page.has("data-live") {
			t.Errorf("the run page answered %d and attaches to the run's events: %v", page.status, page.has("data-live"))
		}
	}
	// Still marked running, by a process that is gone.
	t.Run("row left running", func(t *testing.T) { check(t, db.RunInterrupted) })
	// Marked interrupted, as a start of Knobs does.
	t.Run("row marked interrupted", func(t *testing.T) {
		if n, err := second.store.InterruptRuns(context.Background(), runner.ResultFromFrames); err != nil || n != 1 {
			t.Fatalf("InterruptRuns = %d, %v", n, err)
		}
		check(t, db.RunInterrupted)
	})
}

// diskFullStore refuses to finish runs while full is set, as a full disk
// does.
type diskFullStore struct {
	*db.Store
	full  atomic.Bool
	tries atomic.Int64
}

func (s *diskFullStore) WriteRuns(ctx context.Context, ws []db.RunWrite) error {
	for _, w := range ws {
		if w.Finish != nil {
			s.tries.Add(1)
			if s.full.Load() {
				return fmt.Errorf("db: unable to finish run %d: database or disk is full (13)", w.RunID)
			}
		}
	}
	return s.Store.WriteRuns(ctx, ws)
}

func TestARunThatCannotBeStoredIsNotCalledDoneAndIsStoredLater(t *testing.T) {
	disk := &diskFullStore{}
	disk.full.Store(true)
	upstream := simUpstream(t, sim.NoPacing)
	s, admin := newTeam(t, withSim(upstreamConfig(upstream)), withRunner(runner.Options{StoreRetry: 5 * time.Millisecond}),
		withRunStore(func(st *db.Store) runner.Store { disk.Store = st; return disk }))
	r, run := admin.postRun(simRun)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /runs = %d %s", r.status, r.body)
	}
	_, events := admin.readEvents(run.Events, 0, nil)
	if len(events) < 2 {
		t.Fatalf("events %+v", events)
	}
	errEvent, last := events[len(events)-2], events[len(events)-1]
	if errEvent.event != "error" || !strings.Contains(errEvent.data, "could not be stored") || !strings.Contains(errEvent.data, `"kind":"storage"`) {
		t.Errorf("before the end came %s %s; want an error saying the run could not be stored", errEvent.event, errEvent.data)
	}
	if last.event != "done" || strings.Contains(last.data, `"status":"done"`) {
		t.Errorf("the stream ended with %s %s; done must not claim a run that is not stored", last.event, last.data)
	}
	// A reader that had it all is told to stop, not to reconnect forever.
	if resp, more := admin.readEvents(run.Events, last.id, nil); resp.StatusCode != http.StatusNoContent || len(more) > 0 {
		t.Errorf("a reconnect after the end answered %d with %d events, want 204", resp.StatusCode, len(more))
	}
	user := s.userID(t, "admin")
	if stored, _ := s.store.Run(context.Background(), user, run.ID); stored.Status != db.RunRunning {
		t.Fatalf("the row is %s though every save failed", stored.Status)
	}
	// Room again: the runner, still trying, stores the run whole.
	for deadline := time.Now().Add(10 * time.Second); disk.tries.Load() < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the runner tried to store the run %d times in 10s", disk.tries.Load())
		}
	}
	disk.full.Store(false)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		stored, _ := s.store.Run(context.Background(), user, run.ID)
		if stored.Status == db.RunDone && strings.Contains(stored.Result, "simulator") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run was not stored once the disk had room: %s %.200s", stored.Status, stored.Result)
		}
	}
	if !strings.Contains(s.log.String(), fmt.Sprintf("run=%d", run.ID)) || !strings.Contains(s.log.String(), "disk is full") {
		t.Error("the failed saves were not logged with the run id")
	}
}
