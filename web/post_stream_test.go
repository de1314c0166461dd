package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"knobs/db"
)

// postStream posts body to path asking for the events in the answer, and
// returns the answer's status and headers and its events (or its body
// when it is not a stream).
func (c *client) postStream(path, body string) (*http.Response, []sseEvent, string) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.srv.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Csrf-Token", c.token())
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, nil, string(b)
	}
	return resp, parseSSE(string(b)), string(b)
}

// POST /runs that asks for text/event-stream answers the run's events
// itself: the same events a later GET gives, the run's id in a header;
// bad input still gets its JSON answer and nothing runs.
func TestPostRunsAnswersTheEventStream(t *testing.T) {
	s, admin := newTeam(t)
	resp, events, body := admin.postStream("/runs", simRun)
	if resp.StatusCode != http.StatusOK || events == nil {
		t.Fatalf("POST /runs with Accept: text/event-stream = %d %s", resp.StatusCode, body)
	}
	id, err := strconv.ParseInt(resp.Header.Get("X-Knobs-Run"), 10, 64)
	if err != nil || resp.Header.Get("Location") != "/runs/"+strconv.FormatInt(id, 10)+"/events" {
		t.Fatalf("X-Knobs-Run %q, Location %q", resp.Header.Get("X-Knobs-Run"), resp.Header.Get("Location"))
	}
	if events[0].event != "request" || events[len(events)-1].event != "rendered" || events[len(events)-2].event != "done" {
		t.Errorf("the answer's events run from %q to %q, want request ... done, rendered", events[0].event, events[len(events)-1].event)
	}
	_, again := admin.readAllEvents("/runs/"+strconv.FormatInt(id, 10)+"/events", 0, nil)
	if !slices.Equal(canonical(again), canonical(events)) {
		t.Errorf("GET of the run's events (%d) differs from the POST's answer (%d)", len(again), len(events))
	}
	if got := s.storedOutput(t, s.userID(t, "admin"), id); got == "" || !strings.Contains(textOf(events), got) {
		t.Errorf("the stored answer %q is not what streamed", got)
	}

	filter := db.RunFilter{UserID: s.userID(t, "admin")}
	before, _, _ := s.store.Runs(t.Context(), filter)
	resp, events, body = admin.postStream("/runs", `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[],"temperature":9}}`)
	if resp.StatusCode != http.StatusUnprocessableEntity || events != nil || !strings.Contains(body, `"fields"`) {
		t.Errorf("bad input with Accept: text/event-stream = %d %s, want 422 with the fields", resp.StatusCode, body)
	}
	if after, _, _ := s.store.Runs(t.Context(), filter); len(after) != len(before) {
		t.Errorf("a refused run was stored")
	}
}

// POST /compare/runs that asks for text/event-stream answers the
// comparison's stream: every pane to its done, then group_done, with the
// group and the runs in headers.
func TestPostCompareAnswersTheGroupStream(t *testing.T) {
	_, admin := newTeam(t)
	body := `{"title":"two","panes":[` + simPane(1, 20) + `,` + simPane(2, 30) + `]}`
	resp, events, raw := admin.postStream("/compare/runs", body)
	if resp.StatusCode != http.StatusOK || events == nil {
		t.Fatalf("POST /compare/runs with Accept: text/event-stream = %d %s", resp.StatusCode, raw)
	}
	if resp.Header.Get("X-Knobs-Group") == "" || len(strings.Split(resp.Header.Get("X-Knobs-Runs"), ",")) != 2 {
		t.Errorf("X-Knobs-Group %q, X-Knobs-Runs %q", resp.Header.Get("X-Knobs-Group"), resp.Header.Get("X-Knobs-Runs"))
	}
	dones := 0
	for _, e := range events {
		if e.event == "done" {
			dones++
		}
	}
	if dones != 2 || events[len(events)-1].event != "group_done" {
		t.Errorf("%d panes ended, and the stream ended with %q; want 2 and group_done", dones, events[len(events)-1].event)
	}
}

// textOf joins the delta text of events, whichever way it was merged.
func textOf(events []sseEvent) string {
	var b strings.Builder
	for _, e := range events {
		switch e.event {
		case "delta":
			var d struct{ Text string }
			json.Unmarshal([]byte(e.data), &d)
			b.WriteString(d.Text)
		case "texts":
			var d struct {
				Parts []struct{ Event, Text string }
			}
			json.Unmarshal([]byte(e.data), &d)
			for _, p := range d.Parts {
				if p.Event == "delta" {
					b.WriteString(p.Text)
				}
			}
		}
	}
	return b.String()
}
