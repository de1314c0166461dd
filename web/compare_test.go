package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"knobs/db"
	"knobs/llm/sim"
	"knobs/runner"
	"knobs/web/sse"
)

// groupEvent is one event of a comparison's stream, as read off the wire.
type groupEvent struct {
	id, event, data string
	pane            int // -1 for group_done
	at              time.Time
}

// compareAnswer is the answer of POST /compare/runs.
type compareAnswer struct {
	Group  int64
	Runs   []int64
	Events string
	Error  string
	Panes  []struct {
		Index  int
		Fields map[string]string
	}
}

// postCompare starts a comparison of panes (each a pane's JSON).
func (c *client) postCompare(title string, panes ...string) (*response, compareAnswer) {
	c.t.Helper()
	body := fmt.Sprintf(`{"title":%q,"panes":[%s]}`, title, strings.Join(panes, ","))
	r := c.post("/compare/runs", "application/json", strings.NewReader(body), http.Header{"X-Csrf-Token": {c.token()}, "Accept": {"application/json"}})
	var out compareAnswer
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		c.t.Fatalf("POST /compare/runs answered %d %q: %v", r.status, r.body, err)
	}
	return r, out
}

// readGroup reads a group stream at path to its end, or until stop
// returns true, sending lastID as Last-Event-ID when not "".
func (c *client) readGroup(path, lastID string, stop func(groupEvent) bool) (int, []groupEvent) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.srv.url+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	var out []groupEvent
	var cur groupEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.event == "" {
				continue
			}
			cur.at, cur.pane = time.Now(), -1
			var d struct{ Pane *int }
			if err := json.Unmarshal([]byte(cur.data), &d); err != nil {
				c.t.Fatalf("event %s has data that is not JSON: %q", cur.event, cur.data)
			}
			if d.Pane != nil {
				cur.pane = *d.Pane
			}
			// A texts event merges the text of several panes: it reads
			// as one event per part, as the page reads it.
			parts := expandTexts(cur)
			out = append(out, parts...)
			for _, e := range parts {
				// A client gets a whole event or none: stop after it.
				if stop != nil && stop(e) {
					return resp.StatusCode, out
				}
			}
			cur = groupEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		}
	}
	return resp.StatusCode, out
}

// expandTexts returns e, or for a texts event one delta or reasoning
// event per part, in its pane, with e's id and time.
func expandTexts(e groupEvent) []groupEvent {
	if e.event != "texts" {
		return []groupEvent{e}
	}
	var d struct {
		Parts []struct {
			Event  string `json:"event"`
			Pane   int    `json:"pane"`
			Choice int    `json:"choice"`
			Text   string `json:"text"`
		} `json:"parts"`
	}
	json.Unmarshal([]byte(e.data), &d)
	out := make([]groupEvent, len(d.Parts))
	for i, p := range d.Parts {
		data, _ := json.Marshal(map[string]any{"pane": p.Pane, "choice": p.Choice, "text": p.Text})
		out[i] = groupEvent{id: e.id, event: p.Event, data: string(data), pane: p.Pane, at: e.at}
	}
	return out
}

// groupDone is the data of group_done.
type groupDone struct {
	Panes []struct {
		Pane         int
		Run          int64
		Status       string
		TTFTMs       float64 `json:"ttft_ms"`
		TokensPerSec float64 `json:"tokens_per_sec"`
		Tokens       int
	}
	Fastest int `json:"fastest_first_token"`
	Highest int `json:"highest_tokens_per_sec"`
	Fewest  int `json:"fewest_tokens"`
	Lowest  int `json:"lowest_cost"`
}

// lastGroupDone checks that events end with group_done and decodes it.
func lastGroupDone(t *testing.T, events []groupEvent) groupDone {
	t.Helper()
	if len(events) == 0 || events[len(events)-1].event != "group_done" {
		t.Fatalf("the stream does not end with group_done: %d events", len(events))
	}
	var d groupDone
	if err := json.Unmarshal([]byte(events[len(events)-1].data), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// byPane splits a group stream into each pane's events (event and data,
// the pane field included).
func byPane(events []groupEvent, n int) [][]string {
	panes := make([][]sseEvent, n)
	for _, e := range events {
		if e.pane >= 0 && e.pane < n {
			panes[e.pane] = append(panes[e.pane], sseEvent{event: e.event, data: e.data})
		}
	}
	// In canonical form (text events merged, see canonical), without the
	// ids, which a group stream writes as every pane's cursor.
	out := make([][]string, n)
	for i, p := range panes {
		out[i] = canonical(p)
	}
	return out
}

// paneDone decodes the done event of pane i.
func paneDone(t *testing.T, events []groupEvent, i int) (status string, m runner.Metrics, deltas int) {
	t.Helper()
	for _, e := range events {
		if e.pane != i {
			continue
		}
		switch e.event {
		case "delta":
			deltas++
		case "done":
			var d struct {
				Status  string
				Metrics runner.Metrics
			}
			json.Unmarshal([]byte(e.data), &d)
			return d.Status, d.Metrics, deltas
		}
	}
	t.Fatalf("pane %d sent no done", i)
	return
}

// simPane is a pane on the sim provider (sim-fast, as paced by the
// upstream) for exactly tokens tokens.
func simPane(seed, tokens int) string {
	return runSpec(fmt.Sprintf(`{"model":"sim-fast","messages":[{"role":"user","content":"Tell me about glaciers"}],"seed":%d,"max_completion_tokens":%d}`, seed, tokens))
}

func TestCompareStreamsPanesInParallelAndReplaysThemWithoutAKey(t *testing.T) {
	const key = "csk-compare-secret-00112233445566"
	const tps, tokens = 60, 60 // about 1 s per pane
	upstream, inFlight := concurrencyUpstream(t, tps)
	s, admin := newTeam(t, withSim(upstreamConfig(upstream)),
		withEnv("CEREBRAS_API_KEY", key), withEnv("CEREBRAS_BASE_URL", upstream.URL))
	keyed := fmt.Sprintf(`{"provider":"cerebras","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"Tell me about rivers"}],"max_completion_tokens":%d}}`, tokens)

	r, cmp := admin.postCompare("Three at once", simPane(1, tokens), simPane(2, tokens), keyed)
	if r.status != http.StatusCreated || len(cmp.Runs) != 3 || cmp.Events != fmt.Sprintf("/groups/%d/events", cmp.Group) {
		t.Fatalf("POST /compare/runs = %d %s", r.status, r.body)
	}
	status, events := admin.readGroup(cmp.Events, "", nil)
	if status != http.StatusOK {
		t.Fatalf("group events answered %d", status)
	}
	done := lastGroupDone(t, events)
	for i := range 3 {
		// Tokens, not delta events: a paced upstream that falls behind
		// sends several tokens in one chunk.
		st, m, deltas := paneDone(t, events, i)
		if st != db.RunDone || m.Tokens != tokens || deltas == 0 {
			t.Errorf("pane %d: %s with %d tokens in %d deltas, want done with %d tokens", i, st, m.Tokens, deltas, tokens)
		}
		if done.Panes[i].Run != cmp.Runs[i] || done.Panes[i].Status != db.RunDone || done.Panes[i].Tokens != tokens {
			t.Errorf("group_done pane %d: %+v", i, done.Panes[i])
		}
	}
	if most := inFlight.Load(); most != 3 {
		t.Errorf("at most %d of the 3 panes' upstream requests were in flight at once, want all 3 together", most)
	}
	// Every pane stopped at its 60 max tokens: fastest and highest rate
	// are awarded, fewest tokens is not (a cut answer is short for the
	// wrong reason).
	if done.Fastest < 0 || done.Highest < 0 || done.Fewest != -1 {
		t.Errorf("group_done awards %+v", done)
	}
	// Every frame names its pane, and its id holds every pane's cursor.
	if first := events[0]; first.event != "request" || !strings.HasPrefix(first.data, `{"pane":`) || strings.Count(first.id, ".") != 2 {
		t.Errorf("first event %+v", first)
	}
	if id := events[len(events)-1].id; !strings.HasSuffix(id, ".done") {
		t.Errorf("group_done id %q", id)
	}

	// The stored runs know their group and pane.
	admID := s.userID(t, "admin")
	runs, err := s.store.GroupRuns(context.Background(), admID, cmp.Group)
	if err != nil || len(runs) != 3 {
		t.Fatalf("group runs %d, %v", len(runs), err)
	}
	for i, run := range runs {
		if run.ID != cmp.Runs[i] || run.Pane != i || run.GroupID != cmp.Group || len(run.EventTimes) != 4*len(sse.Split(run.Events)) {
			t.Errorf("stored run %d: id %d pane %d group %d, %d bytes of times for %d frames", i, run.ID, run.Pane, run.GroupID, len(run.EventTimes), len(sse.Split(run.Events)))
		}
	}

	// A public share link replays at the recorded pace, for anyone.
	r = admin.post(fmt.Sprintf("/groups/%d/shares", cmp.Group), "application/json", strings.NewReader(`{"audience":"public"}`),
		http.Header{"X-Csrf-Token": {admin.token()}, "Accept": {"application/json"}})
	var share struct {
		ID     int64
		URL    string
		Replay string
	}
	if json.Unmarshal([]byte(r.body), &share); r.status != http.StatusCreated || share.Replay == "" {
		t.Fatalf("share answered %d %s", r.status, r.body)
	}
	anon := s.newClient(t)
	page := anon.get(share.URL)
	if page.status != http.StatusOK || !page.has(`"title":"Three at once"`) || !page.has(`"provider":"cerebras"`) {
		t.Fatalf("shared comparison answered %d %s", page.status, page.body)
	}
	status, replay := anon.readGroup(share.Replay, "", nil)
	if status != http.StatusOK {
		t.Fatalf("shared replay answered %d", status)
	}
	lastGroupDone(t, replay)
	if got, want := byPane(replay, 3), byPane(events, 3); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Error("the replay's events differ from the live ones")
	}
	texts := []string{page.body}
	for _, e := range replay {
		texts = append(texts, e.data)
	}
	for _, body := range texts {
		if strings.Contains(body, key) || strings.Contains(body, key[len(key)-12:]) {
			t.Fatal("the shared comparison shows the key")
		}
	}
	// At the recorded pace: the replay hands out frames in the order of
	// their recorded times (the gaps between them are web/sse's unit
	// tests' to check, on a clock of their own).
	replayFollowsRecordedTimes(t, replay, runs)

	// Revoked, the link opens nothing.
	if r := admin.postForm(fmt.Sprintf("/shares/%d/revoke", share.ID), nil); r.status != http.StatusSeeOther {
		t.Fatalf("revoke answered %d", r.status)
	}
	if status, _ := anon.readGroup(share.Replay, "", nil); status != http.StatusNotFound {
		t.Errorf("revoked replay answered %d, want 404", status)
	}
	if r := anon.get(share.URL); r.status != http.StatusNotFound {
		t.Errorf("revoked share answered %d, want 404", r.status)
	}
}

// concurrencyUpstream is a simulator at tps tokens/s that counts the most
// requests it served at once.
func concurrencyUpstream(t *testing.T, tps float64) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var now, most atomic.Int32
	h := sim.NewHandler(sim.Options{TokensPerSecond: tps})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := now.Add(1)
		defer now.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &most
}

// replayFollowsRecordedTimes checks that at every event of a replay (its
// id is every pane's cursor) no frame already sent was recorded later
// than a frame not yet sent, of any pane.
func replayFollowsRecordedTimes(t *testing.T, replay []groupEvent, runs []db.Run) {
	t.Helper()
	times := make([][]uint32, len(runs))
	for _, r := range runs {
		times[r.Pane] = runner.DecodeTimes(r.EventTimes)
	}
	for _, e := range replay {
		sent, _ := sse.ParseCursor(e.id, len(runs))
		latestSent, earliestLeft := uint32(0), uint32(math.MaxUint32)
		for p, n := range sent {
			if n > len(times[p]) {
				t.Fatalf("event %s counts %d frames of pane %d, which has %d", e.id, n, p, len(times[p]))
			}
			if n > 0 {
				latestSent = max(latestSent, times[p][n-1])
			}
			if n < len(times[p]) {
				earliestLeft = min(earliestLeft, times[p][n])
			}
		}
		if latestSent > earliestLeft {
			t.Fatalf("at event %s the replay had sent a frame recorded at %d ms but not one recorded at %d ms", e.id, latestSent, earliestLeft)
		}
	}
}

func TestCompareFailingPaneLeavesTheOthersDone(t *testing.T) {
	upstream := simUpstream(t, 400)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"message":"The upstream fell over.","type":"server_error","param":"","code":"internal_server_error"}`))
	}))
	t.Cleanup(broken.Close)
	s, admin := newTeam(t, withSim(upstreamConfig(upstream)))
	if err := s.store.CreateCustomProvider(context.Background(), db.CustomProvider{ID: "broken", Name: "Broken", BaseURL: broken.URL}, nil, ""); err != nil {
		t.Fatal(err)
	}
	failing := `{"provider":"broken","endpoint":"chat","body":{"model":"any-model","messages":[{"role":"user","content":"hi"}]}}`
	r, cmp := admin.postCompare("", simPane(1, 40), failing, simPane(3, 40))
	if r.status != http.StatusCreated {
		t.Fatalf("POST /compare/runs = %d %s", r.status, r.body)
	}
	_, events := admin.readGroup(cmp.Events, "", nil)
	done := lastGroupDone(t, events)
	for i, want := range []string{db.RunDone, db.RunError, db.RunDone} {
		if st, _, _ := paneDone(t, events, i); st != want || done.Panes[i].Status != want {
			t.Errorf("pane %d: %s (group_done %s), want %s", i, st, done.Panes[i].Status, want)
		}
	}
	var sawError bool
	for _, e := range events {
		if e.pane == 1 && e.event == "error" && strings.Contains(e.data, "The upstream fell over.") {
			sawError = true
		}
	}
	if !sawError {
		t.Error("the failing pane sent no error event with the provider's message")
	}
	if done.Fastest == 1 || done.Highest == 1 || done.Fewest == 1 || done.Fastest < 0 {
		t.Errorf("awards %+v count the failed pane or none", done)
	}
}

func TestCompareStopOnePaneLeavesTheOthersRunning(t *testing.T) {
	const tokens = 40
	upstream := simUpstream(t, 50) // 0.8 s per pane
	_, admin := newTeam(t, withSim(upstreamConfig(upstream)))
	_, cmp := admin.postCompare("", simPane(1, tokens), simPane(2, tokens), simPane(3, tokens))
	stopped := false
	_, events := admin.readGroup(cmp.Events, "", func(e groupEvent) bool {
		if !stopped && e.pane == 1 && e.event == "delta" {
			stopped = true
			r := admin.post(fmt.Sprintf("/runs/%d/cancel", cmp.Runs[1]), "application/json", nil,
				http.Header{"X-Csrf-Token": {admin.token()}, "Accept": {"application/json"}})
			if r.status != http.StatusAccepted {
				t.Errorf("cancel of pane 1 answered %d %s", r.status, r.body)
			}
		}
		return false
	})
	lastGroupDone(t, events)
	for i, want := range []string{db.RunDone, db.RunCancelled, db.RunDone} {
		st, m, deltas := paneDone(t, events, i)
		if st != want {
			t.Errorf("pane %d: %s, want %s", i, st, want)
		}
		if want == db.RunDone && (m.Tokens != tokens || deltas == 0) {
			t.Errorf("pane %d streamed %d tokens in %d deltas, want %d tokens", i, m.Tokens, deltas, tokens)
		}
	}
	// Stop all: nothing is left to stop.
	r := admin.post(fmt.Sprintf("/groups/%d/cancel", cmp.Group), "application/json", nil,
		http.Header{"X-Csrf-Token": {admin.token()}, "Accept": {"application/json"}})
	if r.status != http.StatusConflict {
		t.Errorf("stopping a finished comparison answered %d", r.status)
	}
}

func TestCompareStopAllStopsEveryPane(t *testing.T) {
	upstream := simUpstream(t, 20)
	_, admin := newTeam(t, withSim(upstreamConfig(upstream)))
	_, cmp := admin.postCompare("", simPane(1, 100), simPane(2, 100))
	r := admin.post(fmt.Sprintf("/groups/%d/cancel", cmp.Group), "application/json", nil,
		http.Header{"X-Csrf-Token": {admin.token()}, "Accept": {"application/json"}})
	if r.status != http.StatusAccepted {
		t.Fatalf("stop all answered %d %s", r.status, r.body)
	}
	_, events := admin.readGroup(cmp.Events, "", nil)
	for i := range 2 {
		if st, _, _ := paneDone(t, events, i); st != db.RunCancelled {
			t.Errorf("pane %d: %s, want cancelled", i, st)
		}
	}
}

func TestCompareResumeNeitherRepeatsNorSkips(t *testing.T) {
	upstream := simUpstream(t, 100)
	// Finished panes leave the runner's memory at once: the last reads
	// come from the database.
	s, admin := newTeam(t, withSim(upstreamConfig(upstream)), withRunner(runner.Options{Linger: time.Millisecond}))
	_, cmp := admin.postCompare("", simPane(1, 40), simPane(2, 30), simPane(3, 50))
	n := 0
	_, head := admin.readGroup(cmp.Events, "", func(groupEvent) bool { n++; return n == 25 })
	_, tail := admin.readGroup(cmp.Events, head[len(head)-1].id, nil)
	lastGroupDone(t, tail)
	// Read again once all is stored: the whole from the database.
	for _, id := range cmp.Runs {
		waitForgotten(t, s, s.userID(t, "admin"), id)
	}
	_, whole := admin.readGroup(cmp.Events, "", nil)
	got, want := byPane(append(head, tail...), 3), byPane(whole, 3)
	for i := range 3 {
		if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
			t.Errorf("pane %d: live with a resume sent %d events, the stored stream %d; they differ", i, len(got[i]), len(want[i]))
		}
	}
	// A client that had group_done is told to stop reconnecting.
	if status, _ := admin.readGroup(cmp.Events, tail[len(tail)-1].id, nil); status != http.StatusNoContent {
		t.Errorf("resume after group_done answered %d, want 204", status)
	}
	// Resuming a finished comparison from the middle gives the rest only.
	_, rest := admin.readGroup(cmp.Events, whole[9].id, nil)
	if len(rest) != len(whole)-10 || rest[0].id != whole[10].id {
		t.Errorf("resume after the 10th event gave %d events, want %d", len(rest), len(whole)-10)
	}
}

func TestComparisonsBelongToTheirOwner(t *testing.T) {
	upstream := simUpstream(t, 20)
	s, admin := newTeam(t, withSim(upstreamConfig(upstream)))
	_, cmp := admin.postCompare("", simPane(1, 100), simPane(2, 100))
	bob := admin.addMember("bob")
	base := fmt.Sprintf("/groups/%d", cmp.Group)
	for _, path := range []string{base + "/events", base + "/replay", "/groups/999/events", "/groups/abc/replay"} {
		if status, _ := bob.readGroup(path, "", nil); status != http.StatusNotFound {
			t.Errorf("bob: GET %s answered %d, want 404", path, status)
		}
	}
	for _, path := range []string{base + "/cancel", base + "/shares"} {
		r := bob.post(path, "application/json", strings.NewReader(`{"audience":"public"}`), http.Header{"X-Csrf-Token": {bob.token()}, "Accept": {"application/json"}})
		if r.status != http.StatusNotFound {
			t.Errorf("bob: POST %s answered %d, want 404", path, r.status)
		}
	}
	if _, err := s.store.CreateShare(context.Background(), s.userID(t, "bob"), db.ShareGroup, cmp.Group, db.SharePublic); err == nil {
		t.Error("bob shared the admin's comparison")
	}
	// Bob's attempts stopped nothing.
	r := admin.post(base+"/cancel", "application/json", nil, http.Header{"X-Csrf-Token": {admin.token()}, "Accept": {"application/json"}})
	if r.status != http.StatusAccepted {
		t.Errorf("the owner's stop all answered %d %s", r.status, r.body)
	}
	// A team link needs an account.
	sh, err := s.store.CreateShare(context.Background(), s.userID(t, "admin"), db.ShareGroup, cmp.Group, db.ShareTeam)
	if err != nil {
		t.Fatal(err)
	}
	admin.readGroup(cmp.Events, "", nil)
	if status, _ := s.newClient(t).readGroup("/g/"+sh.Token+"/replay", "", nil); status != http.StatusUnauthorized {
		t.Errorf("a team replay signed out answered %d, want 401", status)
	}
	if status, events := bob.readGroup("/g/"+sh.Token+"/replay", "", nil); status != http.StatusOK {
		t.Errorf("a team replay for a member answered %d", status)
	} else {
		lastGroupDone(t, events)
	}
	if status, _ := s.newClient(t).readGroup("/g/no-such-token/replay", "", nil); status != http.StatusNotFound {
		t.Errorf("an unknown token answered %d, want 404", status)
	}
}

func TestCompareValidationSendsNothing(t *testing.T) {
	s, admin := newTeam(t)
	ok := `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"x"}]}}`
	bad := `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","temperature":7,"messages":[{"role":"user","content":"x"}]}}`
	seven := make([]string, 7)
	for i := range seven {
		seven[i] = ok
	}
	for _, tt := range []struct {
		name  string
		panes []string
	}{
		{"one pane", []string{ok}},
		{"seven panes", seven},
		{"one invalid pane", []string{ok, bad, ok}},
	} {
		r, out := admin.postCompare("", tt.panes...)
		if r.status != http.StatusUnprocessableEntity || out.Error == "" {
			t.Errorf("%s: %d %s, want 422 with an error", tt.name, r.status, r.body)
		}
		if tt.name == "one invalid pane" && (len(out.Panes) != 1 || out.Panes[0].Index != 1 || out.Panes[0].Fields["temperature"] == "") {
			t.Errorf("%s: panes %+v, want pane 1's temperature", tt.name, out.Panes)
		}
	}
	if r := admin.post("/compare/runs", "application/json", strings.NewReader(`{"panes":`), http.Header{"X-Csrf-Token": {admin.token()}, "Accept": {"application/json"}}); r.status != http.StatusBadRequest {
		t.Errorf("malformed JSON answered %d", r.status)
	}
	admID := s.userID(t, "admin")
	if _, err := s.store.Run(context.Background(), admID, 1); err == nil {
		t.Error("a refused comparison stored a run")
	}
	if _, err := s.store.Group(context.Background(), admID, 1); err == nil {
		t.Error("a refused comparison stored a group")
	}
}

func TestAComparisonIsFoundFromHistory(t *testing.T) {
	_, admin := newTeam(t)
	body := `{"title":"Two tides","panes":[` + simPane(1, 20) + `,` + simPane(2, 20) + `]}`
	r, out := admin.jsonPost("/compare/runs", body)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /compare/runs = %d %s", r.status, r.body)
	}
	group := int64(out["group"].(float64))
	admin.readGroup(out["events"].(string), "", nil)
	link := fmt.Sprintf(`href="/groups/%d"`, group)
	if h := admin.open("/history"); strings.Count(h.body, link) != 2 {
		t.Errorf("the history list links the comparison %d times, want once per run", strings.Count(h.body, link))
	}
	run := int64(out["runs"].([]any)[0].(float64))
	wantPage(t, admin.open(fmt.Sprintf("/runs/%d", run)), http.StatusOK, fmt.Sprintf("part of comparison %d", group))
	wantPage(t, admin.open(fmt.Sprintf("/groups/%d", group)), http.StatusOK, "Two tides")
}
