package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"knobs/llm/sim"
)

// exportedLine is one line of an export, as a reader decodes it.
type exportedLine struct {
	ID        int64     `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	Provider  string    `json:"provider"`
	Endpoint  string    `json:"endpoint"`
	Model     string    `json:"model"`
	Status    string    `json:"status"`
	Request   struct {
		Provider string          `json:"provider"`
		Endpoint string          `json:"endpoint"`
		Body     json.RawMessage `json:"body"`
	} `json:"request"`
	RawRequest struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	} `json:"raw_request"`
	Response struct {
		Choices []struct {
			Content string `json:"content"`
		} `json:"choices"`
	} `json:"response"`
	Metrics *struct {
		Tokens int `json:"tokens"`
	} `json:"metrics"`
	Note    string `json:"note"`
	Starred bool   `json:"starred"`
}

// exportKeys are the fields of every exported line.
var exportKeys = []string{"created_at", "endpoint", "finished_at", "id", "metrics", "model", "note", "provider", "raw_request", "request", "response", "starred", "status", "variables"}

// export downloads query and decodes it line by line: each line must be
// one JSON object with exactly exportKeys.
func (c *client) export(t *testing.T, query string) (*response, []exportedLine) {
	t.Helper()
	r := c.get("/history/export" + query)
	if r.status != http.StatusOK {
		return r, nil
	}
	var lines []exportedLine
	sc := bufio.NewScanner(strings.NewReader(r.body))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &fields); err != nil {
			t.Fatalf("line %d is not one JSON object: %v\n%s", len(lines)+1, err, sc.Text())
		}
		keys := slices.Sorted(maps.Keys(fields))
		if !slices.Equal(keys, exportKeys) {
			t.Errorf("line %d has fields %v, want %v", len(lines)+1, keys, exportKeys)
		}
		var l exportedLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v", len(lines)+1, err)
		}
		lines = append(lines, l)
	}
	return r, lines
}

func ids(lines []exportedLine) []int64 {
	var out []int64
	for _, l := range lines {
		out = append(out, l.ID)
	}
	return out
}

func TestExportReadsBackWithoutTheKey(t *testing.T) {
	const key = "csk-export-secret-9f8e7d6c5b4a3210"
	upstream := httptest.NewServer(sim.NewHandler(sim.Options{}))
	t.Cleanup(upstream.Close)
	s, admin := newTeam(t, withEnv("CEREBRAS_API_KEY", key), withEnv("CEREBRAS_BASE_URL", upstream.URL))

	keyed, _ := admin.runToEnd(`{"provider":"cerebras","endpoint":"chat","body":{"model":"sim-fast","messages":[{"role":"user","content":"Tell me about glaciers"}],"max_completion_tokens":30}}`)
	second, _ := admin.runToEnd(simChat("Tell me about rivers", `,"temperature":0.3`))
	third, _ := admin.runToEnd(simChat("Tell me about lakes", ""))
	ctx, admID := context.Background(), s.userID(t, "admin")
	if err := s.store.SetRunNote(ctx, admID, second, "keep <this> one"); err != nil {
		t.Fatal(err)
	}
	if err := s.store.SetRunStarred(ctx, admID, second, true); err != nil {
		t.Fatal(err)
	}
	bob := admin.addMember("bob")
	his, _ := bob.runToEnd(simChat("bob's own", ""))

	r, all := admin.export(t, "")
	if ct := r.header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("Content-Type %q, want application/x-ndjson", ct)
	}
	wantDisp := `attachment; filename="knobs-runs-` + time.Now().Format("20060102") + `.jsonl"`
	if d := r.header.Get("Content-Disposition"); d != wantDisp {
		t.Errorf("Content-Disposition %q, want %q", d, wantDisp)
	}
	if strings.Contains(r.body, key) || strings.Contains(r.body, "5b4a3210") {
		t.Fatal("the export holds the provider key")
	}
	if got := fmt.Sprint(ids(all)); got != fmt.Sprint([]int64{keyed, second, third}) {
		t.Fatalf("export of all has runs %s, want the admin's %d, %d, %d oldest first (not bob's %d)", got, keyed, second, third, his)
	}
	k := all[0]
	if k.Provider != "cerebras" || k.Endpoint != "chat" || k.Model != "sim-fast" || k.Status != "done" || k.CreatedAt.IsZero() {
		t.Errorf("first line %+v", k)
	}
	if k.Request.Provider != "cerebras" || !strings.Contains(string(k.Request.Body), "Tell me about glaciers") {
		t.Errorf("request %+v is not the RunSpec", k.Request)
	}
	if !strings.HasPrefix(k.RawRequest.URL, upstream.URL) || k.RawRequest.Headers["Authorization"] != "Bearer ***" {
		t.Errorf("raw request %+v: want the upstream URL and the key redacted", k.RawRequest)
	}
	if len(k.Response.Choices) == 0 || k.Response.Choices[0].Content == "" || k.Metrics == nil || k.Metrics.Tokens == 0 {
		t.Errorf("response %+v, metrics %+v: want the output and the metrics", k.Response, k.Metrics)
	}
	if !strings.Contains(string(all[1].Request.Body), `"temperature":0.3`) {
		t.Errorf("second run's request body %s lacks its temperature", all[1].Request.Body)
	}
	if all[1].Note != "keep <this> one" || !all[1].Starred || all[0].Starred || all[0].Note != "" {
		t.Errorf("notes and stars: %q %v, %q %v", all[0].Note, all[0].Starred, all[1].Note, all[1].Starred)
	}

	// Selected runs: another user's and unknown ids are skipped.
	_, some := admin.export(t, fmt.Sprintf("?ids=%d,%d,%d,99999", third, his, keyed))
	if got := fmt.Sprint(ids(some)); got != fmt.Sprint([]int64{keyed, third}) {
		t.Errorf("export of selected runs has %s, want %d and %d", got, keyed, third)
	}
	_, repeated := admin.export(t, fmt.Sprintf("?ids=%d&ids=%d", second, second))
	if got := fmt.Sprint(ids(repeated)); got != fmt.Sprint([]int64{second}) {
		t.Errorf("export of ids=%d twice has %s", second, got)
	}

	// None of the ids is the user's: 404, as for one unknown run.
	for _, q := range []string{fmt.Sprintf("?ids=%d", his), "?ids=99999", fmt.Sprintf("?ids=%d,%d", his, 99999)} {
		if r, _ := admin.export(t, q); r.status != http.StatusNotFound {
			t.Errorf("export %s answered %d, want 404", q, r.status)
		}
	}
	if r, lines := bob.export(t, fmt.Sprintf("?ids=%d,%d", keyed, second)); r.status != http.StatusNotFound || len(lines) != 0 {
		t.Errorf("bob exporting the admin's runs answered %d with %d lines, want 404", r.status, len(lines))
	}
	_, bobs := bob.export(t, "")
	if got := fmt.Sprint(ids(bobs)); got != fmt.Sprint([]int64{his}) {
		t.Errorf("bob's export of all has %s, want only %d", got, his)
	}
	if r, _ := admin.export(t, "?ids=1,x"); r.status != http.StatusBadRequest {
		t.Errorf("a malformed id answered %d, want 400", r.status)
	}
}

// sseText is the body of a live event stream as the events.txt download
// should hold it: without the retry hint and pings, which are not events.
func sseText(t *testing.T, c *client, path string) string {
	t.Helper()
	resp, err := c.http.Get(c.srv.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.TrimPrefix(string(body), "retry: 1000\n\n")
	return strings.ReplaceAll(text, ": ping\n\n", "")
}

func TestEventsDownloadIsTheStreamedText(t *testing.T) {
	_, admin := newTeam(t)
	r, run := admin.postRun(simChat("Tell me about glaciers", ""))
	if r.status != http.StatusCreated {
		t.Fatalf("POST /runs = %d %s", r.status, r.body)
	}
	streamed := sseText(t, admin, run.Events)
	if !strings.Contains(streamed, "event: done\n") {
		t.Fatalf("the stream did not end with done:\n%s", streamed)
	}

	got := admin.get(fmt.Sprintf("/runs/%d/events.txt", run.ID))
	if got.status != http.StatusOK {
		t.Fatalf("events.txt answered %d: %s", got.status, errorText(got))
	}
	if ct := got.header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	want := fmt.Sprintf(`attachment; filename="run-%d.sse.txt"`, run.ID)
	if d := got.header.Get("Content-Disposition"); d != want {
		t.Errorf("Content-Disposition %q, want %q", d, want)
	}
	// Stored as the runner made them; the live stream merged the text
	// events that arrived together.
	if a, b := canonical(parseSSE(got.body)), canonical(parseSSE(streamed)); !slices.Equal(a, b) {
		t.Errorf("events.txt differs from what streamed:\n--- events.txt\n%s\n--- streamed\n%s", got.body, streamed)
	}

	bob := admin.addMember("bob")
	for _, path := range []string{fmt.Sprintf("/runs/%d/events.txt", run.ID), "/runs/99999/events.txt", "/runs/abc/events.txt"} {
		r := bob.get(path)
		if r.status != http.StatusNotFound || strings.Contains(r.body, "event: ") {
			t.Errorf("bob: %s answered %d, want 404 without events", path, r.status)
		}
	}
}
