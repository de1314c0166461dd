package web_test

// BenchmarkBrowserStream: what a user feels while a fast answer streams
// into the page, measured in Chromium against a paced upstream that
// speaks the Cerebras chat wire format, one token per chunk, at an exact
// rate. Each row reports long tasks and frames over 50 ms while
// streaming, text updates per second, the slowest keystroke (typed into
// the prompt while streaming, input to the next frame), the p95 lag (the
// upstream's send time of a token to the frame that shows it) and the end
// lag (the last token sent to the page showing it). Nothing is asserted
// but the text: timing depends on the machine.
//
//	go test -run '^$' -bench BrowserStream -benchtime 3x ./web/

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"knobs/llm"
)

// pacedUpstream streams the same tokens to every request at rate tokens/s
// (0: as fast as it can), one token per chunk, and records when each
// token went out, per request in arrival order.
type pacedUpstream struct {
	tokens []string
	rate   float64

	mu    sync.Mutex
	sent  [][]float64 // per request: Unix ms at which token i was flushed
	total int         // characters of the answer
}

func newPacedUpstream(tb testing.TB, tokens []string, rate float64) (*pacedUpstream, *httptest.Server) {
	u := &pacedUpstream{tokens: tokens, rate: rate}
	for _, t := range tokens {
		u.total += len(t)
	}
	srv := httptest.NewServer(http.HandlerFunc(u.serve))
	tb.Cleanup(srv.Close)
	return u, srv
}

func (u *pacedUpstream) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	u.mu.Lock()
	slot := len(u.sent)
	u.sent = append(u.sent, make([]float64, len(u.tokens)))
	times := u.sent[slot]
	u.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	flusher := w.(http.Flusher)
	chunk := func(delta string, finish string, usage string) []byte {
		d, _ := json.Marshal(delta)
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		b := `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"sim-fast","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":{"content":` + string(d) + `},"finish_reason":` + f + `}]` + usage + "}\n\n"
		return []byte(b)
	}
	start := time.Now()
	var buf []byte
	for i := 0; i < len(u.tokens); {
		// Every token due by now goes out, each in its own chunk.
		due := len(u.tokens)
		if u.rate > 0 {
			due = min(len(u.tokens), int(time.Since(start).Seconds()*u.rate)+1)
		}
		buf = buf[:0]
		first := i
		for ; i < due; i++ {
			buf = append(buf, chunk(u.tokens[i], "", "")...)
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
		flusher.Flush()
		now := float64(time.Now().UnixNano()) / 1e6
		for k := first; k < i; k++ {
			times[k] = now
		}
		if u.rate > 0 && i < len(u.tokens) {
			next := start.Add(time.Duration(float64(i) / u.rate * float64(time.Second)))
			time.Sleep(time.Until(next)) // pacing the upstream, not synchronising a test
		}
	}
	usage := fmt.Sprintf(`,"usage":{"prompt_tokens":12,"completion_tokens":%d,"total_tokens":%d},"time_info":{"queue_time":0.0001,"prompt_time":0.001,"completion_time":1,"total_time":1}`, len(u.tokens), len(u.tokens)+12)
	w.Write(chunk("", "stop", usage))
	w.Write([]byte("data: [DONE]\n\n"))
	flusher.Flush()
}

// proseTokens is n plain tokens of 4-6 ASCII characters, with a newline
// every 60 tokens so that the text has paragraphs.
func proseTokens(n int) []string {
	words := []string{"light", "house", "keeper", "lamp", "coast", "storm", "ships", "night", "beam", "rock", "tower", "sea"}
	out := make([]string, n)
	for i := range out {
		w := " " + words[(i*7+i/13)%len(words)]
		if i%60 == 59 {
			w += ".\n\n"
		}
		out[i] = w
	}
	return out
}

// markdownTokens is n tokens of Markdown: headings, lists, emphasis,
// code blocks and tables, cut into tokens of about four characters.
func markdownTokens(n int) []string {
	section := "## Lighthouse %d\n\nThe **keeper** trimmed the *wick* each night; the `lamp` burned oil.\n\n" +
		"- a tower of stone\n- a lens of glass\n- a bell for fog\n\n" +
		"```go\nfunc beam(n int) int {\n\treturn n * 2\n}\n```\n\n" +
		"| ship | year |\n| --- | --- |\n| Hesper | 1872 |\n\n> Storms came from the west.\n\n"
	var out []string
	for k := 0; len(out) < n; k++ {
		s := fmt.Sprintf(section, k)
		for len(s) > 0 && len(out) < n {
			m := min(4, len(s))
			out = append(out, s[:m])
			s = s[m:]
		}
	}
	return out
}

// benchProbe measures in the page: the characters shown in every answer
// over time (from the mutation records, without reading the text), the
// animation frames and the frames that changed an answer, long tasks, and
// keystrokes (input event to the next frame). It starts at once and
// stops when the page leaves "running" and the rendered answers are in.
const benchProbe = `(() => {
  const p = window.__bench = { shown: new Map(), marks: [], frames: [], updates: 0, longTasks: [], keys: [], start: 0, streaming: false, over: false };
  const root = document.getElementById("playground") || document.getElementById("compare");
  const paneOf = (n) => { const pane = n.parentElement && n.parentElement.closest(".cmp-pane"); return pane ? Array.from(document.querySelectorAll(".cmp-pane")).indexOf(pane) : 0; };
  const inAnswer = (n) => { const el = n.nodeType === 1 ? n : n.parentElement; return el && el.closest(".content"); };
  let changed = false;
  const seen = new WeakMap();
  new MutationObserver((list) => {
    const now = performance.timeOrigin + performance.now();
    for (const r of list) {
      if (r.target === root && r.type === "attributes") {
        if (root.classList.contains("running")) p.streaming = true;
        else if (p.streaming) p.over = true; // what follows is the final rendering
        continue;
      }
      if (!p.streaming || !inAnswer(r.target)) continue;
      const box = inAnswer(r.target);
      if (!box.classList.contains("streaming")) continue; // the final rendering
      // Streamed text arrives by appendData on a block's Text node: count
      // each node's growth since it was last seen.
      if (r.type !== "characterData") continue;
      const add = r.target.data.length - (seen.get(r.target) || 0);
      seen.set(r.target, r.target.data.length);
      if (add <= 0) continue;
      const pane = paneOf(box);
      const total = (p.shown.get(pane) || 0) + add;
      p.shown.set(pane, total);
      p.marks.push([pane, total, now]);
      changed = true;
    }
  }).observe(document.body, { subtree: true, childList: true, characterData: true, characterDataOldValue: true, attributes: true, attributeFilter: ["class"] });
  new PerformanceObserver((l) => { for (const e of l.getEntries()) p.longTasks.push([e.startTime, e.duration]); }).observe({ type: "longtask" });
  const tick = (ts) => {
    if (p.streaming && !p.over) { p.frames.push([ts, changed ? 1 : 0]); if (changed) p.updates++; }
    changed = false;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  document.addEventListener("input", (e) => {
    const at = e.timeStamp;
    requestAnimationFrame((ts) => p.keys.push(ts - at));
  }, true);
})()`

// benchResult is what the probe saw in one stream.
type benchResult struct {
	Marks     [][3]float64 `json:"marks"` // pane, characters shown, Unix ms
	Frames    [][2]float64 `json:"frames"`
	LongTasks [][2]float64 `json:"longTasks"`
	Keys      []float64    `json:"keys"`
	Origin    float64      `json:"origin"`
}

const benchCollect = `(() => { const p = window.__bench; return { marks: p.marks, frames: p.frames, longTasks: p.longTasks, keys: p.keys, origin: performance.timeOrigin }; })()`

// streamFigures of a row.
type browserFigures struct {
	longTasks, slowFrames, updatesPerSec, slowestKeyMs, p95LagMs, endLagMs, doneTaskMs float64
}

// figures turns the probe's records and the upstream's send times into
// the row's figures.
func (u *pacedUpstream) figures(r benchResult, panes int) browserFigures {
	var f browserFigures
	u.mu.Lock()
	sent := slices.Clone(u.sent)
	u.mu.Unlock()
	cum := make([]int, len(u.tokens)) // characters up to and including token i
	n := 0
	for i, t := range u.tokens {
		n += len(t)
		cum[i] = n
	}
	var lags []float64
	for pane := 0; pane < panes && pane < len(sent); pane++ {
		var marks [][3]float64
		for _, m := range r.Marks {
			if int(m[0]) == pane {
				marks = append(marks, m)
			}
		}
		j := 0
		for i := range u.tokens {
			for j < len(marks) && int(marks[j][1]) < cum[i] {
				j++
			}
			if j == len(marks) {
				break
			}
			lags = append(lags, marks[j][2]-sent[pane][i])
		}
		if len(marks) > 0 {
			f.endLagMs = max(f.endLagMs, marks[len(marks)-1][2]-sent[pane][len(u.tokens)-1])
		}
	}
	slices.Sort(lags)
	if len(lags) > 0 {
		f.p95LagMs = lags[int(math.Ceil(0.95*float64(len(lags))))-1]
	}
	if len(r.Frames) > 1 {
		from, to := r.Frames[0][0], r.Frames[len(r.Frames)-1][0]
		updates := 0
		for i, fr := range r.Frames {
			updates += int(fr[1])
			if i > 0 && fr[0]-r.Frames[i-1][0] > 50 {
				f.slowFrames++
			}
		}
		f.updatesPerSec = float64(updates) / ((to - from) / 1000)
		for _, t := range r.LongTasks {
			if t[0]+t[1] >= from && t[0] <= to {
				f.longTasks++
			} else if t[0] > to {
				f.doneTaskMs = max(f.doneTaskMs, t[1])
			}
		}
	}
	for _, k := range r.Keys {
		f.slowestKeyMs = max(f.slowestKeyMs, k)
	}
	return f
}

// typeWhile types into the focused prompt every 150 ms while the page runs.
func typeWhile(tb testing.TB, ctx context.Context, running string) {
	for i := 0; i < 400; i++ {
		on, err := chromedp.Run(ctx, chromedp.Evaluate[bool](running))
		if err != nil {
			tb.Fatal(err)
		}
		if !on {
			return
		}
		if err := chromedp.Do(ctx, chromedp.KeyEvent("k")); err != nil {
			tb.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond) // a user's typing pace
	}
	tb.Fatal("the stream did not end within a minute")
}

// browserStreamRow streams tokens at rate into the playground (panes 1)
// or the compare page (panes > 1) and returns the figures.
func browserStreamRow(b *testing.B, tokens []string, rate float64, panes int) browserFigures {
	up, srv := newPacedUpstream(b, tokens, rate)
	s := newServer(b, withSim(llm.ProviderConfig{ID: "sim", Name: "Simulator", Dialect: llm.DialectSim, BaseURL: srv.URL}))
	ctx := newBrowser(b)
	browserSignUp(b, ctx, s, "ada")
	n := fmt.Sprint(len(tokens))
	var running, done string
	if panes == 1 {
		running = `document.getElementById("playground").classList.contains("running") || !document.querySelector("#pg-metrics dl")`
		done = `!!document.querySelector(".choice .content.md")`
		err := chromedp.Do(ctx,
			choose("sim", "sim-fast"),
			setMessage("Write at length about lighthouses."),
			chromedp.Evaluate[chromedp.Void](`document.getElementById("p-max_completion_tokens").value = "`+n+`"`),
			chromedp.Evaluate[chromedp.Void](benchProbe),
			chromedp.Click(chromedp.CSS("#pg-run")),
			chromedp.Focus(chromedp.CSS("#pg-messages .message [data-content]")),
		)
		if err != nil {
			b.Fatal(err)
		}
	} else {
		running = `document.getElementById("compare").classList.contains("running") || document.getElementById("cmp-summary").hidden`
		done = `document.querySelectorAll(".cmp-pane .content.md").length === ` + fmt.Sprint(panes)
		steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(s.url + "/compare"), comparePanesReady(2)}
		for k := 2; k < panes; k++ {
			steps = append(steps, chromedp.Click(chromedp.CSS("#cmp-add")), comparePanesReady(k+1))
		}
		steps = append(steps,
			chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".cmp-pane").forEach((p) => {
				p.querySelector("[data-model]").value = "sim-fast";
				p.querySelector('[data-param="max_completion_tokens"] input').value = "`+n+`";
			})`),
			chromedp.Evaluate[chromedp.Void](benchProbe),
			chromedp.Click(chromedp.CSS("#cmp-run")),
			chromedp.Focus(chromedp.CSS("#cmp-messages .message textarea")),
		)
		if err := chromedp.Do(ctx, steps...); err != nil {
			b.Fatal(err)
		}
	}
	typeWhile(b, ctx, running)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](done, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		b.Fatalf("waiting for the rendered answer: %v", err)
	}
	res, err := chromedp.Run(ctx, chromedp.Evaluate[benchResult](benchCollect))
	if err != nil {
		b.Fatal(err)
	}
	// The text must be exact whatever the timing.
	want := strings.Join(tokens, "")
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`Array.from(window.__bench.shown.values())`))
	if err != nil {
		b.Fatal(err)
	}
	if len(shown) != panes {
		b.Fatalf("text streamed into %d answers, want %d", len(shown), panes)
	}
	// The probe counts text as it is appended to a block still marked as
	// streaming; the last flush of a stream also ends it, so what it
	// counts can fall short of the answer. The text itself is checked
	// byte for byte by TestBrowserFastStream and
	// TestBrowserStreamResumesExactlyAfterABreak.
	for _, c := range shown {
		if int(c) > len(want) {
			b.Fatalf("an answer streamed %d characters, more than the %d the upstream sent", int(c), len(want))
		}
	}
	return up.figures(res, panes)
}

func BenchmarkBrowserStream(b *testing.B) {
	rows := []struct {
		name   string
		tokens []string
		rate   float64
		panes  int
	}{
		{"playground-20k-3kps", proseTokens(20000), 3000, 1},
		{"playground-20k-10kps", proseTokens(20000), 10000, 1},
		{"playground-20k-unpaced", proseTokens(20000), 0, 1},
		{"compare-3x20k-3kps", proseTokens(20000), 3000, 3},
		{"markdown-20k-3kps", markdownTokens(20000), 3000, 1},
	}
	for _, row := range rows {
		b.Run(row.name, func(b *testing.B) {
			var all []browserFigures
			for b.Loop() {
				all = append(all, browserStreamRow(b, row.tokens, row.rate, row.panes))
			}
			worst := func(get func(browserFigures) float64) float64 {
				m := 0.0
				for _, f := range all {
					m = max(m, get(f))
				}
				return m
			}
			least := func(get func(browserFigures) float64) float64 {
				m := math.Inf(1)
				for _, f := range all {
					m = min(m, get(f))
				}
				return m
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(worst(func(f browserFigures) float64 { return f.longTasks }), "long-tasks")
			b.ReportMetric(worst(func(f browserFigures) float64 { return f.slowFrames }), "frames>50ms")
			b.ReportMetric(least(func(f browserFigures) float64 { return f.updatesPerSec }), "updates/s")
			b.ReportMetric(worst(func(f browserFigures) float64 { return f.slowestKeyMs }), "slowest-key-ms")
			b.ReportMetric(worst(func(f browserFigures) float64 { return f.p95LagMs }), "p95-lag-ms")
			b.ReportMetric(worst(func(f browserFigures) float64 { return f.endLagMs }), "end-lag-ms")
			b.ReportMetric(worst(func(f browserFigures) float64 { return f.doneTaskMs }), "done-task-ms")
		})
	}
}
