package web_test

// Runs through the REST API over real HTTP with a bearer token: started
// (at once or waited for), streamed, read, listed with the filters of
// History, cancelled and deleted; refused for bad input, another user's
// runs and a read token.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"knobs/db"
)

// apiRun is GET /api/v1/runs/{id}'s answer.
type apiRun struct {
	ID       int64  `json:"id"`
	Status   string `json:"status"`
	Provider string `json:"provider"`
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	Request  *struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Body    map[string]any    `json:"body"`
	} `json:"request"`
	Choices []struct {
		Index        int    `json:"index"`
		Text         string `json:"text"`
		Reasoning    string `json:"reasoning"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int  `json:"prompt_tokens"`
		CompletionTokens int  `json:"completion_tokens"`
		Estimated        bool `json:"estimated"`
	} `json:"usage"`
	Metrics struct {
		TTFTMs       float64 `json:"ttft_ms"`
		TokensPerSec float64 `json:"tokens_per_s"`
		TotalMs      float64 `json:"total_ms"`
	} `json:"metrics"`
	Variables map[string]string `json:"variables"`
	Error     any               `json:"error"`
}

// text is the run's first answer.
func (r apiRun) text() string {
	if len(r.Choices) == 0 {
		return ""
	}
	return r.Choices[0].Text
}

type apiRunStarted struct {
	ID     int64  `json:"id"`
	Events string `json:"events"`
}

type apiRunPage struct {
	Items []struct {
		ID       int64   `json:"id"`
		Status   string  `json:"status"`
		Provider string  `json:"provider"`
		Model    string  `json:"model"`
		Preview  string  `json:"preview"`
		Tokens   int     `json:"tokens"`
		Cost     float64 `json:"cost"`
	} `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// simSpec is a run of the simulator's model asking prompt.
func simSpec(model, prompt string, wait bool) map[string]any {
	return map[string]any{"provider": "sim", "endpoint": "chat", "wait": wait, "body": map[string]any{
		"model": model, "messages": []any{map[string]any{"role": "user", "content": prompt}}, "max_completion_tokens": 60}}
}

// getRun is GET /api/v1/runs/{id}, which must answer 200.
func (s *server) getRun(t testing.TB, token string, id int64) apiRun {
	t.Helper()
	a := s.apiCall(t, "GET", "/api/v1/runs/"+strconv.FormatInt(id, 10), token, nil)
	if a.status != http.StatusOK {
		t.Fatalf("GET run %d: %d %s", id, a.status, a.body)
	}
	var r apiRun
	a.json(t, &r)
	return r
}

// startRun is POST /api/v1/runs without wait, which must answer 201.
func (s *server) startRun(t testing.TB, token string, spec map[string]any) apiRunStarted {
	t.Helper()
	a := s.apiCall(t, "POST", "/api/v1/runs", token, spec)
	if a.status != http.StatusCreated {
		t.Fatalf("POST /api/v1/runs: %d %s", a.status, a.body)
	}
	var out apiRunStarted
	a.json(t, &out)
	if out.ID == 0 || out.Events != fmt.Sprintf("/api/v1/runs/%d/events", out.ID) {
		t.Fatalf("POST /api/v1/runs answered %s", a.body)
	}
	return out
}

// apiEvents reads path's event stream with token, to its end or until
// stop says so; the status when it is not a stream.
func (s *server) apiEvents(t testing.TB, path, token string, stop func(sseEvent) bool) (int, []sseEvent) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.url+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("%s: Content-Type %q", path, ct)
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
					return resp.StatusCode, out
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
	return resp.StatusCode, out
}

func TestAPIRunWaitedForComesBackDone(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token

	spec := simSpec("sim-fast", "Tell me about {{topic}}", true)
	spec["variables"] = map[string]string{"topic": "glaciers"}
	a := srv.apiCall(t, "POST", "/api/v1/runs", tok, spec)
	if a.status != http.StatusCreated {
		t.Fatalf("POST wait: %d %s", a.status, a.body)
	}
	var run apiRun
	a.json(t, &run)
	if run.Status != db.RunDone || run.Provider != "sim" || run.Endpoint != "chat" || run.Model != "sim-fast" {
		t.Fatalf("waited run: %s", a.body)
	}
	if run.text() == "" || run.Choices[0].FinishReason == "" {
		t.Errorf("waited run has no answer: %s", a.body)
	}
	if run.Metrics.TTFTMs <= 0 || run.Metrics.TotalMs <= 0 || run.Metrics.TokensPerSec <= 0 || run.Usage == nil || run.Usage.CompletionTokens == 0 {
		t.Errorf("waited run has no metrics or usage: %s", a.body)
	}
	if run.Variables["topic"] != "glaciers" || run.Request == nil || !strings.Contains(fmt.Sprint(run.Request.Body["messages"]), "Tell me about glaciers") {
		t.Errorf("waited run: variables %v, request %+v", run.Variables, run.Request)
	}
	// It is stored as answered: GET gives the same.
	if got := srv.getRun(t, tok, run.ID); got.Status != db.RunDone || got.text() != run.text() {
		t.Errorf("GET after wait: %+v, want the waited answer %q", got, run.text())
	}
	// The simulator's own text, stored as it was answered.
	if !strings.Contains(run.text(), "simulator") {
		t.Errorf("answer %q is not the simulator's", run.text())
	}
	stored, err := srv.store.Run(context.Background(), srv.userID(t, "admin"), run.ID)
	want, _ := json.Marshal(run.text())
	if err != nil || stored.Status != db.RunDone || !strings.Contains(stored.Result, string(want)) {
		t.Errorf("stored: %v %q %.200s", err, stored.Status, stored.Result)
	}
}

func TestAPIRunNeverShowsAKey(t *testing.T) {
	t.Parallel()
	const key = "csk-secret-key-1234567890abcdef"
	srv, admin := newTeam(t, withEnv("CEREBRAS_API_KEY", key))
	tok := admin.makeToken("ci", "write", nil).Token
	// The simulator takes no key: store a run's request as it was sent
	// and check the API answer for the configured secret anyway.
	a := srv.apiCall(t, "POST", "/api/v1/runs", tok, simSpec("sim-fast", "hello", true))
	if a.status != http.StatusCreated || strings.Contains(a.body, key) {
		t.Fatalf("POST: %d, key shown: %v", a.status, strings.Contains(a.body, key))
	}
	var run apiRun
	a.json(t, &run)
	g := srv.apiCall(t, "GET", "/api/v1/runs/"+strconv.FormatInt(run.ID, 10), tok, nil)
	if strings.Contains(g.body, key) {
		t.Error("GET shows the key")
	}
	for name, v := range run.Request.Headers {
		if strings.EqualFold(name, "Authorization") && !strings.Contains(v, "REDACTED") && !strings.Contains(v, "…") && !strings.Contains(v, "*") {
			t.Errorf("Authorization header %q is not redacted", v)
		}
	}
}

func TestAPIRunStreamsToDone(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	started := srv.startRun(t, tok, simSpec("sim-fast", "Tell me about rivers", false))

	status, events := srv.apiEvents(t, started.Events, tok, nil)
	if status != http.StatusOK || len(events) < 3 || events[0].event != "request" {
		t.Fatalf("events: %d %+v", status, events)
	}
	var text strings.Builder
	sawDone := false
	for _, e := range events {
		switch e.event {
		case "delta":
			var d struct {
				Choice int    `json:"choice"`
				Text   string `json:"text"`
			}
			if err := json.Unmarshal([]byte(e.data), &d); err == nil && d.Choice == 0 {
				text.WriteString(d.Text)
			}
		case "done":
			sawDone = true
			if !strings.Contains(e.data, `"status":"done"`) {
				t.Errorf("done: %s", e.data)
			}
		}
	}
	if !sawDone {
		t.Fatalf("no done in %+v", events)
	}
	run := srv.getRun(t, tok, started.ID)
	if run.Status != db.RunDone || !strings.Contains(run.text(), "simulator") || run.text() != text.String() {
		t.Errorf("GET text %q, streamed %q", run.text(), text.String())
	}
	// Resume after the first event (the request): the rest, to done,
	// with the whole answer.
	_, rest := srv.apiEvents(t, started.Events+"?after=1", tok, nil)
	var resumed strings.Builder
	for _, e := range rest {
		if e.id <= 1 {
			t.Errorf("resume after 1 sent event %d", e.id)
		}
		if e.event == "delta" {
			var d struct{ Text string }
			json.Unmarshal([]byte(e.data), &d)
			resumed.WriteString(d.Text)
		}
	}
	if len(rest) < 2 || rest[len(rest)-2].event != "done" || resumed.String() != run.text() {
		t.Errorf("resume after 1: %+v, want the answer %q to done", rest, run.text())
	}
}

func TestAPIRunBadInputStoresNothing(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	for _, tt := range []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"temperature out of range", map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{"model": "sim-fast", "temperature": 7, "messages": []any{map[string]any{"role": "user", "content": "x"}}}}, 422, "temperature"},
		{"unknown provider", map[string]any{"provider": "nope", "endpoint": "chat", "body": map[string]any{"model": "m", "messages": []any{}}}, 422, "provider"},
		{"unknown endpoint", map[string]any{"provider": "sim", "endpoint": "embed", "body": map[string]any{"model": "m"}}, 422, "endpoint"},
		{"a variable without a value", map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "{{who}}"}}}}, 422, "variables.who"},
		{"no key for cerebras", map[string]any{"provider": "cerebras", "endpoint": "chat", "body": map[string]any{"model": "gpt-oss-120b", "messages": []any{map[string]any{"role": "user", "content": "x"}}}}, 422, "provider"},
		{"provider of the wrong type", `{"provider":7,"endpoint":"chat","body":{}}`, 422, "provider"},
		{"wait of the wrong type", `{"provider":"sim","endpoint":"chat","body":{},"wait":"yes"}`, 422, "wait"},
		{"unknown field", `{"provider":"sim","endpoint":"chat","body":{},"extra":1}`, 422, "extra"},
		{"malformed JSON", `{"provider":"sim",`, 400, ""},
	} {
		a := srv.apiCall(t, "POST", "/api/v1/runs", tok, tt.body)
		if tt.field == "" {
			wantAPIError(t, tt.name, a, tt.status)
		} else {
			wantAPIError(t, tt.name, a, tt.status, tt.field)
		}
	}
	list := srv.apiCall(t, "GET", "/api/v1/runs", tok, nil)
	var page apiRunPage
	list.json(t, &page)
	if len(page.Items) != 0 {
		t.Errorf("refused runs were stored: %s", list.body)
	}
	if _, err := srv.store.Run(context.Background(), srv.userID(t, "admin"), 1); err == nil {
		t.Error("a refused spec was stored as a run")
	}
	wantAPIError(t, "bad cursor", srv.apiCall(t, "GET", "/api/v1/runs?cursor=nope", tok, nil), 422, "cursor")
	wantAPIError(t, "bad day", srv.apiCall(t, "GET", "/api/v1/runs?from=yesterday", tok, nil), 422, "from")
	wantAPIError(t, "id not a number", srv.apiCall(t, "GET", "/api/v1/runs/abc", tok, nil), 422, "id")
	wantAPIError(t, "unknown run", srv.apiCall(t, "GET", "/api/v1/runs/99999", tok, nil), 404)
}

func TestAPIRunsOfAnotherUserAreNotFound(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	bob := admin.addMember("bob")
	adminTok := admin.makeToken("ci", "write", nil).Token
	bobTok := bob.makeToken("bob", "write", nil).Token
	a := srv.apiCall(t, "POST", "/api/v1/runs", adminTok, simSpec("sim-fast", "mine", true))
	var run apiRun
	a.json(t, &run)
	path := "/api/v1/runs/" + strconv.FormatInt(run.ID, 10)

	wantAPIError(t, "GET", srv.apiCall(t, "GET", path, bobTok, nil), http.StatusNotFound)
	wantAPIError(t, "cancel", srv.apiCall(t, "POST", path+"/cancel", bobTok, nil), http.StatusNotFound)
	wantAPIError(t, "delete", srv.apiCall(t, "DELETE", path, bobTok, nil), http.StatusNotFound)
	if status, _ := srv.apiEvents(t, path+"/events", bobTok, nil); status != http.StatusNotFound {
		t.Errorf("events of another user's run: %d, want 404", status)
	}
	var page apiRunPage
	srv.apiCall(t, "GET", "/api/v1/runs", bobTok, nil).json(t, &page)
	if len(page.Items) != 0 {
		t.Errorf("bob lists admin's runs: %+v", page.Items)
	}
	// Still there for its owner.
	if got := srv.getRun(t, adminTok, run.ID); got.Status != db.RunDone {
		t.Errorf("after bob's attempts: %+v", got)
	}
}

func TestAPIRunsListFiltersAndPages(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	var ids []int64
	for _, p := range []string{"glaciers one", "volcanoes", "glaciers two", "glaciers three"} {
		a := srv.apiCall(t, "POST", "/api/v1/runs", tok, simSpec("sim-fast", "Tell me about "+p, true))
		var r apiRun
		a.json(t, &r)
		ids = append(ids, r.ID)
	}
	// q matches the prompt, newest first, two a page.
	var got []int64
	cursor := ""
	pages := 0
	for {
		path := "/api/v1/runs?q=glaciers&limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		a := srv.apiCall(t, "GET", path, tok, nil)
		if a.status != http.StatusOK {
			t.Fatalf("list: %d %s", a.status, a.body)
		}
		var page apiRunPage
		a.json(t, &page)
		pages++
		for _, it := range page.Items {
			got = append(got, it.ID)
			if it.Status != db.RunDone || it.Provider != "sim" || it.Model != "sim-fast" || !strings.Contains(it.Preview, "glaciers") || it.Tokens == 0 {
				t.Errorf("item %+v", it)
			}
		}
		if page.NextCursor == nil {
			break
		}
		if len(page.Items) != 2 || pages > 3 {
			t.Fatalf("page %d: %+v", pages, page)
		}
		cursor = *page.NextCursor
	}
	if want := []int64{ids[3], ids[2], ids[0]}; fmt.Sprint(got) != fmt.Sprint(want) || pages != 2 {
		t.Errorf("q=glaciers by 2: %v over %d pages, want %v over 2", got, pages, want)
	}
	// The other filters narrow as /history's do.
	for _, tt := range []struct {
		query string
		want  int
	}{
		{"provider=sim", 4}, {"provider=cerebras", 0}, {"model=sim-fast", 4}, {"model=sim-slow", 0},
		{"status=done", 4}, {"status=error", 0}, {"starred=true", 0}, {"preset=1", 0},
		{"from=2000-01-01", 4}, {"to=2000-01-01", 0},
	} {
		var page apiRunPage
		a := srv.apiCall(t, "GET", "/api/v1/runs?"+tt.query, tok, nil)
		a.json(t, &page)
		if a.status != http.StatusOK || len(page.Items) != tt.want {
			t.Errorf("%s: %d, %d items, want %d: %s", tt.query, a.status, len(page.Items), tt.want, a.body)
		}
	}
}

func TestAPIRunCancelAndDelete(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token

	// A live slow run: read up to its first words, then cancel it.
	started := srv.startRun(t, tok, simSpec("sim-slow", "A long tale", false))
	_, first := srv.apiEvents(t, started.Events, tok, func(e sseEvent) bool { return e.event == "delta" })
	if len(first) == 0 || first[len(first)-1].event != "delta" {
		t.Fatalf("no delta from sim-slow: %+v", first)
	}
	path := "/api/v1/runs/" + strconv.FormatInt(started.ID, 10)
	a := srv.apiCall(t, "POST", path+"/cancel", tok, nil)
	if a.status != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", a.status, a.body)
	}
	var cancelled apiRun
	a.json(t, &cancelled)
	if cancelled.Status != db.RunCancelled {
		t.Errorf("cancel answered %s, want the run cancelled", a.body)
	}
	if got := srv.getRun(t, tok, started.ID); got.Status != db.RunCancelled {
		t.Errorf("GET after cancel: status %q", got.Status)
	}
	stored, err := srv.store.Run(context.Background(), srv.userID(t, "admin"), started.ID)
	if err != nil || stored.Status != db.RunCancelled {
		t.Errorf("stored after cancel: %v %q", err, stored.Status)
	}
	wantAPIError(t, "cancel again", srv.apiCall(t, "POST", path+"/cancel", tok, nil), http.StatusConflict)

	// A finished run cannot be cancelled.
	var done apiRun
	srv.apiCall(t, "POST", "/api/v1/runs", tok, simSpec("sim-fast", "quick", true)).json(t, &done)
	wantAPIError(t, "cancel after done", srv.apiCall(t, "POST", "/api/v1/runs/"+strconv.FormatInt(done.ID, 10)+"/cancel", tok, nil), http.StatusConflict)

	// A read token reads, and changes nothing.
	read := admin.makeToken("dash", "read", nil).Token
	srv.getRun(t, read, started.ID)
	wantAPIError(t, "read token POST", srv.apiCall(t, "POST", "/api/v1/runs", read, simSpec("sim-fast", "x", true)), http.StatusForbidden)
	wantAPIError(t, "read token cancel", srv.apiCall(t, "POST", path+"/cancel", read, nil), http.StatusForbidden)
	wantAPIError(t, "read token delete", srv.apiCall(t, "DELETE", path, read, nil), http.StatusForbidden)

	// Delete, then it is gone everywhere.
	if a := srv.apiCall(t, "DELETE", path, tok, nil); a.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", a.status, a.body)
	}
	wantAPIError(t, "GET after delete", srv.apiCall(t, "GET", path, tok, nil), http.StatusNotFound)
	// Not even its events, which the runner kept in memory for a while.
	wantAPIError(t, "events after delete", srv.apiCall(t, "GET", path+"/events", tok, nil), http.StatusNotFound)
	wantAPIError(t, "delete again", srv.apiCall(t, "DELETE", path, tok, nil), http.StatusNotFound)
}
