package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"knobs/db"
	"knobs/llm/sim"
	"knobs/runner"
)

// postRun starts a run through the JSON API and returns the decoded answer.
func (c *client) postRun(spec string) (*response, struct {
	ID     int64  `json:"id"`
	Events string `json:"events"`
}) {
	c.t.Helper()
	r := c.post("/runs", "application/json", strings.NewReader(spec), http.Header{"X-Csrf-Token": {c.token()}, "Accept": {"application/json"}})
	var out struct {
		ID     int64  `json:"id"`
		Events string `json:"events"`
	}
	if r.status == http.StatusCreated {
		if err := json.Unmarshal([]byte(r.body), &out); err != nil {
			c.t.Fatalf("POST /runs answered %q: %v", r.body, err)
		}
	}
	return r, out
}

// sseEvent is one event read off the wire.
type sseEvent struct {
	id    int
	event string
	data  string
}

// readEvents opens path as an event stream and reads it to its end (or
// until stop returns true), with Last-Event-ID when lastID > 0. The
// rendered answer that follows a run's done is checked to follow it and
// left out, so that tests read done as the last event; readAllEvents
// keeps it.
func (c *client) readEvents(path string, lastID int, stop func(sseEvent) bool) (*http.Response, []sseEvent) {
	c.t.Helper()
	resp, out := c.readAllEvents(path, lastID, stop)
	if n := len(out); n > 0 && out[n-1].event == "rendered" {
		if n < 2 || out[n-2].event != "done" {
			c.t.Errorf("%s: the rendered answer does not follow done: %+v", path, out)
		}
		out = out[:n-1]
	}
	return resp, out
}

// readAllEvents is readEvents with every event kept.
func (c *client) readAllEvents(path string, lastID int, stop func(sseEvent) bool) (*http.Response, []sseEvent) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.srv.url+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.Itoa(lastID))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp, nil
	}
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.event != "" {
				out = append(out, cur)
				if stop != nil && stop(cur) {
					return resp, out
				}
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.id, _ = strconv.Atoi(line[4:])
		case strings.HasPrefix(line, "event: "):
			cur.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		}
	}
	return resp, out
}

const simRun = `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"Tell me about glaciers"}],"max_completion_tokens":80}}`

func TestRunOverHTTPStreamsAndReplays(t *testing.T) {
	// Finished runs leave the runner's memory at once: the replays below
	// come from the database.
	s, admin := newTeam(t, withRunner(runner.Options{Linger: time.Millisecond}))
	r, run := admin.postRun(simRun)
	if r.status != http.StatusCreated || run.Events != fmt.Sprintf("/runs/%d/events", run.ID) {
		t.Fatalf("POST /runs = %d %s", r.status, r.body)
	}
	resp, events := admin.readEvents(run.Events, 0, nil)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q", ct)
	}
	if resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Error("missing X-Accel-Buffering: no")
	}
	if len(events) < 3 || events[0].event != "request" || events[len(events)-1].event != "done" {
		t.Fatalf("events %+v, want request ... done", events)
	}
	var text strings.Builder
	for _, e := range events {
		if e.event == "delta" {
			var d struct{ Text string }
			json.Unmarshal([]byte(e.data), &d)
			text.WriteString(d.Text)
		}
	}
	if !strings.Contains(text.String(), "simulator") {
		t.Errorf("streamed text %q does not say it is the simulator", text.String())
	}
	// Reading again after the end replays the same events from the
	// database; Last-Event-ID resumes after the one named.
	waitForgotten(t, s, s.userID(t, "admin"), run.ID)
	_, again := admin.readEvents(run.Events, 0, nil)
	if got, want := canonical(again), canonical(events); !slices.Equal(got, want) {
		t.Errorf("the replay (%d events) differs from the live stream (%d)", len(again), len(events))
	}
	// Resuming after any event's id gives exactly the rest.
	cut := again[1].id
	_, tail := admin.readEvents(run.Events, cut, nil)
	if len(tail) == 0 || tail[0].id <= cut || !slices.Equal(canonical(append(again[:2:2], tail...)), canonical(again)) {
		t.Errorf("resume after %d gave %d events starting at %+v; want exactly the rest", cut, len(tail), tail)
	}
	// The stored run holds what streamed, and no key.
	stored, err := s.store.Run(context.Background(), s.userID(t, "admin"), run.ID)
	if err != nil || stored.Status != db.RunDone {
		t.Fatalf("stored %+v, %v", stored, err)
	}
	// The provider's own bytes are kept for the raw view.
	var raw *response
	for i := 0; i < 100; i++ {
		if raw = admin.get(fmt.Sprintf("/runs/%d/raw", run.ID)); raw.status == http.StatusOK && raw.body != "" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !raw.has(`"object":"chat.completion.chunk"`) || !raw.has("data: [DONE]") {
		t.Errorf("raw response = %.200q, want the upstream's SSE", raw.body)
	}
	// The page keeps its spec on the server (it posts it as it changes),
	// so a reload or another browser finds it.
	saved := admin.post("/playground/state", "application/json", strings.NewReader(simRun), http.Header{"X-Csrf-Token": {admin.token()}})
	if saved.status != http.StatusNoContent {
		t.Fatalf("saving the playground state answered %d %s", saved.status, saved.body)
	}
	if page := admin.open("/"); !page.has("Tell me about glaciers") {
		t.Error("the playground does not hold the spec it saved")
	}
	bad := admin.post("/playground/state", "application/json", strings.NewReader(`{"provider":"nope","endpoint":"chat","body":{}}`), http.Header{"X-Csrf-Token": {admin.token()}})
	if bad.status != http.StatusUnprocessableEntity {
		t.Errorf("an unknown provider was saved as playground state: %d", bad.status)
	}
}

// waitForgotten waits until the runner no longer holds run id in memory,
// so that what follows reads it from the database.
func waitForgotten(t *testing.T, s *server, user, id int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if _, live := s.runs.Run(id, user); !live {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d is still in the runner's memory after 10s", id)
		}
	}
}

func TestRunValidationSendsNothing(t *testing.T) {
	s, admin := newTeam(t)
	tests := []struct {
		name, spec string
		status     int
		field      string
	}{
		{"temperature out of range", `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","temperature":7,"messages":[{"role":"user","content":"x"}]}}`, 422, "temperature"},
		{"temperature of the wrong type", `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","temperature":"hot","messages":[{"role":"user","content":"x"}]}}`, 422, "temperature"},
		{"five stop sequences", `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","stop":["a","b","c","d","e"],"messages":[{"role":"user","content":"x"}]}}`, 422, "stop"},
		{"unknown provider", `{"provider":"nope","endpoint":"chat","body":{"model":"m","messages":[]}}`, 422, "provider"},
		{"unknown endpoint", `{"provider":"sim","endpoint":"embed","body":{"model":"m"}}`, 422, "endpoint"},
		{"no key for cerebras", `{"provider":"cerebras","endpoint":"chat","body":{"model":"gpt-oss-120b","messages":[{"role":"user","content":"x"}]}}`, 422, "provider"},
		{"malformed JSON", `{"provider":"sim",`, 400, ""},
		{"unknown top-level field", `{"provider":"sim","endpoint":"chat","body":{},"extra":1}`, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := admin.postRun(tt.spec)
			if r.status != tt.status {
				t.Fatalf("status %d (%s), want %d", r.status, r.body, tt.status)
			}
			var out struct {
				Error  string
				Fields map[string]string
			}
			if err := json.Unmarshal([]byte(r.body), &out); err != nil || out.Error == "" {
				t.Fatalf("answer %q is not a JSON error", r.body)
			}
			if tt.field != "" && out.Fields[tt.field] == "" {
				t.Errorf("fields %v lack %q", out.Fields, tt.field)
			}
		})
	}
	if _, err := s.store.Run(context.Background(), s.userID(t, "admin"), 1); err == nil {
		t.Error("a refused spec was stored as a run")
	}
}

func TestRunsBelongToTheirOwner(t *testing.T) {
	s, admin := newTeam(t)
	_, run := admin.postRun(simRun)
	admin.readEvents(run.Events, 0, nil)
	bob := admin.addMember("bob")
	if resp, _ := bob.readEvents(run.Events, 0, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another user's events answered %d, want 404", resp.StatusCode)
	}
	if resp, _ := bob.readEvents("/runs/99999/events", 0, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown run answered %d, want 404", resp.StatusCode)
	}
	if resp, _ := bob.readEvents("/runs/abc/events", 0, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a malformed run id answered %d, want 404", resp.StatusCode)
	}
	if r := bob.get(fmt.Sprintf("/runs/%d/raw", run.ID)); r.status != http.StatusNotFound {
		t.Errorf("another user's raw response answered %d, want 404", r.status)
	}
	r := bob.post(fmt.Sprintf("/runs/%d/cancel", run.ID), "application/json", nil, http.Header{"X-Csrf-Token": {bob.token()}, "Accept": {"application/json"}})
	if r.status != http.StatusNotFound {
		t.Errorf("cancelling another user's run answered %d, want 404", r.status)
	}
	r = admin.post(fmt.Sprintf("/runs/%d/cancel", run.ID), "application/json", nil, http.Header{"X-Csrf-Token": {admin.token()}, "Accept": {"application/json"}})
	if r.status != http.StatusConflict {
		t.Errorf("cancelling a finished run answered %d, want 409", r.status)
	}
	_ = s
}

func TestRunNeedsTheCSRFToken(t *testing.T) {
	s, admin := newTeam(t)
	r := admin.post("/runs", "application/json", strings.NewReader(simRun), http.Header{"Accept": {"application/json"}})
	if r.status != http.StatusForbidden {
		t.Fatalf("POST /runs without the token answered %d, want 403", r.status)
	}
	if _, err := s.store.Run(context.Background(), s.userID(t, "admin"), 1); err == nil {
		t.Error("a run was stored without the CSRF token")
	}
}

func TestCancelOverHTTPStopsTheRun(t *testing.T) {
	s, admin := newTeam(t)
	_, run := admin.postRun(`{"provider":"sim","endpoint":"chat","body":{"model":"sim-slow","messages":[{"role":"user","content":"A long tale"}]}}`)
	// Read until the first words, then stop.
	_, first := admin.readEvents(run.Events, 0, func(e sseEvent) bool { return e.event == "delta" })
	if len(first) == 0 {
		t.Fatal("no delta from sim-slow")
	}
	r := admin.post(fmt.Sprintf("/runs/%d/cancel", run.ID), "application/json", nil, http.Header{"X-Csrf-Token": {admin.token()}, "Accept": {"application/json"}})
	if r.status != http.StatusAccepted {
		t.Fatalf("cancel answered %d %s", r.status, r.body)
	}
	_, rest := admin.readEvents(run.Events, 0, nil)
	if last := rest[len(rest)-1]; last.event != "done" || !strings.Contains(last.data, `"status":"cancelled"`) {
		t.Errorf("last event %+v, want done/cancelled", last)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		stored, _ := s.store.Run(context.Background(), s.userID(t, "admin"), run.ID)
		if stored.Status == db.RunCancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stored status %q, want cancelled", stored.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestViewCodeNeverHoldsTheKey(t *testing.T) {
	const key = "csk-secret-key-1234567890abcdef"
	s, admin := newTeam(t, withEnv("CEREBRAS_API_KEY", key))
	_ = s
	r := admin.post("/playground/code", "application/json",
		strings.NewReader(`{"provider":"cerebras","endpoint":"chat","body":{"model":"gpt-oss-120b","messages":[{"role":"user","content":"hi"}],"temperature":0.2}}`),
		http.Header{"X-Csrf-Token": {admin.token()}, "Accept": {"application/json"}})
	if r.status != http.StatusOK {
		t.Fatalf("code answered %d %s", r.status, r.body)
	}
	if strings.Contains(r.body, key) || strings.Contains(r.body, "7890abcdef") {
		t.Fatal("the code snippets contain the key")
	}
	var out struct {
		Snippets []struct{ Lang, Code string }
	}
	json.Unmarshal([]byte(r.body), &out)
	langs := map[string]string{}
	for _, sn := range out.Snippets {
		langs[sn.Lang] = sn.Code
	}
	for _, l := range []string{"curl", "python", "javascript", "go"} {
		if !strings.Contains(langs[l], "CEREBRAS_API_KEY") || !strings.Contains(langs[l], "https://api.cerebras.ai") {
			t.Errorf("%s snippet lacks the env var or URL:\n%s", l, langs[l])
		}
	}
}

// The curl command of View code sends the very body a run sends: the same
// request, from the playground to the provider, with the user's text
// quoted safely for the shell.
func TestViewCodeCurlSendsWhatARunSends(t *testing.T) {
	const key = "csk-secret-key-1234567890abcdef"
	var mu sync.Mutex
	var sent []byte
	var path string
	sim := sim.NewHandler(sim.Options{TokensPerSecond: sim.NoPacing})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.HasSuffix(r.URL.Path, "/completions") {
			mu.Lock()
			sent, path = body, r.URL.Path
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)
	_, admin := newTeam(t, withEnv("CEREBRAS_API_KEY", key), withEnv("CEREBRAS_BASE_URL", upstream.URL))
	spec := `{"provider":"cerebras","endpoint":"chat","body":{"model":"gpt-oss-120b","messages":[{"role":"system","content":"Don't guess."},{"role":"user","content":"It's $HOME and ` + "`date`" + `, isn't it?"}],"temperature":0.2,"max_completion_tokens":30,"seed":7}}`
	r := admin.post("/playground/code", "application/json", strings.NewReader(spec),
		http.Header{"X-Csrf-Token": {admin.token()}, "Accept": {"application/json"}})
	var out struct {
		Snippets []struct{ Lang, Code string }
	}
	if err := json.Unmarshal([]byte(r.body), &out); r.status != http.StatusOK || err != nil {
		t.Fatalf("code answered %d %s", r.status, r.body)
	}
	var curl string
	for _, sn := range out.Snippets {
		if sn.Lang == "curl" {
			curl = sn.Code
		}
	}
	_, cmd, ok := strings.Cut(curl, "curl ")
	url, _, _ := strings.Cut(strings.TrimPrefix(cmd, "-N "), " ")
	_, quoted, ok2 := strings.Cut(curl, "\n  -d ")
	if !ok || !ok2 || !strings.HasPrefix(quoted, "'") || !strings.HasSuffix(quoted, "'") {
		t.Fatalf("the curl snippet is not a curl command with a quoted -d body:\n%s", curl)
	}
	// The shell's reading of a single-quoted word.
	curlBody := strings.ReplaceAll(quoted[1:len(quoted)-1], `'\''`, `'`)

	if r, run := admin.postRun(spec); r.status != http.StatusCreated {
		t.Fatalf("POST /runs: %d %s", r.status, r.body)
	} else {
		admin.readEvents(run.Events, 0, nil)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "'" + upstream.URL + path + "'"; url != want {
		t.Errorf("curl calls %s; the run called %s", url, want)
	}
	var got, want any
	if err := json.Unmarshal([]byte(curlBody), &got); err != nil {
		t.Fatalf("curl's body is not JSON: %v\n%s", err, curlBody)
	}
	if err := json.Unmarshal(sent, &want); err != nil {
		t.Fatalf("the run sent %q: %v", sent, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("curl sends\n%s\nthe run sent\n%s", curlBody, sent)
	}
}

// canonical is a stream as a list of "id event data" lines with every
// run of consecutive text events (delta, reasoning, and the texts events
// that merge them) made one line per choice, pane and kind, its texts
// joined, sorted, with the run's last id. Knobs merges a live stream's
// text events by when they arrive, so two readings of one run compare
// equal only in this form.
func canonical(events []sseEvent) []string {
	var out []string
	texts := map[string]*strings.Builder{}
	lastID := 0
	flush := func() {
		keys := make([]string, 0, len(texts))
		for k := range texts {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, fmt.Sprintf("%d %s %q", lastID, k, texts[k].String()))
		}
		clear(texts)
	}
	type part struct {
		Event  string
		Pane   *int
		Choice int
		Text   string
	}
	add := func(p part) {
		k := fmt.Sprintf("%s choice=%d", p.Event, p.Choice)
		if p.Pane != nil {
			k += fmt.Sprintf(" pane=%d", *p.Pane)
		}
		if texts[k] == nil {
			texts[k] = &strings.Builder{}
		}
		texts[k].WriteString(p.Text)
	}
	for _, e := range events {
		switch e.event {
		case "delta", "reasoning":
			var p part
			if json.Unmarshal([]byte(e.data), &p) == nil {
				p.Event = e.event
				add(p)
				lastID = e.id
				continue
			}
		case "texts":
			var d struct{ Parts []part }
			if json.Unmarshal([]byte(e.data), &d) == nil {
				for _, p := range d.Parts {
					add(p)
				}
				lastID = e.id
				continue
			}
		}
		flush()
		out = append(out, fmt.Sprintf("%d %s %s", e.id, e.event, e.data))
	}
	flush()
	return out
}

// parseSSE reads SSE text into its events.
func parseSSE(text string) []sseEvent {
	var out []sseEvent
	for _, block := range strings.Split(text, "\n\n") {
		var e sseEvent
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "id: "):
				e.id, _ = strconv.Atoi(line[4:])
			case strings.HasPrefix(line, "event: "):
				e.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				e.data = line[6:]
			}
		}
		if e.event != "" {
			out = append(out, e)
		}
	}
	return out
}
