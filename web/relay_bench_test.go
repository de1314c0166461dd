package web_test

// The relay and storage benchmarks of issue 11: what the user waits for
// (the first token, the last token and done) through Knobs against the
// same upstream read directly, both readers decoding every event's JSON.
// They use only the HTTP surface, so the same file measures an older
// Knobs too: a POST /runs that answers JSON is followed by GET events.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"knobs/llm/sim"
	llmsse "knobs/llm/sse"
)

// benchRead is one stream as its reader saw it, every time from the
// request sent.
type benchRead struct {
	id                   int64
	answer, first, last  time.Duration // the POST's answer, the first and last text
	done                 time.Duration // done read (Knobs) or [DONE] (direct)
	events, textBytes    int
	sseBytes             int64 // bytes of event stream read
	tokens               int   // completion tokens in the usage
	status               string
	decodeErr, streamErr error
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// directRead reads body's stream straight from the upstream, decoding
// every chunk.
func directRead(hc *http.Client, upstream, body string) benchRead {
	var out benchRead
	start := time.Now()
	resp, err := hc.Post(upstream+"/v1/chat/completions", "application/json", strings.NewReader(streamBody(body)))
	if err != nil {
		out.streamErr = err
		return out
	}
	defer resp.Body.Close()
	out.answer = time.Since(start)
	cr := &countingReader{r: resp.Body}
	r := llmsse.NewReader(cr)
	for {
		e, err := r.Next()
		if err != nil {
			out.streamErr = err
			return out
		}
		out.events++
		if string(e.Data) == "[DONE]" {
			out.done, out.sseBytes = time.Since(start), cr.n
			return out
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(e.Data, &c); err != nil {
			out.decodeErr = err
			continue
		}
		if c.Usage != nil {
			out.tokens = c.Usage.CompletionTokens
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != "" {
				out.last = time.Since(start)
				if out.first == 0 {
					out.first = out.last
				}
				out.textBytes += len(ch.Delta.Content)
			}
		}
	}
}

// knobsRead starts spec through Knobs as the page does (the events in the
// POST's answer; an older Knobs answers JSON, and its events are read
// with GET) and reads them to done, decoding every event.
func (c *client) knobsRead(spec, token string) benchRead {
	var out benchRead
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, c.srv.url+"/runs", strings.NewReader(spec))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Csrf-Token", token)
	resp, err := c.http.Do(req)
	if err != nil {
		out.streamErr = err
		return out
	}
	out.answer = time.Since(start)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var run struct {
			ID     int64  `json:"id"`
			Events string `json:"events"`
		}
		err := json.NewDecoder(resp.Body).Decode(&run)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusCreated {
			out.streamErr = fmt.Errorf("POST /runs: %d %v", resp.StatusCode, err)
			return out
		}
		out.id = run.ID
		req, _ = http.NewRequest(http.MethodGet, c.srv.url+run.Events, nil)
		req.Header.Set("Accept", "text/event-stream")
		if resp, err = c.http.Do(req); err != nil {
			out.streamErr = err
			return out
		}
	} else {
		out.id, _ = strconv.ParseInt(resp.Header.Get("X-Knobs-Run"), 10, 64)
	}
	defer resp.Body.Close()
	cr := &countingReader{r: resp.Body}
	r := llmsse.NewReader(cr)
	for {
		e, err := r.Next()
		if err != nil {
			out.streamErr = fmt.Errorf("run %d: %w", out.id, err)
			return out
		}
		out.events++
		switch e.Event {
		case "delta":
			var d struct {
				Choice int    `json:"choice"`
				Text   string `json:"text"`
			}
			if err := json.Unmarshal(e.Data, &d); err != nil {
				out.decodeErr = err
			}
			out.last = time.Since(start)
			if out.first == 0 {
				out.first = out.last
			}
			out.textBytes += len(d.Text)
		case "texts": // text of several choices merged
			var d struct {
				Parts []struct {
					Event string `json:"event"`
					Text  string `json:"text"`
				} `json:"parts"`
			}
			if err := json.Unmarshal(e.Data, &d); err != nil {
				out.decodeErr = err
			}
			for _, p := range d.Parts {
				if p.Event == "delta" {
					out.last = time.Since(start)
					if out.first == 0 {
						out.first = out.last
					}
					out.textBytes += len(p.Text)
				}
			}
		case "done":
			var d struct {
				Status string `json:"status"`
				Usage  *struct {
					CompletionTokens int `json:"completion_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(e.Data, &d); err != nil {
				out.decodeErr = err
			}
			out.done, out.sseBytes, out.status = time.Since(start), cr.n, d.Status
			if d.Usage != nil {
				out.tokens = d.Usage.CompletionTokens
			}
			return out
		default:
			var v map[string]json.RawMessage
			if err := json.Unmarshal(e.Data, &v); err != nil {
				out.decodeErr = err
			}
		}
	}
}

func (r benchRead) check(b *testing.B, what string, tokens int) {
	b.Helper()
	if r.streamErr != nil || r.decodeErr != nil {
		b.Fatalf("%s: %v %v", what, r.streamErr, r.decodeErr)
	}
	if r.tokens != tokens {
		b.Fatalf("%s: %d tokens (status %q), want %d", what, r.tokens, r.status, tokens)
	}
}

// BenchmarkRelayStream: one stream of 200, 2,000 or 20,000 tokens, read
// directly and through Knobs, alternating which goes first. It reports
// the medians of the added first token, last token ÷ direct, done after
// the last token, and the process CPU per stream each way.
func BenchmarkRelayStream(b *testing.B) {
	for _, size := range []struct {
		name             string
		choices, perEach int
	}{{"200", 1, 200}, {"2k", 1, 2000}, {"20k", longChoices, longTokens}} {
		b.Run(size.name, func(b *testing.B) {
			upstream := simUpstream(b, sim.NoPacing)
			s, admin := newTeam(b, withSim(upstreamConfig(upstream)))
			user := s.userID(b, "admin")
			body := chatBody(1, size.choices, size.perEach)
			spec := runSpec(body)
			hc := upstream.Client()
			token := admin.token()
			tokens := size.choices * size.perEach
			// Warm up, and check both ways deliver every token.
			for range 2 {
				directRead(hc, upstream.URL, body).check(b, "direct", tokens)
				k := admin.knobsRead(spec, token)
				k.check(b, "knobs", tokens)
				s.settle(b, user, k.id)
			}
			var added, ratio, doneRatio, doneAfter, directCPU, knobsCPU, events []float64
			i := 0
			for b.Loop() {
				var d, k benchRead
				var dc, kc time.Duration
				readKnobs := func() {
					cpu := cpuTime()
					k = admin.knobsRead(spec, token)
					kc = cpuTime() - cpu
					k.check(b, "knobs", tokens)
					s.settle(b, user, k.id)
				}
				if i%2 == 1 {
					readKnobs()
				}
				cpu := cpuTime()
				d = directRead(hc, upstream.URL, body)
				dc = cpuTime() - cpu
				d.check(b, "direct", tokens)
				if i%2 == 0 {
					readKnobs()
				}
				i++
				added = append(added, msOf(k.first-d.first))
				ratio = append(ratio, float64(k.last)/float64(d.last))
				doneRatio = append(doneRatio, float64(k.done)/float64(d.done))
				doneAfter = append(doneAfter, msOf(k.done-k.last))
				directCPU, knobsCPU = append(directCPU, msOf(dc)), append(knobsCPU, msOf(kc))
				events = append(events, float64(k.events))
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(median(added), "added-first-ms")
			b.ReportMetric(quantile(added, 0.9), "added-first-p90-ms")
			b.ReportMetric(median(ratio), "last/direct")
			b.ReportMetric(median(doneRatio), "done/direct-done")
			b.ReportMetric(median(doneAfter), "done-after-last-ms")
			b.ReportMetric(median(directCPU), "direct-cpu-ms")
			b.ReportMetric(median(knobsCPU), "knobs-cpu-ms")
			b.ReportMetric(median(events), "knobs-events")
		})
	}
}

// BenchmarkRelayConcurrent: 50 streams of 2,000 tokens started at once by
// one user. It reports the medians of the POST's answer, the first
// token, and done after the last token.
func BenchmarkRelayConcurrent(b *testing.B) {
	const streams, tokens = 50, 2000
	upstream := simUpstream(b, sim.NoPacing)
	s, admin := newTeam(b, withSim(upstreamConfig(upstream)),
		withEnv("KNOBS_MAX_RUNS_PER_USER", strconv.Itoa(streams)), withEnv("KNOBS_MAX_RUNS", strconv.Itoa(streams)))
	user := s.userID(b, "admin")
	tr := admin.http.Transport.(*http.Transport)
	tr.MaxIdleConnsPerHost = 2 * streams
	token := admin.token()
	spec := runSpec(chatBody(1, 1, tokens))
	var answer, first, doneAfter []float64
	for b.Loop() {
		reads := make([]benchRead, streams)
		var wg sync.WaitGroup
		begin := make(chan struct{})
		for i := range streams {
			wg.Go(func() {
				<-begin
				reads[i] = admin.knobsRead(spec, token)
			})
		}
		close(begin)
		wg.Wait()
		b.StopTimer()
		for _, r := range reads {
			r.check(b, "knobs", tokens)
			answer, first, doneAfter = append(answer, msOf(r.answer)), append(first, msOf(r.first)), append(doneAfter, msOf(r.done-r.last))
			s.settle(b, user, r.id)
		}
		b.StartTimer()
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(median(answer), "post-answer-ms")
	b.ReportMetric(median(first), "first-token-ms")
	b.ReportMetric(median(doneAfter), "done-after-last-ms")
	b.ReportMetric(quantile(doneAfter, 0.9), "done-after-last-p90-ms")
}

// BenchmarkRelayStorage100k: one run of 100,000 tokens at a real pace
// (20,000 tokens/s: 5 s). It reports what the process wrote to files
// while the run went on (write(2) bytes from /proc/self/io, less the
// bytes of the two event streams on the loopback sockets) and its CPU.
func BenchmarkRelayStorage100k(b *testing.B) {
	const choices, perEach, tps = 16, 6250, 20000
	upstream := simUpstream(b, tps)
	s, admin := newTeam(b, withSim(upstreamConfig(upstream)))
	user := s.userID(b, "admin")
	body := chatBody(1, choices, perEach)
	spec := runSpec(body)
	token := admin.token()
	var written, cpus []float64
	for b.Loop() {
		d := directRead(upstream.Client(), upstream.URL, body) // its size: what the upstream wrote to its socket
		w0, cpu := wchar(b), cpuTime()
		k := admin.knobsRead(spec, token)
		s.settle(b, user, k.id)
		w1, c := wchar(b), cpuTime()-cpu
		k.check(b, "knobs", choices*perEach)
		written = append(written, float64(w1-w0-k.sseBytes-d.sseBytes)/(1<<20))
		cpus = append(cpus, msOf(c))
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(median(written), "file-MiB")
	b.ReportMetric(median(cpus), "cpu-ms")
}

// wchar is the bytes this process has passed to write(2) and the like.
func wchar(b *testing.B) int64 {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		b.Skip("no /proc/self/io here")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Fatal("no wchar in /proc/self/io")
	return 0
}

func median(v []float64) float64 { return quantile(v, 0.5) }

// quantile is the q-th quantile of v by rank.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}
