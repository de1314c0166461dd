package web_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"knobs/db"
)

// storeComparison keeps a finished comparison of owner with panes panes
// of frames delta frames of size bytes each, recorded over span (0: no
// recorded times, so it replays at once), and a public link to it. It
// returns the link's token.
func storeComparison(t testing.TB, s *server, owner int64, panes, frames, size int, span time.Duration) string {
	t.Helper()
	ctx := context.Background()
	gid, err := s.store.CreateGroup(ctx, owner, "Demo", "[]")
	if err != nil {
		t.Fatal(err)
	}
	for p := range panes {
		id, err := s.store.CreateRun(ctx, db.Run{UserID: owner, Provider: "sim", Endpoint: "chat", Model: "sim-fast",
			Spec: `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast"}}`, CreatedAt: time.Now(), GroupID: gid, Pane: p})
		if err != nil {
			t.Fatal(err)
		}
		var ev strings.Builder
		var times []byte
		for j := range frames {
			fmt.Fprintf(&ev, "id: %d\nevent: delta\ndata: {\"choice\":0,\"content\":\"%s\"}\n\n", j+1, strings.Repeat("x", size))
			times = binary.LittleEndian.AppendUint32(times, uint32(time.Duration(j)*span/time.Duration(frames)/time.Millisecond))
		}
		fmt.Fprintf(&ev, "id: %d\nevent: done\ndata: {\"status\":\"done\",\"metrics\":{\"tokens\":%d}}\n\n", frames+1, frames)
		times = binary.LittleEndian.AppendUint32(times, uint32(span/time.Millisecond))
		chunk := &db.RunChunk{First: 1, Frames: []byte(ev.String())}
		if span > 0 {
			chunk.Times = times
		}
		if err := s.store.WriteRuns(ctx, []db.RunWrite{{RunID: id, Chunk: chunk,
			Finish: &db.RunFinish{Status: db.RunDone, Result: `{"choices":[{"content":"x"}]}`, At: time.Now()}}}); err != nil {
			t.Fatal(err)
		}
	}
	sh, err := s.store.CreateShare(ctx, owner, db.ShareGroup, gid, db.SharePublic)
	if err != nil {
		t.Fatal(err)
	}
	return sh.Token
}

// openReplay starts a replay and reads up to its first frame; the answer
// is returned open, or read whole when it is not a stream.
func openReplay(t testing.TB, c *client, path string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.srv.url+path, nil)
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body)
	}
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("replay %s ended before its first frame: %v", path, err)
		}
		if strings.HasPrefix(line, "data: ") {
			return resp, line
		}
	}
}

// A public replay link streams to a few viewers per address and a bound
// number in all; past either, a 429 says which. A replay that ended gives
// its place back.
func TestReplayStreamsAreLimitedPerAddressAndPerLink(t *testing.T) {
	s, _ := newTeam(t, withEnv("KNOBS_REPLAY_STREAMS_PER_ADDRESS", "2"), withEnv("KNOBS_REPLAY_STREAMS_PER_LINK", "3"))
	admin := s.userID(t, "admin")
	// Frames every second or so: a viewer that left is noticed soon.
	long := "/g/" + storeComparison(t, s, admin, 2, 3600, 10, time.Hour) + "/replay"

	one := s.newClientFrom(t, "127.0.0.1")
	for range 2 {
		if r, body := openReplay(t, one, long); r.StatusCode != http.StatusOK {
			t.Fatalf("a replay within the limits answered %d: %s", r.StatusCode, body)
		}
	}
	r, body := openReplay(t, one, long)
	if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "Your address already has 2 replays streaming") {
		t.Errorf("a third replay from one address answered %d: %s", r.StatusCode, body)
	}
	if r, body := openReplay(t, s.newClientFrom(t, "127.0.0.2"), long); r.StatusCode != http.StatusOK {
		t.Fatalf("a replay from another address answered %d: %s", r.StatusCode, body)
	}
	r, body = openReplay(t, s.newClientFrom(t, "127.0.0.3"), long)
	if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "replayed 3 times at once") {
		t.Errorf("a fourth replay of the link answered %d: %s", r.StatusCode, body)
	}

	// Replays that end give their places back: one address replays a
	// short comparison to its end more times than its limit, one after
	// another.
	short := "/g/" + storeComparison(t, s, admin, 2, 10, 10, 0) + "/replay"
	four := s.newClientFrom(t, "127.0.0.4")
	for i := range 4 {
		r := four.get(short)
		if r.status != http.StatusOK || !r.has("event: group_done") {
			t.Fatalf("replay %d of a short comparison answered %d: %s", i+1, r.status, r.body)
		}
	}
}

// Thousands of viewers of one link must not each hold the comparison's
// events: every viewer streams from one shared copy, so the server's heap
// grows by about one comparison, not one per viewer.
func TestReplayViewersShareOneCopyOfTheFrames(t *testing.T) {
	s, _ := newTeam(t)
	const panes, frames, size = 2, 2000, 1000 // 4 MB of events
	link := "/g/" + storeComparison(t, s, s.userID(t, "admin"), panes, frames, size, time.Hour) + "/replay"

	runtime.GC()
	base := heapAlloc()
	const viewers = 16
	for i := range viewers {
		c := s.newClientFrom(t, fmt.Sprintf("127.0.0.%d", 1+i/4))
		if r, body := openReplay(t, c, link); r.StatusCode != http.StatusOK {
			t.Fatalf("viewer %d: %d %s", i, r.StatusCode, body)
		}
	}
	runtime.GC()
	grew := int64(heapAlloc()) - int64(base)
	t.Logf("%d viewers of %d MB of events: the heap grew by %d MB", viewers, panes*frames*size/1_000_000, grew/1_000_000)
	if limit := int64(3 * panes * frames * size); grew > limit {
		t.Errorf("%d viewers grew the heap by %d MB, more than %d MB: each holds its own copy of the events", viewers, grew/1_000_000, limit/1_000_000)
	}
}
