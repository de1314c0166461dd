package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"knobs/db"
	"knobs/runner"
)

// storeBigRuns keeps n finished runs of user, each with a request as
// sent of size bytes (a long prompt) and stored events of an eighth, and
// returns their ids and the prompt of each. The bulk is in the request,
// which search does not index, so that storing stays quick.
func storeBigRuns(t testing.TB, s *server, user int64, n, size int) ([]int64, map[int64]string) {
	t.Helper()
	ctx := context.Background()
	ids, prompts := []int64{}, map[int64]string{}
	for i := range n {
		prompt := fmt.Sprintf("prompt %d: ", i) + strings.Repeat(string(rune('a'+i%26)), size)
		id, err := s.store.CreateRun(ctx, db.Run{UserID: user, Provider: "sim", Endpoint: "chat", Model: "sim-fast",
			Spec: `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast"}}`, CreatedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(map[string]string{"prompt": prompt})
		res, _ := json.Marshal(runner.Result{Choices: []runner.Choice{{Content: fmt.Sprintf("answer %d", i)}}, Metrics: runner.Metrics{Tokens: size / 4}})
		events := []byte("event: delta\ndata: {\"content\":\"" + strings.Repeat("e", size) + "\"}\n\nevent: done\ndata: {}\n\n")
		if err := s.store.FinishRun(ctx, id, db.RunDone, string(raw), string(res), events, time.Now()); err != nil {
			t.Fatal(err)
		}
		ids, prompts[id] = append(ids, id), prompt
	}
	return ids, prompts
}

// heapAlloc is the live heap plus garbage not yet collected.
func heapAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Exports of many big runs: each is complete and correct and streams
// from bounded memory, and each user downloads only a few at once.
func TestExportsOfBigHistories(t *testing.T) {
	// Small send buffers on the server's side, so that an export nobody
	// reads cannot finish into the sockets' buffers.
	s, admin := newTeam(t, withEnv("KNOBS_EXPORTS_PER_USER", "2"), withAccepted(smallSendBuffers))
	const n, size = 64, 256 << 10 // 16 MiB of requests
	want, prompts := storeBigRuns(t, s, s.userID(t, "admin"), n, size)
	t.Run("bounded memory", func(t *testing.T) { exportInBoundedMemory(t, s, admin, n, size, want, prompts) })
	t.Run("a few at once", func(t *testing.T) { exportsPerUserAreLimited(t, s, admin, n) })
}

// exportInBoundedMemory: the export is read line by line and the live
// heap (of this process, the server's) measured after every line; it
// must stay far below the export's size.
// Loading every run, or every run's stored events (which are not
// exported), would exceed it.
func exportInBoundedMemory(t *testing.T, s *server, admin *client, n, size int, want []int64, prompts map[int64]string) {
	runtime.GC()
	base := heapAlloc()
	peak := base

	req, _ := http.NewRequest(http.MethodGet, s.url+"/history/export", nil)
	resp, err := admin.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export answered %d", resp.StatusCode)
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	var got []int64
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var l struct {
				ID         int64 `json:"id"`
				RawRequest struct {
					Prompt string `json:"prompt"`
				} `json:"raw_request"`
				Response struct {
					Choices []struct {
						Content string `json:"content"`
					} `json:"choices"`
				} `json:"response"`
				Metrics *struct {
					Tokens int `json:"tokens"`
				} `json:"metrics"`
			}
			if err := json.Unmarshal(line, &l); err != nil {
				t.Fatalf("line %d: %v", len(got)+1, err)
			}
			if l.RawRequest.Prompt != prompts[l.ID] {
				t.Fatalf("run %d: the exported request is not the stored one", l.ID)
			}
			if len(l.Response.Choices) != 1 || l.Response.Choices[0].Content != fmt.Sprintf("answer %d", len(got)) {
				t.Errorf("run %d: the exported answer is %+v", l.ID, l.Response.Choices)
			}
			if l.Metrics == nil || l.Metrics.Tokens != size/4 {
				t.Errorf("run %d: metrics %+v", l.ID, l.Metrics)
			}
			got = append(got, l.ID)
		}
		line = nil
		// Collected first: what is left is what is live, whatever garbage
		// this or an earlier test left behind.
		runtime.GC()
		peak = max(peak, heapAlloc())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("exported runs %v, want %v", got, want)
	}
	grew := (peak - base) >> 10
	t.Logf("heap grew by at most %d KiB while exporting %d KiB", grew, n*size>>10)
	// Every request (or every run's events) held at once would alone take
	// n*size; a line at a time keeps a few copies of one run live.
	if grew > uint64(n*size>>10/2) {
		t.Errorf("the heap grew by %d KiB while exporting %d runs of %d KiB: the export holds too many runs at once", grew, n, size>>10)
	}
}

// exportsPerUserAreLimited: a user may download a few exports at once;
// one more is refused with a clear 429 until one of them ends. Other
// users are not affected. The exports are big enough that they cannot
// finish into socket buffers while nobody reads them.
func exportsPerUserAreLimited(t *testing.T, s *server, admin *client, n int) {
	bob := admin.addMember("bob")
	storeRun(t, s, s.userID(t, "bob"), "bob's answer", nil)

	open := func(c *client) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.url+"/history/export", nil)
		resp, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first, second := open(admin), open(admin)
	defer second.Body.Close()
	for _, r := range []*http.Response{first, second} {
		if r.StatusCode != http.StatusOK {
			t.Fatalf("an export within the limit answered %d", r.StatusCode)
		}
	}
	third := admin.get("/history/export")
	wantPage(t, third, http.StatusTooManyRequests, "2 exports")
	if r := bob.get("/history/export"); r.status != http.StatusOK || !r.has("bob&#39;s answer") && !r.has("bob's answer") {
		t.Errorf("another user's export answered %d", r.status)
	}

	// Once the first is read to its end, another may start.
	if _, err := io.Copy(io.Discard, first.Body); err != nil {
		t.Fatal(err)
	}
	first.Body.Close()
	if r := admin.get("/history/export"); r.status != http.StatusOK || strings.Count(r.body, "\n") != n {
		t.Errorf("an export after one ended answered %d with %d lines", r.status, strings.Count(r.body, "\n"))
	}
}
