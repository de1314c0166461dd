package web_test

// What Knobs sends out, what it lets back in, and clients that stop
// reading: custom providers on metadata addresses, a key echoed into the
// answer, and stalled event-stream readers, through the real app.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"knobs/db"
	"knobs/runner"
)

// customRun is a POST /runs body for the custom provider id.
func customRun(id string) string {
	return `{"provider":"` + id + `","endpoint":"chat","body":{"model":"m","messages":[{"role":"user","content":"hi"}]}}`
}

// openAIChunk is one OpenAI-style chat chunk carrying content.
func openAIChunk(content string) string {
	return fmt.Sprintf("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", content)
}

// eventText joins the data of every event, for looking for a string.
func eventText(evs []sseEvent) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString("event: " + e.event + "\ndata: " + e.data + "\n")
	}
	return b.String()
}

func TestACustomProviderOnAMetadataAddressIsRefused(t *testing.T) {
	t.Parallel()
	srv, admin := newTeam(t)
	for _, base := range []string{
		"http://169.254.169.254/latest",
		"http://169.254.170.2",
		"http://[fd00:ec2::254]:80",
		"http://[fe80::1]:11434",
		"http://100.100.100.200",
		"http://metadata.google.internal/computeMetadata/v1",
		"http://[::ffff:a9fe:a9fe]",
	} {
		r := admin.postForm("/settings/providers", form("name", "Inside", "base_url", base, "key", "sk-would-be-sent-0000"))
		wantPage(t, r, http.StatusUnprocessableEntity, "link-local or a cloud metadata", "KNOBS_ALLOW_LINK_LOCAL_UPSTREAMS=true")
	}
	// Model servers on this machine and on the LAN are what custom
	// providers are for.
	wantPage(t, admin.submit("/settings/providers", form("name", "Ollama", "base_url", "http://127.0.0.1:11434")), http.StatusOK, "Added the provider Ollama.")
	wantPage(t, admin.submit("/settings/providers", form("name", "vLLM", "base_url", "http://192.168.1.20:8000/v1")), http.StatusOK, "Added the provider vLLM.")

	// One saved before this check (or whose name now resolves there) is
	// refused when Knobs connects, and the run says why.
	if err := srv.store.CreateCustomProvider(context.Background(), db.CustomProvider{ID: "old", Name: "Old", BaseURL: "http://169.254.169.254"}, nil, ""); err != nil {
		t.Fatal(err)
	}
	r, run := admin.postRun(customRun("old"))
	if r.status != http.StatusCreated {
		t.Fatalf("POST /runs: %d %s", r.status, r.body)
	}
	_, evs := admin.readEvents(run.Events, 0, nil)
	if text := eventText(evs); !strings.Contains(text, "event: error") || !strings.Contains(text, "KNOBS_ALLOW_LINK_LOCAL_UPSTREAMS") {
		t.Errorf("the run on a metadata address did not end with a refusal naming the setting:\n%s", text)
	}

	// The setting lifts the refusal.
	_, admin2 := newTeam(t, withEnv("KNOBS_ALLOW_LINK_LOCAL_UPSTREAMS", "true"))
	wantPage(t, admin2.submit("/settings/providers", form("name", "Link", "base_url", "http://169.254.10.10:8000")), http.StatusOK, "Added the provider Link.")
}

func TestAKeyEchoedIntoTheAnswerIsNeverShownOrStored(t *testing.T) {
	t.Parallel()
	const key = "sk-team-echo-key-0123456789abcdef"
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		// The key comes back cut in three, and once more whole.
		for _, part := range []string{"I was called with " + got[:9], got[9:20], got[20:] + ". Again: " + got + "."} {
			io.WriteString(w, openAIChunk(part))
			f.Flush()
		}
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(upstream.Close)
	_, admin := newTeam(t)
	wantPage(t, admin.submit("/settings/providers", form("name", "Echo", "base_url", upstream.URL, "key", key)), http.StatusOK, "Added the provider Echo.")

	r, run := admin.postRun(customRun("echo"))
	if r.status != http.StatusCreated {
		t.Fatalf("POST /runs: %d %s", r.status, r.body)
	}
	_, evs := admin.readAllEvents(run.Events, 0, nil)
	live := eventText(evs)
	if !strings.Contains(live, "event: done") || !strings.Contains(live, "I was called with ***. Again: ***.") {
		t.Errorf("the stream does not show the answer with the key redacted:\n%s", live)
	}
	_, replay := admin.readAllEvents(run.Events, 0, nil)
	for what, body := range map[string]string{
		"live events":     live,
		"replayed events": eventText(replay),
		"run page":        admin.get(fmt.Sprintf("/runs/%d", run.ID)).body,
		"history":         admin.get("/history").body,
		"history search":  admin.get("/history?q=called").body,
		"export":          admin.get("/history/export").body,
		"events download": admin.get(fmt.Sprintf("/runs/%d/events.txt", run.ID)).body,
		"raw view":        admin.get(fmt.Sprintf("/runs/%d/raw", run.ID)).body,
	} {
		if strings.Contains(body, key) || strings.Contains(body, key[9:20]+key[20:]) {
			t.Errorf("the %s holds the key", what)
		}
	}
}

// endlessWideUpstream streams content chunks of size bytes as fast as its
// reader takes them, until the request ends.
func endlessWideUpstream(t *testing.T, size int) *httptest.Server {
	t.Helper()
	chunk := openAIChunk(strings.Repeat("x", size))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
			f.Flush()
			time.Sleep(time.Millisecond) // about 8 MB/s at 8 KiB chunks
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// stalledReader opens path as an event stream over a raw connection
// with the client's cookies, reads the response headers and then stops
// reading, as a frozen tab or a dead proxy does.
func stalledReader(t *testing.T, c *client, path string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.srv.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	u, _ := http.NewRequest(http.MethodGet, c.srv.url+path, nil)
	var cookies []string
	for _, ck := range c.http.Jar.Cookies(u.URL) {
		cookies = append(cookies, ck.Name+"="+ck.Value)
	}
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nCookie: %s\r\n\r\n", path, u.URL.Host, strings.Join(cookies, "; "))
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReaderSize(conn, 16)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		t.Fatalf("events: %q %v", status, err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading headers: %v", err)
		}
		if line == "\r\n" {
			return conn
		}
	}
}

// smallSendBuffers gives the server's connections a small socket send
// buffer, so that a reader that stops reading stalls the server's writes
// after kilobytes rather than megabytes.
func smallSendBuffers(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(16 << 10)
	}
}

// frameBytes is how many bytes of frames run id has made so far.
func frameBytes(s *server, id, user int64) int {
	run, ok := s.runs.Run(id, user)
	if !ok {
		return -1
	}
	frames, _, _ := run.Frames(0)
	n := 0
	for _, f := range frames {
		n += len(f)
	}
	return n
}

func TestAReaderThatStopsReadingIsDroppedAndTheRunStops(t *testing.T) {
	t.Parallel()
	upstream := endlessWideUpstream(t, 8<<10)
	srv, admin := newTeam(t, withEnv("KNOBS_STREAM_WRITE_TIMEOUT", "300ms"), withRunner(runner.Options{IdleGrace: 50 * time.Millisecond}), withAccepted(smallSendBuffers))
	admin.submit("/settings/providers", form("name", "Endless", "base_url", upstream.URL))
	r, run := admin.postRun(customRun("endless"))
	if r.status != http.StatusCreated {
		t.Fatalf("POST /runs: %d %s", r.status, r.body)
	}
	conn := stalledReader(t, admin, run.Events)

	// Once nobody reads the stream, the write deadline drops the client,
	// its listener leaves, and the run, heard by nobody, is cancelled
	// and stored. Without the deadline the write waits forever and the
	// run streams on.
	user := srv.userID(t, "admin")
	deadline := time.Now().Add(15 * time.Second)
	for {
		stored, err := srv.store.Run(context.Background(), user, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Status != db.RunRunning {
			if stored.Status != db.RunCancelled {
				t.Errorf("the run ended %s, want cancelled: nobody was listening", stored.Status)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run still streams to a reader that stopped reading (%d bytes of frames made)", frameBytes(srv, run.ID, user))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The server closed the connection: reading what the buffers hold
	// reaches its end.
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, conn); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Errorf("the dropped connection is still open: %v", err)
	}
}

func TestShutdownEndsWithAReaderThatStoppedReading(t *testing.T) {
	t.Parallel()
	upstream := endlessWideUpstream(t, 8<<10)
	// The write timeout is longer than the shutdown's: shutdown itself
	// must end the stalled stream.
	srv, admin := newTeam(t, withEnv("KNOBS_STREAM_WRITE_TIMEOUT", "1h"), withAccepted(smallSendBuffers))
	admin.submit("/settings/providers", form("name", "Endless", "base_url", upstream.URL))
	r, run := admin.postRun(customRun("endless"))
	if r.status != http.StatusCreated {
		t.Fatalf("POST /runs: %d %s", r.status, r.body)
	}
	stalledReader(t, admin, run.Events)
	// Enough frames that the socket buffers (the server's is small, the
	// reader's about 128 KiB while it does not read) are full and the
	// server's write to the reader waits.
	user := srv.userID(t, "admin")
	deadline := time.Now().Add(30 * time.Second)
	for frameBytes(srv, run.ID, user) < 2<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the run made only %d bytes of frames", frameBytes(srv, run.ID, user))
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.runs.Shutdown(ctx); err != nil {
		t.Fatalf("runs shutdown: %v", err)
	}
	if err := srv.app.ShutdownWithTimeout(5 * time.Second); err != nil {
		t.Errorf("the server did not shut down with a reader that stopped reading: %v", err)
	}
}
