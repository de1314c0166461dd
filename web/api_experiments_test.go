package web_test

// Experiments through the REST API over real HTTP: a preset and a setup
// of its own run over a dataset's rows on the simulator, graded as each
// cell ends, streamed over one SSE connection, summed up per variant;
// judges, rate limits, ratings, cancel and bad input.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
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
	"knobs/experiment"
	"knobs/llm/sim"
)

func withExperiments(o experiment.Options) serverOption {
	return func(s *serverSetup) { s.experiments = o }
}

// rivers makes a dataset of n rows of alice's... of user's: topic and
// expected.
func (s *server) makeDataset(t testing.TB, user string, n int) db.Dataset {
	t.Helper()
	rows := make([]db.DatasetRow, n)
	for i := range rows {
		exp := fmt.Sprintf("answer %d", i)
		rows[i] = db.DatasetRow{Vars: map[string]string{"topic": fmt.Sprintf("river %d", i)}, Expected: &exp}
	}
	d, err := s.store.CreateDataset(context.Background(), db.Dataset{OwnerID: s.userID(t, user), Name: "Rivers", Columns: []string{"topic"}}, rows)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// apiExperiment is GET /api/v1/experiments/{id}'s answer, the parts the
// tests read.
type apiExperiment struct {
	ID       int64  `json:"id"`
	Status   string `json:"status"`
	Error    string `json:"error"`
	Events   string `json:"events"`
	Variants []struct {
		Name     string `json:"name"`
		Provider string `json:"provider"`
		Model    string `json:"model"`
		Preset   *int64 `json:"preset"`
	} `json:"variants"`
	Progress struct {
		Done   int `json:"done"`
		Total  int `json:"total"`
		Failed int `json:"failed"`
	} `json:"progress"`
	Aggregates []struct {
		Variant      int      `json:"variant"`
		Cells        int      `json:"cells"`
		Done         int      `json:"done"`
		Errors       int      `json:"errors"`
		P50LatencyMs *float64 `json:"p50_latency_ms"`
		Tokens       int      `json:"tokens"`
		RatedUp      int      `json:"rated_up"`
		Graders      []struct {
			Graded    int      `json:"graded"`
			Passed    int      `json:"passed"`
			Errors    int      `json:"errors"`
			PassRate  *float64 `json:"pass_rate"`
			Rated     int      `json:"rated"`
			Agreement *float64 `json:"agreement"`
		} `json:"graders"`
	} `json:"aggregates"`
}

type apiCell struct {
	ID       int64             `json:"id"`
	Row      int               `json:"row"`
	Variant  int               `json:"variant"`
	Repeat   int               `json:"repeat"`
	Status   string            `json:"status"`
	RunID    *int64            `json:"run_id"`
	Vars     map[string]string `json:"vars"`
	Output   string            `json:"output"`
	Attempts int               `json:"attempts"`
	Error    string            `json:"error"`
	Grades   []struct {
		Grader int     `json:"grader"`
		Pass   bool    `json:"pass"`
		Score  float64 `json:"score"`
		Reason string  `json:"reason"`
		Error  string  `json:"error"`
		Judge  int64   `json:"judge_run_id"`
	} `json:"grades"`
	Ratings []struct {
		User   string `json:"user"`
		Thumbs *bool  `json:"thumbs"`
	} `json:"ratings"`
}

// followExperiment reads an experiment's events until end and answers
// the cell events' cell ids and the end's status.
func (s *server) followExperiment(t testing.TB, token, path string) (cells []int64, status string) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("events: %d %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var e experiment.Event
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e); err != nil {
				t.Fatalf("event %s: %v", event, err)
			}
			switch e.Kind {
			case "cell":
				cells = append(cells, e.Cell.ID)
				if e.Progress == nil || e.Progress.Done < len(cells) {
					t.Errorf("cell event %d with progress %+v", len(cells), e.Progress)
				}
			case "end":
				return cells, e.Status
			}
		}
	}
	t.Fatalf("the events ended without an end event: %v", sc.Err())
	return nil, ""
}

func (s *server) results(t testing.TB, token string, id int64) []apiCell {
	t.Helper()
	var all []apiCell
	cursor := ""
	for range 100 {
		a := s.apiCall(t, "GET", fmt.Sprintf("/api/v1/experiments/%d/results?limit=4&cursor=%s", id, cursor), token, nil)
		if a.status != http.StatusOK {
			t.Fatalf("results: %d %s", a.status, a.body)
		}
		var page struct {
			Items      []apiCell `json:"items"`
			NextCursor *string   `json:"next_cursor"`
		}
		a.json(t, &page)
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			return all
		}
		cursor = *page.NextCursor
	}
	t.Fatal("results never ended")
	return nil
}

func (s *server) getExperiment(t testing.TB, token string, id int64) apiExperiment {
	t.Helper()
	a := s.apiCall(t, "GET", "/api/v1/experiments/"+strconv.FormatInt(id, 10), token, nil)
	if a.status != http.StatusOK {
		t.Fatalf("experiment %d: %d %s", id, a.status, a.body)
	}
	var e apiExperiment
	a.json(t, &e)
	return e
}

func TestAPIExperimentRunsGradesAndSumsUp(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 3)
	srv.createAPIPreset(t, tok, presetFile("Explainer", "Tell me about {{topic}}", 0.2))

	a := srv.apiCall(t, "POST", "/api/v1/experiments", tok, map[string]any{
		"name": "explainer vs raw", "dataset": ds.ID, "concurrency": 2,
		"variants": []any{
			map[string]any{"preset": "Explainer"},
			map[string]any{"name": "raw", "provider": "sim", "endpoint": "chat", "body": map[string]any{
				"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "Explain {{topic}} briefly"}}, "max_tokens": 40}},
		},
		"graders": []any{
			map[string]any{"type": "length", "min": 1, "unit": "chars"},
			map[string]any{"type": "json"},
			map[string]any{"type": "exact", "value": "{{expected}}"},
			map[string]any{"type": "latency", "max_ms": 600000},
		},
	})
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	var e apiExperiment
	a.json(t, &e)
	if e.Status != "running" || e.Progress.Total != 6 || len(e.Variants) != 2 || e.Variants[0].Preset == nil ||
		e.Variants[0].Name != "Explainer v1" || e.Variants[1].Name != "raw" || e.Variants[1].Model != "sim-fast" {
		t.Fatalf("created: %s", a.body)
	}
	seen, status := srv.followExperiment(t, tok, e.Events)
	if status != "done" || len(seen) != 6 {
		t.Fatalf("events: %d cells, end %q", len(seen), status)
	}
	e = srv.getExperiment(t, tok, e.ID)
	if e.Status != "done" || e.Progress.Done != 6 || e.Progress.Failed != 0 || len(e.Aggregates) != 2 {
		t.Fatalf("after the end: %+v", e)
	}
	for _, ag := range e.Aggregates {
		g := ag.Graders
		if ag.Cells != 3 || ag.Done != 3 || ag.P50LatencyMs == nil || ag.Tokens == 0 || len(g) != 4 ||
			g[0].Passed != 3 || *g[0].PassRate != 1 || // length: every answer has text
			g[1].Passed != 0 || g[1].Graded != 3 || // json: prose is not JSON
			g[2].Passed != 0 || // exact: the simulator does not say "answer 0"
			g[3].Passed != 3 {
			t.Errorf("variant %d: %+v", ag.Variant, ag)
		}
	}

	cells := srv.results(t, tok, e.ID)
	if len(cells) != 6 {
		t.Fatalf("%d cells", len(cells))
	}
	runs := map[int64]bool{}
	for i, c := range cells {
		if c.Row != i/2 || c.Variant != i%2 || c.Status != "done" || c.Output == "" || c.RunID == nil || c.Attempts != 1 ||
			c.Vars["topic"] != fmt.Sprintf("river %d", c.Row) || len(c.Grades) != 4 || c.Grades[1].Pass || c.Grades[1].Reason == "" {
			t.Errorf("cell %d: %+v", i, c)
			continue
		}
		runs[*c.RunID] = true
		// Every cell is a run in history, filled with its row and
		// naming its experiment.
		r, err := srv.store.Run(context.Background(), srv.userID(t, "admin"), *c.RunID)
		if err != nil || r.ExperimentID != e.ID || !strings.Contains(r.Variables, fmt.Sprintf("river %d", c.Row)) {
			t.Errorf("cell %d's run: %+v %v", i, r, err)
		}
	}
	if len(runs) != 6 {
		t.Errorf("%d distinct runs for 6 cells", len(runs))
	}
	// History finds them by experiment, and hides them when asked.
	var listed apiRunPage
	srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/runs?experiment=%d", e.ID), tok, nil).json(t, &listed)
	if len(listed.Items) != 6 {
		t.Errorf("runs of the experiment: %d", len(listed.Items))
	}
	srv.startRun(t, tok, simSpec("sim-fast", "By hand", false))
	srv.apiCall(t, "GET", "/api/v1/runs?hide_experiments=true", tok, nil).json(t, &listed)
	if len(listed.Items) != 1 || !strings.Contains(listed.Items[0].Preview, "By hand") {
		t.Errorf("runs without the experiment's: %+v", listed.Items)
	}

	// Ratings are kept per user and counted.
	bob := admin.addMember("bob")
	_ = bob
	up := true
	rate := func(token string, cell int64, body any) apiAnswer {
		return srv.apiCall(t, "PUT", fmt.Sprintf("/api/v1/experiments/%d/cells/%d/rating", e.ID, cell), token, body)
	}
	if r := rate(tok, cells[0].ID, map[string]any{"thumbs": up, "note": "clear"}); r.status != http.StatusNoContent {
		t.Errorf("rate: %d %s", r.status, r.body)
	}
	wantAPIError(t, "an empty rating", rate(tok, cells[0].ID, map[string]any{}), http.StatusUnprocessableEntity, "thumbs")
	wantAPIError(t, "six stars", rate(tok, cells[0].ID, map[string]any{"stars": 6}), http.StatusUnprocessableEntity, "stars")
	wantAPIError(t, "an unknown cell", rate(tok, 999999, map[string]any{"stars": 3}), http.StatusNotFound)
	cells = srv.results(t, tok, e.ID)
	if len(cells[0].Ratings) != 1 || cells[0].Ratings[0].User != "admin" || !*cells[0].Ratings[0].Thumbs {
		t.Errorf("ratings: %+v", cells[0].Ratings)
	}
	if e = srv.getExperiment(t, tok, e.ID); e.Aggregates[0].RatedUp != 1 {
		t.Errorf("rated up: %+v", e.Aggregates[0])
	}
	// People and graders compared: thumbs up agrees with the length
	// grader's pass and disagrees with the JSON grader's fail.
	if g := e.Aggregates[0].Graders; g[0].Rated != 1 || *g[0].Agreement != 1 || g[1].Rated != 1 || *g[1].Agreement != 0 || e.Aggregates[1].Graders[0].Agreement != nil {
		t.Errorf("agreement: %+v", e.Aggregates)
	}
	// A private experiment is its owner's alone.
	bobs := bob.makeToken("bob's", "write", nil).Token
	wantAPIError(t, "bob reads the admin's experiment", srv.apiCall(t, "GET", "/api/v1/experiments/"+strconv.FormatInt(e.ID, 10), bobs, nil), http.StatusNotFound)
	wantAPIError(t, "bob rates in it", rate(bobs, cells[0].ID, map[string]any{"stars": 1}), http.StatusNotFound)
	// An ended experiment's events answer its end at once.
	if _, status := srv.followExperiment(t, tok, e.Events); status != "done" {
		t.Errorf("events of an ended experiment: %q", status)
	}
}

func TestAPIExperimentBadInputStartsNothing(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 2)
	raw := func(content string) map[string]any {
		return map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": content}}}}
	}
	bad := func(what string, body map[string]any, status int, fields ...string) {
		t.Helper()
		if body["name"] == nil {
			body["name"] = "x"
		}
		if body["dataset"] == nil {
			body["dataset"] = ds.ID
		}
		if body["variants"] == nil {
			body["variants"] = []any{raw("About {{topic}}")}
		}
		wantAPIError(t, what, srv.apiCall(t, "POST", "/api/v1/experiments", tok, body), status, fields...)
	}
	bad("a variable the rows lack", map[string]any{"variants": []any{raw("About {{topic}} in {{city}}")}}, http.StatusUnprocessableEntity, "variants[0].variables")
	bad("an unknown dataset", map[string]any{"dataset": 999999}, http.StatusUnprocessableEntity, "dataset")
	bad("an unknown dataset version", map[string]any{"dataset_version": 7}, http.StatusUnprocessableEntity, "dataset_version")
	bad("an unknown preset", map[string]any{"variants": []any{map[string]any{"preset": "Nothing"}}}, http.StatusUnprocessableEntity, "variants[0].preset")
	bad("temperature 9", map[string]any{"variants": []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
		"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "{{topic}}"}}, "temperature": 9}}}},
		http.StatusUnprocessableEntity, "variants[0].temperature")
	bad("an unknown grader", map[string]any{"graders": []any{map[string]any{"type": "vibes"}}}, http.StatusUnprocessableEntity, "graders[0].type")
	bad("a regex grader without a pattern", map[string]any{"graders": []any{map[string]any{"type": "regex"}}}, http.StatusUnprocessableEntity, "graders[0].pattern")
	bad("a judge of an unknown preset", map[string]any{"graders": []any{map[string]any{"type": "judge", "preset": "Nobody"}}}, http.StatusUnprocessableEntity, "graders[0].preset")
	bad("21 repeats", map[string]any{"repeats": 21}, http.StatusUnprocessableEntity, "repeats")
	bad("no variants", map[string]any{"variants": []any{}}, http.StatusUnprocessableEntity, "variants")
	bad("a string for the dataset", map[string]any{"dataset": "Rivers"}, http.StatusUnprocessableEntity, "dataset")
	bad("an unknown field", map[string]any{"seed": 4}, http.StatusUnprocessableEntity)
	bob := admin.addMember("bob")
	bobs := bob.makeToken("bob's", "write", nil).Token
	wantAPIError(t, "bob runs the admin's private dataset", srv.apiCall(t, "POST", "/api/v1/experiments", bobs,
		map[string]any{"name": "x", "dataset": ds.ID, "variants": []any{raw("{{topic}}")}}), http.StatusUnprocessableEntity, "dataset")
	read := admin.makeToken("reader", "read", nil).Token
	wantAPIError(t, "a read token", srv.apiCall(t, "POST", "/api/v1/experiments", read,
		map[string]any{"name": "x", "dataset": ds.ID, "variants": []any{raw("{{topic}}")}}), http.StatusForbidden)
	if es, err := srv.store.Experiments(context.Background(), srv.userID(t, "admin"), 0, 10); err != nil || len(es) != 0 {
		t.Errorf("refused experiments were stored: %d %v", len(es), err)
	}
}

// scriptedUpstream is the simulator behind a handler that answers some
// requests itself: judge requests with judge, and the first request of
// each prompt in limited with a 429.
type scriptedUpstream struct {
	sim     http.Handler
	judge   func(body string) string // the judge's answer text for a request
	limited func(body string) bool
	mu      sync.Mutex
	seen    map[string]int
	total   atomic.Int64
}

func (u *scriptedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.HasSuffix(r.URL.Path, "/completions") {
		u.total.Add(1)
		u.mu.Lock()
		u.seen[string(body)]++
		n := u.seen[string(body)]
		u.mu.Unlock()
		if u.limited != nil && u.limited(string(body)) && n == 1 {
			w.Header().Set("Retry-After", "0")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"message":"Requests per minute limit exceeded","type":"too_many_requests_error","code":"request_quota_exceeded"}`)
			return
		}
		if u.judge != nil && strings.Contains(string(body), "judge_verdict") {
			text, _ := json.Marshal(u.judge(string(body)))
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"id\":\"j\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"sim-fast\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%s},\"finish_reason\":null}]}\n\n", text)
			io.WriteString(w, "data: {\"id\":\"j\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"sim-fast\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":5,\"total_tokens\":10}}\n\n")
			io.WriteString(w, "data: [DONE]\n\n")
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	u.sim.ServeHTTP(w, r)
}

func TestAPIExperimentJudgesAndRateLimits(t *testing.T) {
	t.Parallel()
	up := &scriptedUpstream{sim: sim.NewHandler(sim.Options{TokensPerSecond: sim.NoPacing}), seen: map[string]int{},
		judge: func(body string) string {
			if strings.Contains(body, "river 1") {
				return "I would rather not say."
			}
			return "Fair enough.\n```json\n{\"reason\": \"on topic\", \"score\": 4}\n```"
		},
		limited: func(body string) bool {
			return strings.Contains(body, "river 2") && !strings.Contains(body, "judge_verdict")
		},
	}
	upstream := httptest.NewServer(up)
	t.Cleanup(upstream.Close)
	srv, admin := newTeam(t, withSim(upstreamConfig(upstream)), withExperiments(experiment.Options{Backoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond}))
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 3)
	judge := presetFile("Judge", "Question: {{input}}\nAnswer: {{output}}\nScore it from 1 to 5.", 0)
	delete(judge, "variables")
	srv.createAPIPreset(t, tok, judge)

	a := srv.apiCall(t, "POST", "/api/v1/experiments", tok, map[string]any{
		"name": "judged", "dataset": ds.ID,
		"variants": []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "Tell me about {{topic}}"}}, "max_tokens": 30}}},
		"graders": []any{map[string]any{"type": "judge", "preset": "Judge", "scale": 5, "pass_at": 0.6}},
	})
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	var e apiExperiment
	a.json(t, &e)
	if _, status := srv.followExperiment(t, tok, e.Events); status != "done" {
		t.Fatalf("ended %q", status)
	}
	cells := srv.results(t, tok, e.ID)
	if len(cells) != 3 {
		t.Fatalf("%d cells", len(cells))
	}
	for _, c := range cells {
		if c.Status != "done" || len(c.Grades) != 1 || c.Grades[0].Judge == 0 {
			t.Fatalf("cell %d: %+v", c.Row, c)
		}
		g := c.Grades[0]
		switch c.Row {
		case 1: // the judge's answer has no verdict: a grading error, not a 0
			if g.Error == "" || g.Pass || g.Score != 0 {
				t.Errorf("an unreadable judge answer: %+v", g)
			}
		default: // 4 of 5 is 0.75, past 0.6
			if g.Error != "" || !g.Pass || g.Score != 0.75 || !strings.Contains(g.Reason, "on topic") {
				t.Errorf("row %d judged: %+v", c.Row, g)
			}
		}
		// The judge's own run is in history, named by the grade, and
		// was asked what the cell asked and answered.
		jr, err := srv.store.Run(context.Background(), srv.userID(t, "admin"), g.Judge)
		if err != nil || jr.ExperimentID != e.ID || !strings.Contains(jr.Variables, c.Vars["topic"]) {
			t.Errorf("row %d's judge run: %+v %v", c.Row, jr, err)
		}
	}
	// Row 2 met a 429 first: waited out, then answered; one more request.
	if cells[2].Attempts != 2 || cells[0].Attempts != 1 {
		t.Errorf("attempts: row 0 %d, row 2 %d", cells[0].Attempts, cells[2].Attempts)
	}
	if got := up.total.Load(); got != 3+3+1 {
		t.Errorf("the upstream saw %d requests, want 3 cells + 3 judges + 1 retry", got)
	}
	e = srv.getExperiment(t, tok, e.ID)
	if g := e.Aggregates[0].Graders[0]; g.Graded != 2 || g.Passed != 2 || g.Errors != 1 {
		t.Errorf("judge aggregate: %+v", g)
	}
}

func TestAPIExperimentCancelKeepsWhatEnded(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t, withSim(sim.NewConfig(sim.Options{TokensPerSecond: 20})))
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 6)
	a := srv.apiCall(t, "POST", "/api/v1/experiments", tok, map[string]any{
		"name": "slow", "dataset": ds.ID, "concurrency": 1,
		"variants": []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "{{topic}}"}}, "max_tokens": 200, "min_tokens": 200}}},
	})
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	var e apiExperiment
	a.json(t, &e)
	// Cancel once the first cell's run is going.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		runs, _, err := srv.store.Runs(context.Background(), db.RunFilter{UserID: srv.userID(t, "admin")})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no cell started")
		}
	}
	read := admin.makeToken("reader", "read", nil).Token
	wantAPIError(t, "a read token cancels", srv.apiCall(t, "POST", fmt.Sprintf("/api/v1/experiments/%d/cancel", e.ID), read, nil), http.StatusForbidden)
	c := srv.apiCall(t, "POST", fmt.Sprintf("/api/v1/experiments/%d/cancel", e.ID), tok, nil)
	if c.status != http.StatusOK {
		t.Fatalf("cancel: %d %s", c.status, c.body)
	}
	c.json(t, &e)
	if e.Status != "cancelled" || e.Progress.Done != 6 {
		t.Errorf("cancelled: %s", c.body)
	}
	for _, cell := range srv.results(t, tok, e.ID) {
		if cell.Status != "cancelled" {
			t.Errorf("cell %d after cancel: %s", cell.Row, cell.Status)
		}
	}
	// The run that was going is stopped and kept, partial output and all.
	runs, _, err := srv.store.Runs(context.Background(), db.RunFilter{UserID: srv.userID(t, "admin")})
	if err != nil || len(runs) != 1 || runs[0].Status == db.RunRunning {
		t.Errorf("runs after cancel: %+v %v", runs, err)
	}
}

// promptCounter is the simulator, counting the requests for each
// prompt.
type promptCounter struct {
	sim  http.Handler
	mu   sync.Mutex
	seen map[string]int
}

func (u *promptCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.HasSuffix(r.URL.Path, "/completions") {
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal(body, &req)
		u.mu.Lock()
		if len(req.Messages) > 0 {
			u.seen[req.Messages[0].Content]++
		}
		u.mu.Unlock()
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	u.sim.ServeHTTP(w, r)
}

func (u *promptCounter) count(prompt string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.seen[prompt]
}

func TestAPIExperimentResumesAfterARestartWithoutResending(t *testing.T) {
	t.Parallel()
	up := &promptCounter{sim: sim.NewHandler(sim.Options{TokensPerSecond: 400}), seen: map[string]int{}}
	upstream := httptest.NewServer(up)
	t.Cleanup(upstream.Close)
	dbPath := t.TempDir() + "/knobs.db"
	srv, admin := newTeam(t, withSim(upstreamConfig(upstream)), withEnv("KNOBS_DB", dbPath))
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 6)
	a := srv.apiCall(t, "POST", "/api/v1/experiments", tok, map[string]any{
		"name": "long", "dataset": ds.ID, "concurrency": 1,
		"variants": []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "About {{topic}}"}}, "max_tokens": 60, "min_tokens": 60}}},
		"graders": []any{map[string]any{"type": "length", "min": 1}},
	})
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	var e apiExperiment
	a.json(t, &e)
	// Stop Knobs once two cells have ended, while the third runs.
	var before []apiCell
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		before = srv.results(t, tok, e.ID)
		done := 0
		for _, c := range before {
			if c.Status == "done" {
				done++
			}
		}
		if done >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no two cells ended")
		}
	}
	adminID := srv.userID(t, "admin")
	srv.stop()
	ended := map[int]bool{}
	for _, c := range srv.resultsFromStore(t, adminID, e.ID) {
		if c.Status == db.CellDone {
			ended[c.Row] = true
		}
	}
	if len(ended) < 2 || len(ended) == 6 {
		t.Fatalf("%d cells ended before the stop; the test needs some but not all", len(ended))
	}

	// The next start resumes it.
	srv2 := newServer(t, withSim(upstreamConfig(upstream)), withEnv("KNOBS_DB", dbPath))
	if _, status := srv2.followExperiment(t, tok, e.Events); status != "done" {
		t.Fatalf("resumed experiment ended %q", status)
	}
	after := srv2.results(t, tok, e.ID)
	if len(after) != 6 {
		t.Fatalf("%d cells", len(after))
	}
	for _, c := range after {
		n := up.count("About " + c.Vars["topic"])
		switch {
		case c.Status != "done" || len(c.Grades) != 1 || !c.Grades[0].Pass:
			t.Errorf("row %d after the restart: %+v", c.Row, c)
		case ended[c.Row] && n != 1:
			t.Errorf("row %d ended before the stop and was sent %d times", c.Row, n)
		case n < 1 || n > 2:
			t.Errorf("row %d was sent %d times", c.Row, n)
		}
	}
	// What ended before the stop is as it was.
	for _, b := range before {
		if b.Status == "done" && (after[b.Row].Output != b.Output || *after[b.Row].RunID != *b.RunID) {
			t.Errorf("row %d changed across the restart", b.Row)
		}
	}
}

// resultsFromStore reads an experiment's cells from the database file,
// the server being stopped.
func (s *server) resultsFromStore(t testing.TB, user, id int64) []db.Cell {
	t.Helper()
	store, err := db.Open(context.Background(), s.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cells, err := store.ExperimentCells(context.Background(), user, id, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return cells
}

func TestAPIExperimentsCompared(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 4)
	run := func(name string, maxTokens int) int64 {
		a := srv.apiCall(t, "POST", "/api/v1/experiments", tok, map[string]any{
			"name": name, "dataset": ds.ID,
			"variants": []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
				"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "{{topic}}"}},
				"max_tokens": maxTokens, "min_tokens": maxTokens}}},
			"graders": []any{map[string]any{"type": "length", "max": 12, "unit": "words"}, map[string]any{"type": "length", "min": 1}},
		})
		if a.status != http.StatusCreated {
			t.Fatalf("create %s: %d %s", name, a.status, a.body)
		}
		var e apiExperiment
		a.json(t, &e)
		if _, status := srv.followExperiment(t, tok, e.Events); status != "done" {
			t.Fatalf("%s ended %q", name, status)
		}
		return e.ID
	}
	short, long := run("short", 4), run("long", 80)
	var cmp struct {
		Matched int `json:"matched"`
		Graders []struct {
			Name      string   `json:"name"`
			Delta     *float64 `json:"delta"`
			Regressed int      `json:"regressed"`
			Fixed     int      `json:"fixed"`
		} `json:"graders"`
		Changes []struct {
			Change      string `json:"change"`
			Grader      string `json:"grader"`
			BaselineOut string `json:"baseline_output"`
			OtherOut    string `json:"other_output"`
		} `json:"changes"`
	}
	a := srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/experiments/%d/compare/%d", short, long), tok, nil)
	a.json(t, &cmp)
	if cmp.Matched != 4 || len(cmp.Graders) != 2 || cmp.Graders[0].Regressed != 4 || *cmp.Graders[0].Delta != -1 ||
		cmp.Graders[1].Regressed != 0 || *cmp.Graders[1].Delta != 0 || len(cmp.Changes) != 4 || cmp.Changes[0].Change != "regressed" ||
		len(cmp.Changes[0].OtherOut) <= len(cmp.Changes[0].BaselineOut) {
		t.Errorf("short → long: %s", a.body)
	}
	srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/experiments/%d/compare/%d", long, short), tok, nil).json(t, &cmp)
	if cmp.Graders[0].Fixed != 4 || cmp.Changes[0].Change != "fixed" {
		t.Errorf("long → short: %+v", cmp)
	}
	wantAPIError(t, "an unknown variant", srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/experiments/%d/compare/%d?variant=3", short, long), tok, nil),
		http.StatusUnprocessableEntity, "variant")
	// The page says the same, with both answers diffed word by word.
	page := admin.get(fmt.Sprintf("/experiments/%d/compare/%d", short, long))
	if page.status != http.StatusOK || strings.Count(page.body, "passed, now fails") != 4 || !page.has(`<ins class="diff-ins">`) ||
		!page.has("-100 points") || !page.has("over the 4 cells both have") {
		t.Errorf("the comparison page: %d", page.status)
	}
	// The experiment page offers the comparison, its report, downloads and share box.
	ep := admin.get(fmt.Sprintf("/experiments/%d", long))
	for _, want := range []string{fmt.Sprintf(`<option value="%d">short (experiment %d)</option>`, short, short), fmt.Sprintf(`href="/experiments/%d/report"`, long),
		fmt.Sprintf(`href="/api/v1/experiments/%d/export?format=csv"`, long), fmt.Sprintf(`action="/experiments/%d/shares"`, long), fmt.Sprintf(`href="/history?experiment=%d"`, long)} {
		if !ep.has(want) {
			t.Errorf("the experiment page lacks %s", want)
		}
	}
	if r := admin.follow(admin.get(fmt.Sprintf("/experiments/%d/compare?other=%d", long, short))); r.status != http.StatusOK || !r.has("failed, now passes") {
		t.Errorf("the page's Compare with: %d", r.status)
	}
	if p := admin.addMember("carol").get(fmt.Sprintf("/experiments/%d/compare/%d", short, long)); p.status != http.StatusNotFound {
		t.Errorf("another user's comparison page: %d", p.status)
	}
	other := srv.makeDataset(t, "admin", 1)
	a = srv.apiCall(t, "POST", "/api/v1/experiments", tok, map[string]any{"name": "elsewhere", "dataset": other.ID,
		"variants": []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "{{topic}}"}}}}}})
	var e apiExperiment
	a.json(t, &e)
	wantAPIError(t, "another dataset", srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/experiments/%d/compare/%d", short, e.ID), tok, nil),
		http.StatusUnprocessableEntity, "other")
	wantAPIError(t, "an unknown experiment", srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/experiments/%d/compare/999999", short), tok, nil),
		http.StatusNotFound)
}

func TestAPIExperimentExportedAsCSVAndJSONLines(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	exp := "=SUM(A1)"
	d, err := srv.store.CreateDataset(context.Background(), db.Dataset{OwnerID: srv.userID(t, "admin"), Name: "Tricky", Columns: []string{"topic"}},
		[]db.DatasetRow{{Vars: map[string]string{"topic": "commas, \"quotes\"\nand lines"}, Expected: &exp}, {Vars: map[string]string{"topic": "plain"}}})
	if err != nil {
		t.Fatal(err)
	}
	a := srv.apiCall(t, "POST", "/api/v1/experiments", tok, map[string]any{"name": "export", "dataset": d.ID,
		"variants": []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "{{topic}}"}}, "max_tokens": 10}}},
		"graders": []any{map[string]any{"type": "length", "min": 1, "name": "has text"}}})
	var e apiExperiment
	a.json(t, &e)
	srv.followExperiment(t, tok, e.Events)
	cells := srv.results(t, tok, e.ID)

	c := srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/experiments/%d/export?format=csv", e.ID), tok, nil)
	if c.status != http.StatusOK || !strings.HasPrefix(c.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: %d %v", c.status, c.header)
	}
	recs, err := csv.NewReader(strings.NewReader(c.body)).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("csv: %v %d records\n%s", err, len(recs), c.body)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, want := range []string{"row", "variant_name", "topic", "expected", "output", "has text pass", "has text reason", "run_id"} {
		if _, ok := col[want]; !ok {
			t.Errorf("csv header lacks %q: %v", want, recs[0])
		}
	}
	r1 := recs[1]
	if r1[col["topic"]] != "commas, \"quotes\"\nand lines" || r1[col["expected"]] != "'=SUM(A1)" || r1[col["output"]] != cells[0].Output ||
		r1[col["has text pass"]] != "true" || r1[col["run_id"]] != strconv.FormatInt(*cells[0].RunID, 10) {
		t.Errorf("csv row 1: %q", r1)
	}
	j := srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/experiments/%d/export?format=jsonl", e.ID), tok, nil)
	lines := strings.Split(strings.TrimSpace(j.body), "\n")
	if j.status != http.StatusOK || len(lines) != 2 {
		t.Fatalf("jsonl: %d %d lines", j.status, len(lines))
	}
	var first apiCell
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Output != cells[0].Output || first.Vars["topic"] != cells[0].Vars["topic"] {
		t.Errorf("jsonl line 1: %v %+v", err, first)
	}
	wantAPIError(t, "a bad format", srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/experiments/%d/export?format=xlsx", e.ID), tok, nil), http.StatusUnprocessableEntity)
	bob := admin.addMember("bob").makeToken("bob's", "read", nil).Token
	wantAPIError(t, "another user's", srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/experiments/%d/export", e.ID), bob, nil), http.StatusNotFound)
}

func TestExperimentReportIsOneSafeFileAndShares(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	exp := `<b>bold</b>`
	d, err := srv.store.CreateDataset(context.Background(), db.Dataset{OwnerID: srv.userID(t, "admin"), Name: "Hostile", Columns: []string{"topic"}},
		[]db.DatasetRow{{Vars: map[string]string{"topic": `<script>alert("x")</script> & more`}, Expected: &exp}})
	if err != nil {
		t.Fatal(err)
	}
	a := srv.apiCall(t, "POST", "/api/v1/experiments", tok, map[string]any{"name": "Report <i>me</i>", "dataset": d.ID,
		"variants": []any{map[string]any{"name": "plain", "provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "{{topic}}"}}, "max_tokens": 10}}},
		"graders": []any{map[string]any{"type": "length", "min": 1, "name": "has text"}}})
	var e apiExperiment
	a.json(t, &e)
	srv.followExperiment(t, tok, e.Events)
	cells := srv.results(t, tok, e.ID)

	r := srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/experiments/%d/report", e.ID), tok, nil)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") ||
		!strings.Contains(r.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("report: %d %v", r.status, r.header)
	}
	page := r.body
	for _, want := range []string{"Report &lt;i&gt;me&lt;/i&gt;", "&lt;script&gt;", "&lt;b&gt;bold&lt;/b&gt;", "has text: pass", "plain"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	for _, never := range []string{"<script", "<b>bold", "<i>me", "http://", "https://", " src=", "<link"} {
		if strings.Contains(page, never) {
			t.Errorf("the report holds %q: nothing may load, run or be raw", never)
		}
	}
	if !strings.Contains(page, html.EscapeString(cells[0].Output)) {
		t.Errorf("the report lacks the cell's output %q", cells[0].Output)
	}
	// Served, nothing may load or run but the one style sheet, by hash.
	csp := r.header.Get("Content-Security-Policy")
	_, rest, _ := strings.Cut(page, "<style>")
	css, _, _ := strings.Cut(rest, "</style>")
	sum := sha256.Sum256([]byte(css))
	if !strings.Contains(css, ".badge{") {
		t.Errorf("the report's style sheet is not in it: %.200q", css)
	}
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") {
		t.Errorf("report policy %q does not allow exactly its style sheet", csp)
	}

	// A public link opens the report for anyone; revoked, nothing.
	sr, out := admin.jsonPost(fmt.Sprintf("/experiments/%d/shares", e.ID), `{"audience":"public"}`)
	link := fmt.Sprint(out["url"])
	if sr.status != http.StatusCreated || !strings.HasPrefix(link, "/e/") {
		t.Fatalf("share: %d %s", sr.status, sr.body)
	}
	anyone := srv.newClient(t)
	if got := anyone.get(link); got.status != http.StatusOK || !strings.Contains(got.body, "Shared by admin") || !strings.Contains(got.body, "has text: pass") {
		t.Errorf("the public link: %d", got.status)
	}
	bob := admin.addMember("bob")
	if r, _ := bob.jsonPost(fmt.Sprintf("/experiments/%d/shares", e.ID), `{"audience":"public"}`); r.status != http.StatusNotFound {
		t.Errorf("bob shares the admin's private experiment: %d", r.status)
	}
	if r, _ := admin.jsonPost(fmt.Sprint(out["revoke"]), `{}`); r.status >= 400 {
		t.Errorf("revoke: %d %s", r.status, r.body)
	}
	if got := anyone.get(link); got.status != http.StatusNotFound {
		t.Errorf("the revoked link: %d", got.status)
	}
	// A team link wants a member.
	_, out = admin.jsonPost(fmt.Sprintf("/experiments/%d/shares", e.ID), `{"audience":"team"}`)
	if got := srv.newClient(t).get(fmt.Sprint(out["url"])); got.status != http.StatusSeeOther && !strings.Contains(got.body, "Sign in") {
		t.Errorf("a team link signed out: %d", got.status)
	}
	if got := bob.get(fmt.Sprint(out["url"])); got.status != http.StatusOK {
		t.Errorf("a team link for bob: %d", got.status)
	}
}

func TestAPIExperimentPreviewCountsWhatItWillSend(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 3)
	body := map[string]any{"name": "preview", "dataset": ds.ID, "repeats": 2,
		"variants": []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "max_tokens": 7, "min_tokens": 7,
			"messages": []any{map[string]any{"role": "system", "content": "Be brief."}, map[string]any{"role": "user", "content": "Tell me about {{topic}}"}}}}},
		"graders": []any{map[string]any{"type": "length", "min": 1}}}
	a := srv.apiCall(t, "POST", "/api/v1/experiments/preview", tok, body)
	var p struct {
		Cells        int               `json:"cells"`
		JudgeCalls   int               `json:"judge_calls"`
		InputTokens  int               `json:"input_tokens"`
		OutputTokens int               `json:"output_tokens"`
		CostUSD      *float64          `json:"cost_usd"`
		Fields       map[string]string `json:"fields"`
	}
	a.json(t, &p)
	if a.status != http.StatusOK || p.Cells != 6 || p.JudgeCalls != 0 || p.OutputTokens != 42 || len(p.Fields) != 0 || p.CostUSD != nil {
		t.Fatalf("preview: %d %s", a.status, a.body)
	}
	if es, _ := srv.store.Experiments(context.Background(), srv.userID(t, "admin"), 0, 10); len(es) != 0 {
		t.Errorf("a preview stored %d experiments", len(es))
	}
	// Run it: on the simulator the estimate is what was reported.
	a = srv.apiCall(t, "POST", "/api/v1/experiments", tok, body)
	var e apiExperiment
	a.json(t, &e)
	srv.followExperiment(t, tok, e.Events)
	prompt := 0
	for _, c := range srv.results(t, tok, e.ID) {
		var run struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		srv.apiCall(t, "GET", fmt.Sprintf("/api/v1/runs/%d", *c.RunID), tok, nil).json(t, &run)
		prompt += run.Usage.PromptTokens
	}
	if prompt == 0 || prompt != p.InputTokens {
		t.Errorf("the runs reported %d prompt tokens; the preview said %d", prompt, p.InputTokens)
	}
	// What create would refuse, the preview names, and stores nothing.
	body["variants"] = []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
		"model": "sim-fast", "messages": []any{map[string]any{"role": "user", "content": "{{topic}} in {{city}}"}}}}}
	srv.apiCall(t, "POST", "/api/v1/experiments/preview", tok, body).json(t, &p)
	if p.Fields["variants[0].variables"] == "" || !strings.Contains(p.Fields["variants[0].variables"], "row 1 lacks {{city}}") {
		t.Errorf("preview of a variant the rows do not fill: %+v", p.Fields)
	}
}

func TestAPIExperimentRepeatsAreIndependentSamples(t *testing.T) {
	t.Parallel()
	up := &promptCounter{sim: sim.NewHandler(sim.Options{TokensPerSecond: sim.NoPacing}), seen: map[string]int{}}
	upstream := httptest.NewServer(up)
	t.Cleanup(upstream.Close)
	srv, admin := newTeam(t, withSim(upstreamConfig(upstream)))
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 1)
	variant := func(seed any) map[string]any {
		body := map[string]any{"model": "sim-fast", "max_tokens": 30, "messages": []any{map[string]any{"role": "user", "content": "Say something about {{topic}}"}}}
		if seed != nil {
			body["seed"] = seed
		}
		return map[string]any{"provider": "sim", "endpoint": "chat", "body": body}
	}
	a := srv.apiCall(t, "POST", "/api/v1/experiments", tok, map[string]any{"name": "samples", "dataset": ds.ID, "repeats": 4,
		"variants": []any{variant(nil), variant(7)}})
	var e apiExperiment
	a.json(t, &e)
	srv.followExperiment(t, tok, e.Events)
	outs := map[int]map[string]bool{0: {}, 1: {}}
	for _, c := range srv.results(t, tok, e.ID) {
		outs[c.Variant][c.Output] = true
	}
	// Every sample is a call of its own: never a cached answer.
	if n := up.count("Say something about river 0"); n != 8 {
		t.Errorf("the upstream saw %d requests for 2 variants × 4 repeats", n)
	}
	// Unseeded samples differ; a seed the variant sets makes them equal.
	if len(outs[0]) < 2 || len(outs[1]) != 1 {
		t.Errorf("distinct answers: unseeded %d, seeded %d", len(outs[0]), len(outs[1]))
	}
}

// A slow provider holds its own workers only: the other provider's cells
// all end while the slow one's first is still waiting.
func TestAPIExperimentSlowProviderDoesNotHoldTheOthers(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	handler := sim.NewHandler(sim.Options{TokensPerSecond: sim.NoPacing})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/completions") {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	var once sync.Once
	open := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(open)
	srv, admin := newTeam(t)
	if err := srv.store.CreateCustomProvider(context.Background(), db.CustomProvider{ID: "slow", Name: "Slow", BaseURL: slow.URL}, nil, ""); err != nil {
		t.Fatal(err)
	}
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 3)
	variant := func(provider string) map[string]any {
		return map[string]any{"provider": provider, "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "max_tokens": 5, "messages": []any{map[string]any{"role": "user", "content": "{{topic}}"}}}}
	}
	a := srv.apiCall(t, "POST", "/api/v1/experiments", tok, map[string]any{"name": "two speeds", "dataset": ds.ID, "concurrency": 1,
		"variants": []any{variant("slow"), variant("sim")}})
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	var e apiExperiment
	a.json(t, &e)
	// Every fast cell ends with the slow provider's first call held.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got, err := srv.store.Experiment(context.Background(), srv.userID(t, "admin"), e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Finished == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d cells ended while the slow provider waited; want the fast provider's 3", got.Finished)
		}
	}
	for _, c := range srv.results(t, tok, e.ID) {
		if (c.Variant == 1) != (c.Status == "done") {
			t.Errorf("row %d variant %d is %s with the slow provider held", c.Row, c.Variant, c.Status)
		}
	}
	open()
	if _, status := srv.followExperiment(t, tok, e.Events); status != "done" {
		t.Errorf("ended %q", status)
	}
}

// A cell whose upstream keeps failing is tried a bounded number of times
// and then marked failed with the provider's message; the rest go on.
func TestAPIExperimentFailingCellIsMarkedWhileTheRestGoOn(t *testing.T) {
	t.Parallel()
	handler := sim.NewHandler(sim.Options{TokensPerSecond: sim.NoPacing})
	var broken atomic.Int64
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "river 1") {
			broken.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"message":"The model is overloaded","type":"server_error","code":"internal_server_error"}`)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)
	srv, admin := newTeam(t, withSim(upstreamConfig(upstream)), withExperiments(experiment.Options{Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}))
	tok := admin.makeToken("ci", "write", nil).Token
	ds := srv.makeDataset(t, "admin", 3)
	a := srv.apiCall(t, "POST", "/api/v1/experiments", tok, map[string]any{"name": "one breaks", "dataset": ds.ID,
		"variants": []any{map[string]any{"provider": "sim", "endpoint": "chat", "body": map[string]any{
			"model": "sim-fast", "max_tokens": 5, "messages": []any{map[string]any{"role": "user", "content": "About {{topic}}"}}}}},
		"graders": []any{map[string]any{"type": "length", "min": 1}}})
	var e apiExperiment
	a.json(t, &e)
	if _, status := srv.followExperiment(t, tok, e.Events); status != "done" {
		t.Fatalf("ended %q", status)
	}
	cells := srv.results(t, tok, e.ID)
	for _, c := range cells {
		switch {
		case c.Row == 1 && (c.Status != "error" || c.Attempts != 4 || !strings.Contains(c.Error, "overloaded") || len(c.Grades) != 0):
			t.Errorf("the broken row: %+v", c)
		case c.Row != 1 && c.Status != "done":
			t.Errorf("row %d: %s", c.Row, c.Status)
		}
	}
	if n := broken.Load(); n != 4 {
		t.Errorf("the broken row was sent %d times, want 4 attempts", n)
	}
	if e = srv.getExperiment(t, tok, e.ID); e.Progress.Failed != 1 || e.Aggregates[0].Errors != 1 {
		t.Errorf("failed counts: %+v", e.Progress)
	}
}
