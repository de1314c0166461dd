package web_test

// The page reads a run's events from the answer to POST /runs; when that
// stream breaks before done, it reconnects with an EventSource after the
// last event id it saw, and the user ends up with exactly the text sent:
// nothing twice, nothing missing.

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// brokenStream replaces the page's fetch for POST /runs: it starts the run
// for real (asking for JSON, so that it works whatever the server does with
// text/event-stream), reads every frame of the run, and answers the page
// with a stream of the first part of them that breaks in the middle of a
// frame. The frames are written as a server could: consecutive deltas
// merged into one event carrying the last merged id, CRLF, CR and LF line
// ends, comments, data over two lines, chunks cut anywhere. The id of the
// last whole frame sent is kept in window.__cut, and every EventSource URL
// the page opens in window.__opened.
const brokenStream = `(() => {
  const real = window.fetch.bind(window);
  const RealES = window.EventSource;
  window.__opened = [];
  window.EventSource = class extends RealES {
    constructor(url, opts) { super(url, opts); window.__opened.push(String(url)); }
  };
  window.fetch = async (url, init) => {
    if (url !== "/runs" || !init || init.method !== "POST") return real(url, init);
    const res = await real(url, Object.assign({}, init, { headers: Object.assign({}, init.headers, { Accept: "application/json" }) }));
    if (!res.ok) return res;
    const made = await res.json();
    const all = await (await real(made.events)).text();
    const frames = all.split("\n\n").filter((f) => f.trim() !== "").map((f) => {
      const o = {};
      for (const l of f.split("\n")) { const i = l.indexOf(": "); if (i > 0) o[l.slice(0, i)] = l.slice(i + 2); }
      return o;
    });
    const merged = [];
    for (const f of frames) {
      const prev = merged[merged.length - 1];
      if (prev && prev.event === "delta" && f.event === "delta" && prev.n < 7) {
        const a = JSON.parse(prev.data), b = JSON.parse(f.data);
        if (a.choice === b.choice) { a.text += b.text; prev.data = JSON.stringify(a); prev.id = f.id; prev.n++; continue; }
      }
      merged.push(Object.assign({ n: 1 }, f));
    }
    const deltas = merged.filter((f) => f.event === "delta");
    const stop = merged.indexOf(deltas[Math.floor(deltas.length / 2)]);
    const ends = ["\r\n", "\n", "\r"];
    const text = (f, k) => {
      const e = ends[k % 3];
      const data = k % 4 === 1 && f.data.startsWith("{") ? "{" + e + "data: " + f.data.slice(1) : f.data;
      return (k % 5 === 0 ? ": keep-alive" + e : "") + "id: " + f.id + e + "event: " + f.event + e + "data: " + data + e + e;
    };
    let body = merged.slice(0, stop).map(text).join("");
    const partial = text(merged[stop], stop);
    body += partial.slice(0, Math.floor(partial.length / 2));
    window.__cut = merged[stop - 1].id;
    const bytes = new TextEncoder().encode(body);
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < bytes.length; i += 97) c.enqueue(bytes.slice(i, i + 97));
        c.close();
      },
    });
    return new Response(stream, { status: 200, headers: { "Content-Type": "text/event-stream; charset=utf-8", "X-Knobs-Run": String(made.id) } });
  };
})()`

func TestBrowserStreamResumesExactlyAfterABreak(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("sim", "sim-fast"),
		setMessage("Write about the history of lighthouses, in several paragraphs."),
		chromedp.Evaluate[chromedp.Void](`for (const f of ["max_completion_tokens", "min_completion_tokens"]) document.getElementById("p-" + f).value = "800"`),
		chromedp.Evaluate[chromedp.Void](brokenStream),
		chromedp.Click(chromedp.CSS("#pg-run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	run, res := lastRun(t, s, s.userID(t, "ada"))
	if run.Status != "done" || len(res.Choices) != 1 {
		t.Fatalf("stored run %q with %d choices, want done with one", run.Status, len(res.Choices))
	}
	var seen struct {
		Cut    string   `json:"cut"`
		Opened []string `json:"opened"`
		Error  string   `json:"error"`
		Text   string   `json:"text"`
	}
	seen, err = chromedp.Run(ctx, chromedp.Evaluate[struct {
		Cut    string   `json:"cut"`
		Opened []string `json:"opened"`
		Error  string   `json:"error"`
		Text   string   `json:"text"`
	}](`(() => {
		document.getElementById("pg-show-raw").click();
		const err = document.getElementById("pg-error");
		return { cut: window.__cut, opened: window.__opened, error: err.hidden ? "" : err.textContent,
			text: document.querySelector(".choice .content").textContent };
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if seen.Error != "" {
		t.Errorf("the page shows an error: %q", seen.Error)
	}
	want := "/runs/" + strconv.FormatInt(run.ID, 10) + "/events?after=" + seen.Cut
	if len(seen.Opened) != 1 || !strings.HasSuffix(seen.Opened[0], want) {
		t.Errorf("after the break the page opened %q, want one EventSource on %s", seen.Opened, want)
	}
	if content := res.Choices[0].Content; seen.Text != content {
		t.Errorf("the page shows %d characters, the run sent %d; they differ:\npage:   %.300q\nstored: %.300q", len(seen.Text), len(content), seen.Text, content)
	}
}

// TestBrowserStreamFallsBackToEventSource: a server that answers POST
// /runs with JSON (Knobs before the streamed answer, or a proxy that
// drops it) still gets the whole run shown, over an EventSource.
func TestBrowserStreamFallsBackToEventSource(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("sim", "sim-fast"),
		setMessage("Write about glaciers."),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "200"),
		// Every POST asks for JSON, whatever the page sent.
		chromedp.Evaluate[chromedp.Void](`(() => {
			const real = window.fetch.bind(window);
			window.fetch = (url, init) => real(url, init && init.method === "POST" ? Object.assign({}, init, { headers: Object.assign({}, init.headers, { Accept: "application/json" }) }) : init);
		})()`),
		chromedp.Click(chromedp.CSS("#pg-run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	_, res := lastRun(t, s, s.userID(t, "ada"))
	// The rendered answer goes in over a few frames; then the raw view.
	text, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
		if (!document.querySelector(".choice .content.md")) return "";
		document.getElementById("pg-show-raw").click();
		return document.querySelector(".choice .content").textContent;
	})()`, chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Choices) != 1 || text != res.Choices[0].Content {
		t.Fatalf("the page shows %d characters %.200q; the run stored %+v", len(text), text, res.Choices)
	}
}
