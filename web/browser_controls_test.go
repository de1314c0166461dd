package web_test

// Browser tests of the parameter controls, the toolbar, the model picker
// and the token and cost estimate (issue 13).

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// waitJS polls until the script's condition holds, within the test's
// deadline.
func waitJS(cond string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(20*time.Millisecond))
}

// evalJS evaluates script and fails the test on an error.
func evalJS[T any](t testing.TB, ctx context.Context, script string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](script))
	if err != nil {
		t.Fatalf("evaluating %s: %v", script, err)
	}
	return v
}

// sentRequest is a stored run's request as the user wrote it.
type sentRequest struct {
	Body map[string]json.RawMessage `json:"body"`
}

// lastSent is the body of user's newest run, as stored.
func lastSent(t testing.TB, s *server, user int64) sentRequest {
	t.Helper()
	run, _ := lastRun(t, s, user)
	var req sentRequest
	if err := json.Unmarshal([]byte(run.Spec), &req); err != nil {
		t.Fatal(err)
	}
	return req
}

// runUntilIdle presses Run and waits for the run's end, whatever its end.
func runUntilIdle(t testing.TB, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#pg-run")),
		waitJS(`document.getElementById("playground").classList.contains("running") || document.querySelector("#pg-metrics dl") !== null || !document.getElementById("pg-error").hidden`),
		waitJS(`!document.getElementById("playground").classList.contains("running") && !document.getElementById("pg-run").disabled`),
	); err != nil {
		t.Fatalf("running: %v", err)
	}
}

// ArrowUp on temperature 0.7 gives 0.8 (not 1.7), and the slider follows;
// integers step by 1, and max tokens by a power of two that fits the
// model's context.
func TestBrowserArrowKeysStepByWhatFitsTheRange(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	if err := chromedp.Do(ctx,
		choose("sim", "sim-fast"),
		chromedp.SetValue(chromedp.CSS("#p-temperature"), "0.7"),
		chromedp.SendKeys(chromedp.CSS("#p-temperature"), kb.ArrowUp),
	); err != nil {
		t.Fatal(err)
	}
	box := evalJS[string](t, ctx, `document.getElementById("p-temperature").value`)
	slider := evalJS[string](t, ctx, `document.querySelector('[data-param="temperature"] [data-slider]').value`)
	if box != "0.8" || slider != "0.8" {
		t.Errorf("after ArrowUp on 0.7 the box reads %q and the slider %q, want 0.8 and 0.8", box, slider)
	}
	// Down twice from 0.8, and a value between steps goes to the next one.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#p-temperature"), kb.ArrowDown+kb.ArrowDown),
	); err != nil {
		t.Fatal(err)
	}
	if v := evalJS[string](t, ctx, `document.getElementById("p-temperature").value`); v != "0.6" {
		t.Errorf("after ArrowDown twice from 0.8 the box reads %q, want 0.6", v)
	}
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS("#p-temperature"), "1.95"),
		chromedp.SendKeys(chromedp.CSS("#p-temperature"), kb.ArrowUp+kb.ArrowUp),
	); err != nil {
		t.Fatal(err)
	}
	if v := evalJS[string](t, ctx, `document.getElementById("p-temperature").value`); v != "2" {
		t.Errorf("ArrowUp past the top of temperature's range reads %q, want 2 (its maximum)", v)
	}

	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS("#p-top_logprobs"), "3"),
		chromedp.SendKeys(chromedp.CSS("#p-top_logprobs"), kb.ArrowUp),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "1000"),
		chromedp.SendKeys(chromedp.CSS("#p-max_completion_tokens"), kb.ArrowUp+kb.ArrowUp),
	); err != nil {
		t.Fatal(err)
	}
	if v := evalJS[string](t, ctx, `document.getElementById("p-top_logprobs").value`); v != "4" {
		t.Errorf("ArrowUp on top_logprobs 3 reads %q, want 4", v)
	}
	// sim-fast has a 131,072-token context: its slider steps by 1,024.
	if v := evalJS[string](t, ctx, `document.getElementById("p-max_completion_tokens").value`); v != "2048" {
		t.Errorf("ArrowUp twice on max_completion_tokens 1000 reads %q, want 2048 (1024, then 2048)", v)
	}
	// The wire names stay on screen as the labels.
	labels := evalJS[[]string](t, ctx, `["temperature", "max_completion_tokens", "top_p"].map(n => document.querySelector('label[for="p-' + n + '"]').textContent.trim())`)
	if strings.Join(labels, ",") != "temperature,max_completion_tokens,top_p" {
		t.Errorf("the labels read %v, want the wire names", labels)
	}
}

// Moving the slider sets the number, and the run sends it; left alone,
// the parameter is not sent at all, and × makes it unset again.
func TestBrowserSliderSetsTheTemperatureTheRunSends(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	user := s.userID(t, "ada")
	if err := chromedp.Do(ctx, choose("sim", "sim-fast"), setMessage("Name a river."),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "16")); err != nil {
		t.Fatal(err)
	}
	if unset := evalJS[bool](t, ctx, `document.querySelector('[data-param="temperature"]').classList.contains("unset") && document.getElementById("p-temperature").value === ""`); !unset {
		t.Error("temperature does not read as unset on a fresh page")
	}
	runUntilIdle(t, ctx)
	if _, sent := lastSent(t, s, user).Body["temperature"]; sent {
		t.Error("the run sent a temperature the user never chose")
	}

	const slider = `[data-param="temperature"] [data-slider]`
	if err := chromedp.Do(ctx,
		chromedp.Focus(chromedp.CSS(slider)),
		chromedp.SendKeys(chromedp.CSS(slider), kb.ArrowRight+kb.ArrowRight+kb.ArrowRight),
	); err != nil {
		t.Fatal(err)
	}
	if v := evalJS[string](t, ctx, `document.getElementById("p-temperature").value`); v != "0.3" {
		t.Fatalf("after moving the slider three steps the box reads %q, want 0.3", v)
	}
	if unset := evalJS[bool](t, ctx, `document.querySelector('[data-param="temperature"]').classList.contains("unset")`); unset {
		t.Error("temperature still reads as unset after the slider moved")
	}
	runUntilIdle(t, ctx)
	if got := string(lastSent(t, s, user).Body["temperature"]); got != "0.3" {
		t.Errorf("the run after the slider moved sent temperature %q, want 0.3", got)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-param="temperature"] [data-unset]`))); err != nil {
		t.Fatal(err)
	}
	if v := evalJS[string](t, ctx, `document.getElementById("p-temperature").value`); v != "" {
		t.Errorf("after × the temperature box reads %q, want it empty", v)
	}
	runUntilIdle(t, ctx)
	if _, sent := lastSent(t, s, user).Body["temperature"]; sent {
		t.Error("the run after × still sent a temperature")
	}
}

// A parameter's help shows while its control has the focus (touch gives
// focus too) and on a click of its ?, not only in a hover title.
func TestBrowserParameterHelpShowsOnFocusAndClick(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	visible := func(id string) bool {
		return evalJS[bool](t, ctx, `(() => { const el = document.getElementById("`+id+`"); return !!el && getComputedStyle(el).display !== "none" && el.getBoundingClientRect().height > 0; })()`)
	}
	if visible("h-temperature") {
		t.Error("temperature's help shows before anything asked for it")
	}
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS("#p-temperature"))); err != nil {
		t.Fatal(err)
	}
	if !visible("h-temperature") {
		t.Fatal("temperature's help is not shown while its box has the focus")
	}
	help := evalJS[string](t, ctx, `document.getElementById("h-temperature").textContent`)
	if !strings.Contains(help, "sampling temperature") {
		t.Errorf("temperature's help reads %q", help)
	}
	if d := evalJS[string](t, ctx, `document.getElementById("p-temperature").getAttribute("aria-describedby")`); !strings.Contains(d, "h-temperature") {
		t.Errorf("the temperature box is described by %q, not its help", d)
	}
	// The ? opens top_p's help and it stays open when the focus moves on.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-param="top_p"] [data-help-toggle]`)),
		chromedp.Focus(chromedp.CSS("#pg-system")),
	); err != nil {
		t.Fatal(err)
	}
	if !visible("h-top_p") {
		t.Error("top_p's help is not shown after a click on its ?")
	}
	if visible("h-temperature") {
		t.Error("temperature's help still shows after the focus left it")
	}
	if exp := evalJS[string](t, ctx, `document.querySelector('[data-param="top_p"] [data-help-toggle]').getAttribute("aria-expanded")`); exp != "true" {
		t.Errorf("top_p's ? says aria-expanded %q, want true", exp)
	}
}

// The toolbar (provider, model, Run, Stop) is still in view after
// scrolling to the bottom, and Run does not move when a preset with a
// long name is loaded, at 1400 and at 1024 pixels wide.
func TestBrowserToolbarStaysInViewAndRunStaysPut(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	// Run's place, and whether it shares the row of the model box.
	runBox := func() []float64 {
		return evalJS[[]float64](t, ctx, `(() => { const r = document.getElementById("pg-run").getBoundingClientRect(); const m = document.getElementById("pg-model").getBoundingClientRect(); const mid = r.top + r.height / 2; return [r.left, r.top + window.scrollY, mid > m.top - r.height && mid < m.bottom + r.height ? 1 : 0]; })()`)
	}
	before := map[int][]float64{}
	for _, w := range []int64{1024, 1400} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 900)); err != nil {
			t.Fatal(err)
		}
		before[int(w)] = runBox()
		if before[int(w)][2] != 1 {
			t.Errorf("at %dpx Run is not in the row of the model box", w)
		}
	}
	// Save the setup as a preset with a long name: the toolbar shows it.
	long := "Support triage with the long house style guide, v2"
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#pg-save-as")),
		chromedp.WaitVisible(chromedp.CSS("#sv-name")),
		chromedp.SetValue(chromedp.CSS("#sv-name"), long),
		chromedp.Click(chromedp.CSS(`#pg-save-form button[value="save"]`)),
		waitJS(`document.getElementById("pg-preset-name").textContent === `+jsString(long)),
		// Changed since: the "modified" badge shows too.
		chromedp.SetValue(chromedp.CSS("#p-temperature"), "0.4"),
		waitJS(`!document.getElementById("pg-preset-dirty").hidden`),
	); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int64{1400, 1024} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 900)); err != nil {
			t.Fatal(err)
		}
		after := runBox()
		if b := before[int(w)]; after[0] != b[0] || after[1] != b[1] || after[2] != 1 {
			t.Errorf("at %dpx Run moved from (%v, %v) to (%v, %v) (in the model's row: %v) when the preset was loaded", w, b[0], b[1], after[0], after[1], after[2] == 1)
		}
	}

	// A long conversation, then the bottom of the page.
	for i := 0; i < 8; i++ {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-add-message="user"]`))); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range []int64{1400, 1024} {
		if err := chromedp.Do(ctx,
			chromedp.EmulateViewport(w, 700),
			chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.documentElement.scrollHeight)`),
			waitJS(`window.scrollY > 300`),
		); err != nil {
			t.Fatalf("scrolling at %dpx: %v", w, err)
		}
		// Each control is on screen and nothing covers it (the top bar).
		for _, id := range []string{"pg-provider", "pg-model", "pg-run", "pg-stop"} {
			ok := evalJS[bool](t, ctx, `(() => { const el = document.getElementById("`+id+`"); const r = el.getBoundingClientRect(); if (r.top < 0 || r.bottom > innerHeight) return false; const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); return !!hit && (hit === el || el.contains(hit)); })()`)
			if !ok {
				t.Errorf("at %dpx, scrolled to the bottom, #%s is not in view", w, id)
			}
		}
	}
	// No screenshot here: a full-page capture of a scrolled page draws the
	// sticky toolbar where the capture's own resizing puts it.
}

// The model picker lists the provider's models with context, price and
// capabilities, filters as the user types, works from the keyboard, and
// a typed id that is not in the list is what the run sends.
func TestBrowserModelPickerFiltersAndSendsATypedID(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	options := func() []string {
		return evalJS[[]string](t, ctx, `Array.from(document.querySelectorAll('#pg-model-list [role="option"]')).map(o => o.dataset.value)`)
	}
	if err := chromedp.Do(ctx,
		choose("sim", "sim-fast"),
		chromedp.Click(chromedp.CSS("#pg-model")),
		waitJS(`document.getElementById("pg-model").getAttribute("aria-expanded") === "true"`),
	); err != nil {
		t.Fatal(err)
	}
	if got := options(); len(got) != 4 {
		t.Errorf("the open picker lists %v, want the simulator's four models", got)
	}
	if role := evalJS[string](t, ctx, `document.getElementById("pg-model-list").getAttribute("role")`); role != "listbox" {
		t.Errorf("the list's role is %q, want listbox", role)
	}
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("pg-model").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#pg-model"), "reason"),
	); err != nil {
		t.Fatal(err)
	}
	got := options()
	if len(got) == 0 || got[0] != "sim-reasoning" || strings.Contains(strings.Join(got, ","), "sim-fast") {
		t.Fatalf("typing %q lists %v, want sim-reasoning first and not the others", "reason", got)
	}
	text := evalJS[string](t, ctx, `document.querySelector('#pg-model-list [data-value="sim-reasoning"]').textContent`)
	for _, want := range []string{"131k context", "$0.5 in / $2 out per M tokens", "reasoning", "tools", "JSON schema"} {
		if !strings.Contains(text, want) {
			t.Errorf("sim-reasoning's entry reads %q, lacking %q", text, want)
		}
	}
	// Down, Enter: the model is chosen and its panel loads.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#pg-model"), kb.ArrowDown),
	); err != nil {
		t.Fatal(err)
	}
	if active := evalJS[string](t, ctx, `(() => { const id = document.getElementById("pg-model").getAttribute("aria-activedescendant"); return id ? document.getElementById(id).dataset.value + " " + document.getElementById(id).getAttribute("aria-selected") : ""; })()`); active != "sim-reasoning true" {
		t.Errorf("after ArrowDown the active option is %q, want sim-reasoning, selected", active)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#pg-model"), kb.Enter),
		waitJS(`document.querySelector("#pg-panel .panel").dataset.model === "sim-reasoning" && !document.getElementById("playground").dataset.busy`),
	); err != nil {
		t.Fatalf("choosing with Enter: %v", err)
	}
	if v := evalJS[string](t, ctx, `document.getElementById("pg-model").value + " " + document.getElementById("pg-model").getAttribute("aria-expanded")`); v != "sim-reasoning false" {
		t.Errorf("after Enter the model box and list read %q, want sim-reasoning, closed", v)
	}
	// Escape closes the list (and stops nothing).
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#pg-model"), kb.ArrowDown),
		waitJS(`document.getElementById("pg-model").getAttribute("aria-expanded") === "true"`),
		chromedp.SendKeys(chromedp.CSS("#pg-model"), kb.Escape),
		waitJS(`document.getElementById("pg-model").getAttribute("aria-expanded") === "false" && document.getElementById("pg-model-list").hidden`),
	); err != nil {
		t.Fatalf("Escape did not close the list: %v", err)
	}

	// An id the provider does not list is kept as typed and sent.
	const typed = "sim-next-preview"
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("pg-model").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#pg-model"), typed),
	); err != nil {
		t.Fatal(err)
	}
	if got := options(); len(got) != 1 || got[0] != typed {
		t.Errorf("typing an unlisted id lists %v, want only it, to use as typed", got)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#pg-model"), kb.Enter),
		waitJS(`document.querySelector("#pg-panel .panel").dataset.model === `+jsString(typed)+` && !document.getElementById("playground").dataset.busy`),
		setMessage("Hello"),
	); err != nil {
		t.Fatal(err)
	}
	runUntilIdle(t, ctx)
	if got := string(lastSent(t, s, s.userID(t, "ada")).Body["model"]); got != `"`+typed+`"` {
		t.Errorf("the run sent model %s, want %q as typed", got, typed)
	}
	// The simulator does not know it, and says so as it answered.
	if msg := evalJS[string](t, ctx, `document.getElementById("pg-error").textContent`); !strings.Contains(msg, typed) {
		t.Errorf("the error box reads %q, want the provider's word on %s", msg, typed)
	}
}

// The prompt's size is estimated as it is typed, and the cost shows for a
// priced model (input, and the most the output can cost) and "no price"
// for one without.
func TestBrowserTokenAndCostEstimateFollowTheEditor(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	estimate := func() string {
		return evalJS[string](t, ctx, `document.getElementById("pg-estimate").textContent`)
	}
	if err := chromedp.Do(ctx, choose("sim", "sim-fast"), setMessage("Hi"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#pg-messages .message:last-child [data-content]").dispatchEvent(new Event("input", {bubbles: true}))`),
		waitJS(`document.getElementById("pg-estimate").textContent.includes("tokens (estimate)")`),
	); err != nil {
		t.Fatal(err)
	}
	first := estimate()
	if !strings.HasPrefix(first, "≈ ") || !strings.Contains(first, "no price known") {
		t.Errorf("the estimate for sim-fast reads %q, want ≈ N tokens (estimate) and no price known", first)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#pg-messages .message:last-child [data-content]"), " there: tell me about the lighthouses of the Breton coast"),
		waitJS(`document.getElementById("pg-estimate").textContent !== `+jsString(first)),
	); err != nil {
		t.Fatalf("the estimate did not change as the message was typed: %v", err)
	}
	if a, b := tokensOf(t, first), tokensOf(t, estimate()); b <= a {
		t.Errorf("the estimate went from %d to %d tokens as the message grew", a, b)
	}

	// sim-reasoning is priced ($0.5 in, $2 out per million tokens).
	if err := chromedp.Do(ctx,
		choose("sim", "sim-reasoning"),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "1000"),
		waitJS(`document.getElementById("pg-estimate").textContent.includes("1,000 tokens")`),
	); err != nil {
		t.Fatalf("no cost for 1,000 max tokens: %v (estimate %q)", err, estimate())
	}
	priced := estimate()
	for _, want := range []string{"tokens (estimate)", "input ≈ $", "output at most $0.002 (1,000 tokens)"} {
		if !strings.Contains(priced, want) {
			t.Errorf("the estimate for sim-reasoning reads %q, lacking %q", priced, want)
		}
	}
	// Two choices cost twice as much at most.
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS("#p-n"), "2"),
		waitJS(`document.getElementById("pg-estimate").textContent.includes("output at most $0.004 (1,000 tokens × 2 choices)")`),
	); err != nil {
		t.Errorf("n 2 does not double the most the output can cost: %v (estimate %q)", err, estimate())
	}

	// A {{variable}} counts as what it will be filled with.
	if err := chromedp.Do(ctx,
		setMessage("Write about {{subject}}."),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#pg-messages .message:last-child [data-content]").dispatchEvent(new Event("input", {bubbles: true}))`),
		chromedp.WaitVisible(chromedp.CSS("#var-subject")),
		waitJS(`document.getElementById("pg-estimate").textContent.startsWith("≈ ")`),
	); err != nil {
		t.Fatal(err)
	}
	bare := tokensOf(t, estimate())
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#var-subject"), "the tides and the moon and the old harbour walls"),
		waitJS(`!document.getElementById("pg-estimate").textContent.startsWith("≈ `+strconv.Itoa(bare)+` ")`),
	); err != nil {
		t.Fatalf("the estimate did not follow the variable's value: %v (%q)", err, estimate())
	}
	if filled := tokensOf(t, estimate()); filled <= bare {
		t.Errorf("with the variable filled the estimate is %d tokens, %d without", filled, bare)
	}
}

// On the simulator the page's count is the simulator's own: the estimate
// before the run equals the prompt tokens the run reports.
func TestBrowserTokenEstimateMatchesTheSimulatorsCount(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	if err := chromedp.Do(ctx, choose("sim", "sim-fast"),
		setMessage("Summarise the internationalization guidelines in 12 bullet points, **bold** headings."),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#pg-messages .message:last-child [data-content]").dispatchEvent(new Event("input", {bubbles: true}))`),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "8"),
		waitJS(`document.getElementById("pg-estimate").textContent.startsWith("≈ ")`),
	); err != nil {
		t.Fatal(err)
	}
	shown := tokensOf(t, evalJS[string](t, ctx, `document.getElementById("pg-estimate").textContent`))
	runUntilIdle(t, ctx)
	run, _ := lastRun(t, s, s.userID(t, "ada"))
	var res struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(run.Result), &res); err != nil {
		t.Fatal(err)
	}
	if res.Usage.PromptTokens == 0 || shown != res.Usage.PromptTokens {
		t.Errorf("the page estimated %d prompt tokens; the simulator counted %d", shown, res.Usage.PromptTokens)
	}
}

// tokensOf reads N from "≈ N tokens (estimate) · ...".
func tokensOf(t testing.TB, estimate string) int {
	t.Helper()
	n := 0
	for _, r := range strings.TrimPrefix(estimate, "≈ ") {
		if r >= '0' && r <= '9' {
			n = n*10 + int(r-'0')
		} else if r != ',' {
			break
		}
	}
	return n
}

// The best_of hint says what n, best_of and stream as set will do.
func TestBrowserBestOfHintFollowsNAndBestOf(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	note := func() string {
		return evalJS[string](t, ctx, `document.querySelector('[data-param="best_of"] .note').textContent`)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`input[name="endpoint"][value="completion"]`)),
		waitJS(`document.querySelector("#pg-panel .panel").dataset.endpoint === "completion" && !document.getElementById("playground").dataset.busy`),
		chromedp.SetValue(chromedp.CSS("#p-best_of"), "3"),
	); err != nil {
		t.Fatal(err)
	}
	if n := note(); !strings.Contains(n, "best_of 3 cannot be streamed") {
		t.Errorf("with best_of 3 streaming, the hint reads %q", n)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#p-stream"), "false")); err != nil {
		t.Fatal(err)
	}
	if n := note(); !strings.Contains(n, "3 candidates are generated and the best 1 returned") {
		t.Errorf("with best_of 3 and stream false, the hint reads %q", n)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#p-n"), "4")); err != nil {
		t.Fatal(err)
	}
	if n := note(); !strings.Contains(n, "best_of (3) must be at least n (4)") {
		t.Errorf("with n 4 and best_of 3, the hint reads %q", n)
	}
}

// Screenshots of the controls: the desktop playground with a parameter's
// help open and the picker showing, and a phone, where Run stays in a bar
// at the bottom and nothing is wider than the screen.
func TestBrowserControlsScreenshots(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	if err := chromedp.Do(ctx,
		choose("sim", "sim-reasoning"),
		chromedp.SetValue(chromedp.CSS("#p-temperature"), "0.7"),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "2048"),
		chromedp.Focus(chromedp.CSS("#p-temperature")),
	); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "playground-controls.png")
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#pg-model")),
		waitJS(`document.getElementById("pg-model").getAttribute("aria-expanded") === "true"`),
	); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "playground-model-picker.png")

	if err := chromedp.Do(ctx,
		chromedp.Focus(chromedp.CSS("#pg-system")),
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.documentElement.scrollHeight)`),
	); err != nil {
		t.Fatal(err)
	}
	if wide := evalJS[bool](t, ctx, `document.documentElement.scrollWidth > innerWidth`); wide {
		t.Errorf("at 390px the playground is %v px wide", evalJS[float64](t, ctx, `document.documentElement.scrollWidth`))
	}
	inView := evalJS[bool](t, ctx, `(() => { const el = document.getElementById("pg-run"); const r = el.getBoundingClientRect(); const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); return r.top >= 0 && r.bottom <= innerHeight && !!hit && el.contains(hit); })()`)
	if !inView {
		t.Error("at 390px, scrolled to the bottom, Run is not in view")
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "playground-phone.png")
}

// jsString quotes s for a script.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The compare panes use the same panel and picker: steps, sliders and the
// searchable model list work there too, with the pane's own ids.
func TestBrowserComparePaneHasTheSameControls(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/compare"), comparePanesReady(2),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".cmp-pane details").forEach(d => d.open = true)`),
	); err != nil {
		t.Fatal(err)
	}
	// The first pane's ids: "cpN-" and the name of the control.
	pre := evalJS[string](t, ctx, `document.querySelector(".cmp-pane [data-model]").id.replace(/model$/, "")`)
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS("#"+pre+"p-temperature"), "0.7"),
		chromedp.SendKeys(chromedp.CSS("#"+pre+"p-temperature"), kb.ArrowUp),
	); err != nil {
		t.Fatal(err)
	}
	if v := evalJS[string](t, ctx, `document.getElementById("`+pre+`p-temperature").value + " " + document.querySelector('.cmp-pane [data-param="temperature"] [data-slider]').value`); v != "0.8 0.8" {
		t.Errorf("in a pane, ArrowUp on temperature 0.7 gives box and slider %q, want 0.8 0.8", v)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#"+pre+"model")),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("`+pre+`model").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#"+pre+"model"), "reas"),
		waitJS(`document.querySelectorAll('#`+pre+`model-list [role="option"]').length === 2`),
	); err != nil {
		t.Fatalf("the pane's picker did not filter: %v", err)
	}
	entry := evalJS[string](t, ctx, `document.querySelector('#`+pre+`model-list [data-value="sim-reasoning"]').textContent`)
	if !strings.Contains(entry, "$0.5 in / $2 out per M tokens") || !strings.Contains(entry, "reasoning") {
		t.Errorf("the pane's entry for sim-reasoning reads %q", entry)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#`+pre+`model-list [data-value="sim-reasoning"]`)),
		waitJS(`document.getElementById("`+pre+`model").value === "sim-reasoning" && document.getElementById("`+pre+`model-list").hidden`),
	); err != nil {
		t.Errorf("clicking sim-reasoning in the pane's list: %v", err)
	}
}
