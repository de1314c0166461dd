package web_test

// The relay: Knobs between a reader and a simulator upstream served over
// real HTTP, against reading that upstream directly. The benchmarks here
// are the figures of BENCHMARKS.md; they report what they measure and
// assert only correctness. TestManyStreamsLoseNoToken is the correctness
// half of the load benchmark, small enough for the race detector.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"knobs/llm"
	"knobs/llm/sim"
	llmsse "knobs/llm/sse"
)

// simUpstream serves a simulator at tps tokens/s (sim.NoPacing: as fast as
// the reader takes it) over loopback HTTP until the test ends.
func simUpstream(tb testing.TB, tps float64) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(sim.NewHandler(sim.Options{TokensPerSecond: tps}))
	tb.Cleanup(srv.Close)
	return srv
}

// upstreamConfig is the "sim" provider pointing at srv, reached over HTTP
// by the real client as any remote provider is.
func upstreamConfig(srv *httptest.Server) llm.ProviderConfig {
	return llm.ProviderConfig{ID: "sim", Name: "Simulator", Dialect: llm.DialectSim, BaseURL: srv.URL}
}

// chatBody is a sim-fast chat request for exactly tokens tokens in each of
// n choices, seeded so that its text is known in advance.
func chatBody(seed, n, tokens int) string {
	return fmt.Sprintf(`{"model":"sim-fast","messages":[{"role":"user","content":"Tell me about glaciers and the rivers they feed"}],"seed":%d,"n":%d,"min_tokens":%d,"max_tokens":%d}`, seed, n, tokens, tokens)
}

// runSpec is the body of POST /runs for body on the sim provider.
func runSpec(body string) string {
	return `{"provider":"sim","endpoint":"chat","body":` + body + `}`
}

// streamBody is body as the client sends it upstream: streamed, with usage.
func streamBody(body string) string {
	return strings.TrimSuffix(body, "}") + `,"stream":true,"stream_options":{"include_usage":true}}`
}

// directTiming is one stream read straight from the upstream.
type directTiming struct {
	ttft   time.Duration // request sent -> first content chunk read
	last   time.Duration // request sent -> last content chunk read
	total  time.Duration // request sent -> [DONE] read
	chunks int           // content chunks
}

var contentField = []byte(`"content":`)

// readDirect posts body to the upstream with stream:true and reads its
// events to [DONE] with our SSE reader, without decoding the chunks: the
// least a client can do.
func readDirect(tb testing.TB, hc *http.Client, upstream, body string) directTiming {
	tb.Helper()
	payload := streamBody(body)
	var t directTiming
	start := time.Now()
	resp, err := hc.Post(upstream+"/v1/chat/completions", "application/json", strings.NewReader(payload))
	if err != nil {
		tb.Fatalf("direct: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		tb.Fatalf("direct: %d %s", resp.StatusCode, b)
	}
	r := llmsse.NewReader(resp.Body)
	for {
		e, err := r.Next()
		if err != nil {
			tb.Fatalf("direct: stream ended before [DONE]: %v", err)
		}
		if string(e.Data) == "[DONE]" {
			t.total = time.Since(start)
			return t
		}
		if bytes.Contains(e.Data, contentField) {
			t.last = time.Since(start)
			if t.chunks == 0 {
				t.ttft = t.last
			}
			t.chunks++
		}
	}
}

// relayed is one run streamed through Knobs, as its reader saw it.
type relayed struct {
	id      int64
	created time.Duration // POST /runs sent -> its answer read
	ttft    time.Duration // POST /runs sent -> first delta event read
	last    time.Duration // POST /runs sent -> last delta event read
	done    time.Duration // POST /runs sent -> done event read
	deltas  int
	text    []string // per choice, when asked for
	final   doneEvent
}

// doneEvent is the part of the done event's data these tests read.
type doneEvent struct {
	Status string     `json:"status"`
	Usage  *llm.Usage `json:"usage"`
}

// relay starts spec with POST /runs and reads its events to done with our
// SSE reader. With keep it decodes every delta and the done event;
// without, it only looks at the event type, as readDirect does.
func (c *client) relay(spec string, keep bool) (relayed, error) {
	token := c.token()
	var out relayed
	start := time.Now()
	req, err := http.NewRequest(http.MethodPost, c.srv.url+"/runs", strings.NewReader(spec))
	if err != nil {
		return out, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Csrf-Token", token)
	resp, err := c.http.Do(req)
	if err != nil {
		return out, fmt.Errorf("POST /runs: %w", err)
	}
	created, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		return out, fmt.Errorf("POST /runs: %d %s %v", resp.StatusCode, created, err)
	}
	var run struct {
		ID     int64  `json:"id"`
		Events string `json:"events"`
	}
	if err := json.Unmarshal(created, &run); err != nil {
		return out, fmt.Errorf("POST /runs answered %q: %w", created, err)
	}
	out.id, out.created = run.ID, time.Since(start)
	req, err = http.NewRequest(http.MethodGet, c.srv.url+run.Events, nil)
	if err != nil {
		return out, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err = c.http.Do(req)
	if err != nil {
		return out, fmt.Errorf("GET %s: %w", run.Events, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("GET %s: %d", run.Events, resp.StatusCode)
	}
	r := llmsse.NewReader(resp.Body)
	for {
		e, err := r.Next()
		if err != nil {
			return out, fmt.Errorf("run %d: stream ended before done after %d deltas: %w", run.ID, out.deltas, err)
		}
		switch e.Event {
		case "delta":
			out.last = time.Since(start)
			if out.deltas == 0 {
				out.ttft = out.last
			}
			out.deltas++
			if keep {
				var d struct {
					Choice int    `json:"choice"`
					Text   string `json:"text"`
				}
				if err := json.Unmarshal(e.Data, &d); err != nil {
					return out, fmt.Errorf("run %d: delta %q: %w", run.ID, e.Data, err)
				}
				for len(out.text) <= d.Choice {
					out.text = append(out.text, "")
				}
				out.text[d.Choice] += d.Text
			}
		case "error":
			return out, fmt.Errorf("run %d: error event %s", run.ID, e.Data)
		case "done":
			out.done = time.Since(start)
			if keep {
				if err := json.Unmarshal(e.Data, &out.final); err != nil {
					return out, fmt.Errorf("run %d: done %q: %w", run.ID, e.Data, err)
				}
			}
			return out, nil
		}
	}
}

// storedResult is the part of a stored run's result these tests read.
type storedResult struct {
	Choices []struct {
		Content string `json:"content"`
	} `json:"choices"`
	Usage *llm.Usage `json:"usage"`
}

// expectedText is what the upstream answers body with, read whole and
// unpaced from a simulator of its own: the simulator is deterministic for
// a seed, so this is the text every stream of body must deliver.
func expectedText(tb testing.TB, body string) []string {
	tb.Helper()
	srv := simUpstream(tb, sim.NoPacing)
	resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Index   int `json:"index"`
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		tb.Fatal(err)
	}
	texts := make([]string, len(out.Choices))
	for _, ch := range out.Choices {
		texts[ch.Index] = ch.Message.Content
	}
	return texts
}

// manyStreams runs one stream per spec at once through c and returns what
// each reader saw and the wall time from the first POST to the last done.
func manyStreams(tb testing.TB, c *client, specs []string) ([]relayed, []error, time.Duration) {
	tb.Helper()
	tr := c.http.Transport.(*http.Transport)
	tr.MaxIdleConnsPerHost = 2 * len(specs)
	c.token()
	out := make([]relayed, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	begin := make(chan struct{})
	for i, spec := range specs {
		wg.Go(func() {
			<-begin
			out[i], errs[i] = c.relay(spec, true)
		})
	}
	start := time.Now()
	close(begin)
	wg.Wait()
	return out, errs, time.Since(start)
}

// checkStreams fails unless every stream ended done without error, its
// deltas joined are the expected text and the text stored for its run,
// and the usage counts tokens tokens per choice. (Knobs merges the deltas
// that arrive together, so they are not counted.)
func checkStreams(tb testing.TB, s *server, user int64, runs []relayed, errs []error, want [][]string, tokens int) {
	tb.Helper()
	failed := 0
	fail := func(format string, args ...any) {
		tb.Helper()
		if failed++; failed <= 5 {
			tb.Errorf(format, args...)
		}
	}
	for i, r := range runs {
		if errs[i] != nil {
			fail("stream %d: %v", i, errs[i])
			continue
		}
		if r.final.Status != "done" {
			fail("run %d ended %q", r.id, r.final.Status)
		}
		if !slices.Equal(r.text, want[i]) {
			fail("run %d: the streamed text (%d choices, %d bytes in the first) is not the upstream's (%d choices, %d bytes)", r.id, len(r.text), len(first(r.text)), len(want[i]), len(first(want[i])))
		}
		wantTokens := tokens * len(want[i])
		if r.final.Usage == nil || r.final.Usage.CompletionTokens != wantTokens {
			fail("run %d: usage %+v, want %d completion tokens", r.id, r.final.Usage, wantTokens)
		}
		// The done event goes out before the run is stored.
		s.settle(tb, user, r.id)
		stored, err := s.store.Run(context.Background(), user, r.id)
		if err != nil {
			fail("run %d: %v", r.id, err)
			continue
		}
		var res storedResult
		if err := json.Unmarshal([]byte(stored.Result), &res); err != nil {
			fail("run %d: stored result: %v", r.id, err)
			continue
		}
		var texts []string
		for _, ch := range res.Choices {
			texts = append(texts, ch.Content)
		}
		if stored.Status != "done" || !slices.Equal(texts, r.text) {
			fail("run %d: stored %q with %d choices, not what streamed", r.id, stored.Status, len(texts))
		}
		if res.Usage == nil || res.Usage.CompletionTokens != wantTokens {
			fail("run %d: stored usage %+v, want %d completion tokens", r.id, res.Usage, wantTokens)
		}
	}
	if failed > 5 {
		tb.Errorf("... and %d more failures", failed-5)
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// loadSpecs builds n run specs of tokens tokens each over a few seeds, and
// the text each must deliver.
func loadSpecs(tb testing.TB, n, tokens int) ([]string, [][]string) {
	tb.Helper()
	const seeds = 8
	texts := make([][]string, seeds)
	for seed := range seeds {
		texts[seed] = expectedText(tb, chatBody(seed, 1, tokens))
	}
	specs := make([]string, n)
	want := make([][]string, n)
	for i := range n {
		specs[i] = runSpec(chatBody(i%seeds, 1, tokens))
		want[i] = texts[i%seeds]
	}
	return specs, want
}

func TestManyStreamsLoseNoToken(t *testing.T) {
	const streams, tokens = 50, 400
	upstream := simUpstream(t, sim.NoPacing)
	// One user runs them all: past the default limit of runs at once.
	s, admin := newTeam(t, withSim(upstreamConfig(upstream)), withEnv("KNOBS_MAX_RUNS_PER_USER", strconv.Itoa(streams)))
	specs, want := loadSpecs(t, streams, tokens)
	runs, errs, wall := manyStreams(t, admin, specs)
	checkStreams(t, s, s.userID(t, "admin"), runs, errs, want, tokens)
	t.Logf("%d streams of %d tokens in %v", streams, tokens, wall.Round(time.Millisecond))
}

// percentile is the p-th quantile (0 to 1) of samples, by rank.
func percentile(samples []time.Duration, p float64) time.Duration {
	s := slices.Clone(samples)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// settle waits until run id is stored to its end (the raw response is
// written last), so that its storing does not fall into the next
// measurement.
func (s *server) settle(tb testing.TB, user, id int64) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		raw, err := s.store.RunRawResponse(context.Background(), user, id)
		if err == nil && raw != nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("run %d is not stored after 10s (%v)", id, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// cpuTime is the CPU time the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The 20,000-token stream: four choices of 5,000 tokens, because the
// simulator caps one answer at sim-fast's 8,192 output tokens. Unpaced,
// the upstream sends each token as its own chunk, so it is 20,000 chunks
// either way.
const (
	longChoices = 4
	longTokens  = 5000
)

// BenchmarkLongStream: time to the last token of a 20,000-token stream
// through Knobs against reading the upstream directly. Each iteration
// reads one stream each way, alternating which goes first.
func BenchmarkLongStream(b *testing.B) {
	upstream := simUpstream(b, sim.NoPacing)
	s, admin := newTeam(b, withSim(upstreamConfig(upstream)))
	user := s.userID(b, "admin")
	body := chatBody(1, longChoices, longTokens)
	spec := runSpec(body)
	hc := upstream.Client()

	// Warm up connections and the database, and check the counts once.
	d := readDirect(b, hc, upstream.URL, body)
	r, err := admin.relay(spec, false)
	if err != nil {
		b.Fatal(err)
	}
	s.settle(b, user, r.id)
	if d.chunks != longChoices*longTokens || r.final.Usage == nil || r.final.Usage.CompletionTokens != longChoices*longTokens {
		b.Fatalf("direct read %d content chunks, Knobs relayed a run of %+v tokens; want %d each", d.chunks, r.final.Usage, longChoices*longTokens)
	}

	var direct, knobsLast, knobsDone []time.Duration
	var directCPU, knobsCPU time.Duration
	i := 0
	for b.Loop() {
		readKnobs := func() {
			cpu := cpuTime()
			r, err := admin.relay(spec, false)
			if err != nil {
				b.Fatal(err)
			}
			knobsCPU += cpuTime() - cpu
			knobsLast = append(knobsLast, r.last)
			knobsDone = append(knobsDone, r.done)
			s.settle(b, user, r.id)
		}
		if i%2 == 1 {
			readKnobs()
		}
		cpu := cpuTime()
		direct = append(direct, readDirect(b, hc, upstream.URL, body).last)
		directCPU += cpuTime() - cpu
		if i%2 == 0 {
			readKnobs()
		}
		i++
	}
	tokens := float64(longChoices * longTokens * len(direct))
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(msOf(percentile(direct, 0.5)), "direct-ms")
	b.ReportMetric(msOf(percentile(knobsLast, 0.5)), "knobs-last-ms")
	b.ReportMetric(msOf(percentile(knobsDone, 0.5)), "knobs-done-ms")
	b.ReportMetric(float64(percentile(knobsLast, 0.5))/float64(percentile(direct, 0.5)), "knobs/direct")
	// The CPU the whole process spent per token each way (upstream and
	// reader included): the difference is what relaying through Knobs costs.
	b.ReportMetric(float64(directCPU.Nanoseconds())/tokens, "direct-cpu-ns/token")
	b.ReportMetric(float64(knobsCPU.Nanoseconds())/tokens, "knobs-cpu-ns/token")
}

// BenchmarkFirstToken: the time to first token Knobs adds. Each
// iteration reads a short stream directly (request sent -> first content
// chunk) and through Knobs (POST /runs sent -> first delta event).
func BenchmarkFirstToken(b *testing.B) {
	upstream := simUpstream(b, sim.NoPacing)
	s, admin := newTeam(b, withSim(upstreamConfig(upstream)))
	user := s.userID(b, "admin")
	body := chatBody(1, 1, 20)
	spec := runSpec(body)
	hc := upstream.Client()
	for range 5 { // warm up
		readDirect(b, hc, upstream.URL, body)
		r, err := admin.relay(spec, false)
		if err != nil {
			b.Fatal(err)
		}
		s.settle(b, user, r.id)
	}
	var direct, knobs, added, created []time.Duration
	i := 0
	for b.Loop() {
		var d, k time.Duration
		readKnobs := func() {
			r, err := admin.relay(spec, false)
			if err != nil {
				b.Fatal(err)
			}
			k = r.ttft
			created = append(created, r.created)
			s.settle(b, user, r.id)
		}
		if i%2 == 1 {
			readKnobs()
		}
		d = readDirect(b, hc, upstream.URL, body).ttft
		if i%2 == 0 {
			readKnobs()
		}
		i++
		direct, knobs, added = append(direct, d), append(knobs, k), append(added, k-d)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(msOf(percentile(direct, 0.5)), "direct-p50-ms")
	b.ReportMetric(msOf(percentile(direct, 0.9)), "direct-p90-ms")
	b.ReportMetric(msOf(percentile(knobs, 0.5)), "knobs-p50-ms")
	b.ReportMetric(msOf(percentile(knobs, 0.9)), "knobs-p90-ms")
	b.ReportMetric(msOf(percentile(added, 0.5)), "added-p50-ms")
	b.ReportMetric(msOf(percentile(added, 0.9)), "added-p90-ms")
	b.ReportMetric(msOf(percentile(created, 0.5)), "post-p50-ms")
}

// BenchmarkManyStreams: 200 streams at once, each paced by the upstream
// at 1,000 tokens/s, 2,000 tokens each. Every stream must end done with
// the upstream's exact text, stored, and its usage.
func BenchmarkManyStreams(b *testing.B) {
	const streams, tokens, tps = 200, 2000, 1000
	upstream := simUpstream(b, tps)
	// One user runs them all: past the default limits of runs at once.
	s, admin := newTeam(b, withSim(upstreamConfig(upstream)),
		withEnv("KNOBS_MAX_RUNS_PER_USER", strconv.Itoa(streams)), withEnv("KNOBS_MAX_RUNS", strconv.Itoa(streams)))
	user := s.userID(b, "admin")
	specs, want := loadSpecs(b, streams, tokens)
	var walls, ttfts, totals []time.Duration
	var rates []float64
	for b.Loop() {
		runs, errs, wall := manyStreams(b, admin, specs)
		b.StopTimer()
		checkStreams(b, s, user, runs, errs, want, tokens)
		walls = append(walls, wall)
		for _, r := range runs {
			ttfts, totals = append(ttfts, r.ttft), append(totals, r.done)
			if span := r.last - r.ttft; span > 0 {
				rates = append(rates, float64(tokens-1)/span.Seconds())
			}
		}
		b.StartTimer()
	}
	slices.Sort(rates)
	wall := percentile(walls, 0.5)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(msOf(wall), "wall-ms")
	b.ReportMetric(float64(streams*tokens)/wall.Seconds(), "tokens/s")
	b.ReportMetric(msOf(percentile(ttfts, 0.5)), "ttft-p50-ms")
	b.ReportMetric(msOf(percentile(ttfts, 1)), "ttft-max-ms")
	b.ReportMetric(msOf(percentile(totals, 0.5)), "stream-p50-ms")
	b.ReportMetric(msOf(percentile(totals, 1)), "stream-max-ms")
	if len(rates) > 0 {
		// From a stream's first token to its last, as its reader saw it.
		b.ReportMetric(rates[len(rates)/2], "stream-p50-tokens/s")
		b.ReportMetric(rates[0], "stream-min-tokens/s")
	}
}
