package web_test

// Browser tests of the compare page as a demo (issue 13): panes named by
// what they sweep, different models by default, honest awards, presenter
// mode with what the audience needs, pickers that list the panes and raw
// token ids in the panes.

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"knobs/llm/llmtest"
)

// compareSettled waits until no comparison runs and the summary is shown.
func compareSettled() chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](`!document.getElementById("cmp-summary").hidden && !document.getElementById("compare").classList.contains("running")`,
		chromedp.WithPollingInterval(50*time.Millisecond))
}

// eval runs js in the page and returns its value.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// viewShot saves what the viewport shows, like screenshot: a full-page
// capture leaves the panes' scrolling answers blank, and presenter mode is
// what the screen shows.
func viewShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(t.TempDir(), name)
	if dir := os.Getenv("KNOBS_SCREENSHOTS"); dir != "" {
		path = filepath.Join(dir, name)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// screen sets the viewport and the screen (which full screen takes) to w×h.
func screen(w, h int64) chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(w, h, func(p *emulation.SetDeviceMetricsOverrideParams, _ *emulation.SetTouchEmulationEnabledParams) {
		p.ScreenWidth, p.ScreenHeight = w, h
	})
}

// pageShot saves the whole page, in a viewport as tall as the page.
func pageShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	w, h := eval[int64](t, ctx, `innerWidth`), eval[int64](t, ctx, `document.documentElement.scrollHeight`)
	if err := chromedp.Do(ctx, screen(w, h)); err != nil {
		t.Fatal(err)
	}
	viewShot(t, ctx, name)
}

const paneTitlesJS = `Array.from(document.querySelectorAll(".cmp-pane .pane-label")).map(h => h.textContent)`

// pickerJS lists the options of a pane picker and the one it shows.
func pickerJS(id string) string {
	return `(() => { const s = document.getElementById("` + id + `"); return Array.from(s.options).map(o => o.textContent).concat("shows: " + (s.selectedOptions[0] ? s.selectedOptions[0].textContent : "")); })()`
}

func TestBrowserCompareSweepPanesAreTitledByTheirValues(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/compare"),
		comparePanesReady(2),
		chromedp.Evaluate[chromedp.Void](`(() => {
			const p = document.querySelector(".cmp-pane");
			p.querySelector("input[data-model]").value = "sim-fast";
			p.querySelector('[name="max_completion_tokens"]').value = "30";
			document.querySelector(".cmp-sweep").open = true;
			document.querySelector(".cmp-start").open = true;
		})()`),
		chromedp.SetValue(chromedp.CSS("#cmp-sweep-param"), "temperature"),
		chromedp.SendKeys(chromedp.CSS("#cmp-sweep-values"), "0.2, 0.9, 1.5"),
		chromedp.Click(chromedp.CSS("#cmp-sweep-fill")),
		comparePanesReady(3),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"temperature 0.2", "temperature 0.9", "temperature 1.5"}
	if got := eval[[]string](t, ctx, paneTitlesJS); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the sweep's panes are titled %q, want %q", got, want)
	}
	// The Into and Base pane pickers list the panes by those titles, and
	// show one of them (they were blank).
	for _, id := range []string{"cmp-preset-pane", "cmp-sweep-base"} {
		got := eval[[]string](t, ctx, pickerJS(id))
		if strings.Join(got, "|") != strings.Join(append(want, "shows: temperature 0.2"), "|") {
			t.Errorf("#%s lists %q, want the panes' titles %q and the first chosen", id, got, want)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#cmp-run")), compareSettled()); err != nil {
		t.Fatal(err)
	}
	// What went over the wire: each pane's run has its temperature.
	user := s.userID(t, "ada")
	for i, temp := range []string{"0.2", "0.9", "1.5"} {
		run, err := s.store.Run(context.Background(), user, int64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(run.RawRequest, `"temperature":`+temp) || !strings.Contains(run.RawRequest, `"model":"sim-fast"`) {
			t.Errorf("pane %d sent %s, want sim-fast at temperature %s", i+1, run.RawRequest, temp)
		}
	}
	// Badges (awards, cut off) do not push a pane's answer out of line
	// with its neighbours'.
	tops := eval[[]float64](t, ctx, `Array.from(document.querySelectorAll(".cmp-pane .pane-output")).map(o => o.getBoundingClientRect().top)`)
	badges := eval[int](t, ctx, `document.querySelectorAll(".cmp-pane .pane-badges .badge").length`)
	if badges == 0 || len(tops) != 3 || tops[0] != tops[1] || tops[1] != tops[2] {
		t.Errorf("with %d badges on the panes, their answers start at %v, want one line", badges, tops)
	}
	summary := eval[string](t, ctx, `document.getElementById("cmp-summary").textContent`)
	if !strings.Contains(summary, "Fastest first token: temperature ") {
		t.Errorf("the summary %q does not name the fastest pane by its title", summary)
	}
	pageShot(t, ctx, "compare-sweep.png")
}

func TestBrowserCompareNewComparisonPanesStartOnDifferentModels(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	models := `Array.from(document.querySelectorAll(".cmp-pane input[data-model]")).map(i => i.value)`
	err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/compare"), comparePanesReady(2))
	if err != nil {
		t.Fatal(err)
	}
	got := eval[[]string](t, ctx, models)
	if len(got) != 2 || got[0] != "sim-fast" || got[1] == "" || got[1] == got[0] {
		t.Fatalf("a new comparison's panes run %q, want the playground's sim-fast and another model", got)
	}
	// A third pane takes a model neither of the others runs.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#cmp-add")), comparePanesReady(3)); err != nil {
		t.Fatal(err)
	}
	got = eval[[]string](t, ctx, models)
	if len(got) != 3 || got[2] == "" || got[2] == got[0] || got[2] == got[1] {
		t.Errorf("the panes run %q, want three different models", got)
	}
	// Panes that differ by model are titled by it.
	if titles := eval[[]string](t, ctx, paneTitlesJS); strings.Join(titles, "|") != strings.Join(got, "|") {
		t.Errorf("the panes are titled %q, want their models %q", titles, got)
	}
}

func TestBrowserPresenterModeShowsTitlePromptModelsAndCutOff(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	// The race is watched as the page writes it: a rate written while
	// the comparison is still running is a live race.
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/compare"),
		comparePanesReady(2),
		chromedp.Evaluate[chromedp.Void](`(() => {
			document.querySelectorAll(".cmp-pane").forEach((p, i) => {
				p.querySelector("input[data-model]").value = ["sim-fast", "sim-slow"][i];
				p.querySelector("input[data-model]").dispatchEvent(new Event("change"));
			});
			const last = document.querySelectorAll("#cmp-messages [data-content]");
			last[last.length - 1].value = "Name three lighthouses.";
			last[last.length - 1].dispatchEvent(new Event("input", { bubbles: true }));
			window.liveRates = [];
			new MutationObserver(() => {
				if (!document.getElementById("compare").classList.contains("running")) return;
				document.querySelectorAll(".cmp-pane .race-rate").forEach((r, i) => {
					if (r.textContent.includes("tokens/s")) window.liveRates.push(i);
				});
			}).observe(document.getElementById("cmp-panes"), { subtree: true, childList: true, characterData: true });
		})()`),
		comparePanesReady(2),
		// Pane 1 answers whole; pane 2 is cut at 30 tokens, and streams
		// long enough (about 20 tokens/s) for a race.
		// Both seeded alike (so the seed is not in the titles): pane 1's
		// answer is the same long one on every run, longer than its pane.
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".cmp-pane").forEach((p, i) => {
			p.querySelector('[name="max_completion_tokens"]').value = ["", "30"][i];
			p.querySelector('[name="seed"]').value = "3";
		}); document.activeElement.blur()`),
		screen(1400, 900),
		chromedp.KeyEvent("p"),
		chromedp.Poll[chromedp.Void](`document.getElementById("cmp-stage").classList.contains("presenting")`, chromedp.WithPollingInterval(20*time.Millisecond)),
		// The title is edited in place on the stage.
		chromedp.Click(chromedp.CSS("#cmp-present-title")),
		chromedp.SendKeys(chromedp.CSS("#cmp-present-title"), "Lighthouses, fast and slow"),
		chromedp.KeyEvent("\r"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, ctx, `document.getElementById("cmp-title").value`); got != "Lighthouses, fast and slow" {
		t.Errorf("the toolbar's title is %q after editing the stage's", got)
	}
	if got := eval[string](t, ctx, `document.getElementById("cmp-present-prompt").textContent`); got != "Name three lighthouses." {
		t.Errorf("the stage shows the prompt %q", got)
	}
	hints := eval[string](t, ctx, `(() => { const k = document.getElementById("cmp-keyhints"); return k.offsetParent ? k.textContent : ""; })()`)
	for _, want := range []string{"Enter run all", "Esc stop", "p leave presenter mode"} {
		if !strings.Contains(strings.Join(strings.Fields(hints), " "), want) {
			t.Errorf("the stage's key hints %q lack %q", hints, want)
		}
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent("\r"), compareSettled()); err != nil {
		t.Fatalf("running from the stage: %v", err)
	}
	subs := eval[[]string](t, ctx, `Array.from(document.querySelectorAll(".cmp-pane .pane-sub")).map(e => e.offsetParent ? e.textContent : "")`)
	for i, model := range []string{"sim-fast", "sim-slow"} {
		if i >= len(subs) || subs[i] != "Simulator (offline) · "+model {
			t.Errorf("pane %d shows %q under its title on the stage, want its provider and %s", i+1, subs, model)
		}
	}
	if titles := eval[[]string](t, ctx, paneTitlesJS); strings.Join(titles, "|") != "sim-fast · max_completion_tokens default|sim-slow · max_completion_tokens 30" {
		t.Errorf("the panes are titled %q, want their models and max tokens", titles)
	}
	cut := eval[[]string](t, ctx, `Array.from(document.querySelectorAll(".cmp-pane")).map(p => Array.from(p.querySelectorAll(".pane-badges .cutoff")).map(b => b.offsetParent ? b.textContent : "hidden").join())`)
	if len(cut) != 2 || cut[0] != "" || cut[1] != "cut off at max tokens" {
		t.Errorf("the panes' cut-off flags are %q, want pane 2 (30 tokens) flagged and pane 1 not", cut)
	}
	if live := eval[[]int](t, ctx, `[...new Set(window.liveRates)]`); !containsInt(live, 1) {
		t.Errorf("no tokens/s was shown for the slow pane while it streamed (panes with a live rate: %v)", live)
	}
	race := eval[[]string](t, ctx, `Array.from(document.querySelectorAll(".cmp-pane .race-rate")).map(e => e.offsetParent ? e.textContent : "hidden")`)
	if len(race) != 2 || !strings.HasSuffix(race[1], "tokens/s") {
		t.Errorf("the race shows %q, want the slow pane's tokens/s", race)
	}
	// The long answer finished: its pane is back at the start of it.
	back := eval[[]float64](t, ctx, `(() => { const o = document.querySelector(".cmp-pane .pane-output"); const c = o.querySelector(".choice");
		return [o.scrollHeight - o.clientHeight, o.scrollTop, c.getBoundingClientRect().top - o.getBoundingClientRect().top]; })()`)
	if back[0] <= 0 || back[1] >= back[0] || back[2] < -1 || back[2] > 40 {
		t.Errorf("pane 1's answer (overflowing by %v px) is scrolled to %v px, its start %v px from the top; want the start in view", back[0], back[1], back[2])
	}
	viewShot(t, ctx, "compare-presenter.png")

	// The comparison is saved: a title edited now is kept.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("cmp-present-title").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#cmp-present-title"), "Lighthouses, renamed"),
		chromedp.KeyEvent("\r"),
		chromedp.Poll[chromedp.Void](`document.getElementById("cmp-status").textContent.includes("Lighthouses, renamed")`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("renaming on the stage: %v", err)
	}
	run, err := s.store.Run(context.Background(), s.userID(t, "ada"), 1)
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.store.Group(context.Background(), s.userID(t, "ada"), run.GroupID)
	if err != nil || g.Title != "Lighthouses, renamed" {
		t.Errorf("the saved comparison is titled %q (%v), want the title edited on the stage", g.Title, err)
	}
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func TestBrowserCompareLowestCostNeedsAPriceInEveryPane(t *testing.T) {
	up := httptest.NewServer(llmtest.Handler(llmtest.ShapeCerebras))
	t.Cleanup(up.Close)
	s := newServer(t, withEnv("CEREBRAS_API_KEY", "csk-fixture-key-123456"), withEnv("CEREBRAS_BASE_URL", up.URL))
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	setPane := func(i int, provider, model string) chromedp.Action[chromedp.Void] {
		js, _ := json.Marshal([]any{i, provider, model})
		return chromedp.Evaluate[chromedp.Void](`(([i, provider, model]) => {
			const p = document.querySelectorAll(".cmp-pane")[i];
			const sel = p.querySelector("[data-provider]");
			sel.value = provider;
			sel.dispatchEvent(new Event("change"));
			const m = p.querySelector("input[data-model]");
			m.value = model;
			m.dispatchEvent(new Event("change"));
		})(` + string(js) + `)`)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/compare"),
		comparePanesReady(2),
		setPane(0, "sim", "sim-fast"),
		setPane(1, "cerebras", "llama3.1-8b"),
		comparePanesReady(2),
		chromedp.Click(chromedp.CSS("#cmp-run")),
		compareSettled(),
	)
	if err != nil {
		t.Fatal(err)
	}
	awards := `Array.from(document.querySelectorAll(".cmp-pane")).map(p => Array.from(p.querySelectorAll(".pane-badges [data-award]")).map(b => b.textContent).join())`
	lowest := `document.querySelector('#cmp-summary-list [data-key="lowest_cost"]').textContent`
	if got := eval[string](t, ctx, lowest); got != "Lowest cost: none: not every pane has a price" {
		t.Errorf("with a simulator pane (no price) the summary says %q", got)
	}
	for i, a := range eval[[]string](t, ctx, awards) {
		if strings.Contains(a, "lowest cost") {
			t.Errorf("pane %d is awarded %q with a pane that has no price", i+1, a)
		}
	}
	// The fixture returns raw token ids: the pane shows them, closed.
	tokens := eval[[]string](t, ctx, `(() => {
		const d = document.querySelectorAll(".cmp-pane")[1].querySelector(".pane-output details.raw-tokens");
		return d ? [d.querySelector("summary").textContent, String(d.open), d.querySelector("pre").textContent] : [];
	})()`)
	if strings.Join(tokens, "|") != "tokens (2)|false|9906 505" {
		t.Errorf("the Cerebras pane's raw tokens show %q, want a closed toggle of the ids 9906 505", tokens)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll(".cmp-pane")[0].querySelectorAll(".raw-tokens").length`); n != 0 {
		t.Errorf("the simulator pane shows %d raw token toggles, and it returned none", n)
	}

	// Both panes priced, whole and equal (the fixture's answers are cut at
	// max tokens, which wins no cost award: the priced simulator model,
	// seeded alike): lowest cost is a tie of every pane, and no pane wears
	// a badge that tells nothing.
	err = chromedp.Do(ctx,
		setPane(0, "sim", "sim-reasoning"),
		setPane(1, "sim", "sim-reasoning"),
		comparePanesReady(2),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".cmp-pane").forEach((p) => { p.querySelector('[name="seed"]').value = "5"; })`),
		chromedp.Click(chromedp.CSS("#cmp-run")),
		// The summary of the first run is up until the second is saved.
		chromedp.Poll[chromedp.Void](`document.getElementById("cmp-status").textContent === "Saved as comparison 2."`, chromedp.WithPollingInterval(50*time.Millisecond)),
		compareSettled(),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, ctx, lowest); !strings.HasPrefix(got, "Lowest cost: tie, every pane ($") {
		t.Errorf("with two equal priced panes the summary says %q, want a tie of every pane", got)
	}
	for i, a := range eval[[]string](t, ctx, awards) {
		if strings.Contains(a, "lowest cost") {
			t.Errorf("pane %d wears %q though every pane tied", i+1, a)
		}
	}
}

func TestBrowserComparePhoneScreenshot(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		// A phone: a touch screen with five touch points.
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch, func(_ *emulation.SetDeviceMetricsOverrideParams, touch *emulation.SetTouchEmulationEnabledParams) {
			touch.MaxTouchPoints = 5
		}),
		chromedp.Navigate(s.url+"/compare"),
		comparePanesReady(2),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".cmp-pane [name='max_completion_tokens']").forEach(i => i.value = "60")`),
		chromedp.Click(chromedp.CSS("#cmp-run")),
		compareSettled(),
	)
	if err != nil {
		t.Fatal(err)
	}
	if over := eval[bool](t, ctx, `document.documentElement.scrollWidth > innerWidth`); over {
		t.Errorf("the compare page is wider than a 390 px phone: %v px", eval[int](t, ctx, `document.documentElement.scrollWidth`))
	}
	eval[bool](t, ctx, `scrollTo(0, document.querySelector(".cmp-pane").getBoundingClientRect().top + scrollY - 110), true`)
	viewShot(t, ctx, "compare-phone.png")
	// On a touch screen the stage shows no key hints: there are no keys.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#cmp-present")),
		chromedp.Poll[chromedp.Void](`document.getElementById("cmp-stage").classList.contains("presenting")`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if shown := eval[bool](t, ctx, `!!document.getElementById("cmp-keyhints").offsetParent`); shown {
		t.Error("presenter mode on a phone shows key hints")
	}
	if shown := eval[bool](t, ctx, `!!document.getElementById("cmp-present-prompt").offsetParent`); !shown {
		t.Error("presenter mode on a phone hides the prompt")
	}
}
