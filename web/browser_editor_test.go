package web_test

// Browser tests of the playground's editor workflow: New, the questions
// asked before unsaved work is replaced, the output kept across pages,
// saving a changed preset, copying and branching.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// settled waits until the playground's script is set up, has nothing
// loading and the server has what the editor holds.
func settled(cond string) chromedp.Action[chromedp.Void] {
	if cond == "" {
		cond = "true"
	}
	return pollAcrossPages(`(() => { const r = document.getElementById("playground"); return r && r.dataset.ready && !r.dataset.busy && !r.dataset.saving && (` + cond + `); })()`)
}

// pollAcrossPages polls cond like chromedp.Poll, through a navigation in
// progress (a form's POST and its redirect): a poll cut short by the page
// going away polls again on the next one, until the test's deadline.
func pollAcrossPages(cond string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		for {
			_, err := chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(20*time.Millisecond))(ctx, t)
			if err == nil || ctx.Err() != nil {
				return chromedp.Void{}, err
			}
			if msg := err.Error(); !strings.Contains(msg, "navigated") && !strings.Contains(msg, "Cannot find context") && !strings.Contains(msg, "context was destroyed") {
				return chromedp.Void{}, err
			}
		}
	}
}

// typeInto sets a field's text as typing would, with the input event the
// page listens to.
func typeInto(sel, text string) chromedp.Action[chromedp.Void] {
	js, _ := json.Marshal(text)
	s, _ := json.Marshal(sel)
	return chromedp.Evaluate[chromedp.Void](`(() => { const el = document.querySelector(` + string(s) + `); el.value = ` + string(js) + `; el.dispatchEvent(new Event("input", { bubbles: true })); })()`)
}

// typeMessage types text into message n (0-based) of the conversation.
func typeMessage(n int, text string) chromedp.Action[chromedp.Void] {
	return typeInto(fmt.Sprintf("#pg-messages .message:nth-child(%d) [data-content]", n+1), text)
}

// messages reads the conversation as the editor shows it: role: text.
func messages(t testing.TB, ctx context.Context) []string {
	t.Helper()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#pg-messages .message")).map((li) => li.querySelector("[data-role]").value + ": " + li.querySelector("[data-content]").value)`))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func evalString(t testing.TB, ctx context.Context, js string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// dialogOpen waits until the dialog sel is open and returns its text.
func dialogOpen(t testing.TB, ctx context.Context, sel string) string {
	t.Helper()
	s, _ := json.Marshal(sel)
	if err := chromedp.Do(ctx, pollAcrossPages(`(() => { const d = document.querySelector(`+string(s)+`); return d && d.open; })()`)); err != nil {
		t.Fatalf("waiting for the dialog %s: %v", sel, err)
	}
	return evalString(t, ctx, `document.querySelector(`+string(s)+`).innerText`)
}

// clickChoice clicks the button of the page's question whose text is label.
func clickChoice(label string) chromedp.Action[chromedp.Void] {
	l, _ := json.Marshal(label)
	return chromedp.Evaluate[chromedp.Void](`Array.from(document.querySelectorAll("dialog[open] button")).find((b) => b.textContent.trim() === ` + string(l) + `).click()`)
}

// runAndWait runs the editor as it stands and waits for the answer, its
// rendering included.
func runAndWait(t testing.TB, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#pg-run"))); err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	if err := chromedp.Do(ctx, settled(`document.querySelector("#pg-metrics a[href^='/runs/']")`)); err != nil {
		t.Fatal(err)
	}
}

func TestBrowserEditorNewAsksBeforeDiscardingUnsavedChanges(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("sim", "sim-fast"),
		typeMessage(0, "Tell me about tides."),
	)
	if err != nil {
		t.Fatal(err)
	}
	runAndWait(t, ctx)
	if err := chromedp.Do(ctx, typeMessage(0, "My careful draft"), chromedp.Click(chromedp.CSS("#pg-new"))); err != nil {
		t.Fatal(err)
	}
	text := dialogOpen(t, ctx, "#pg-confirm")
	for _, want := range []string{"Discard changes", "Keep editing", "not run or saved"} {
		if !strings.Contains(text, want) {
			t.Errorf("the question asked by New reads %q, want %q in it", text, want)
		}
	}
	if err := chromedp.Do(ctx, clickChoice("Keep editing"), settled(`!document.getElementById("pg-confirm").open`)); err != nil {
		t.Fatal(err)
	}
	if got := messages(t, ctx); len(got) != 1 || got[0] != "user: My careful draft" {
		t.Errorf("after Keep editing the conversation is %q, want the draft kept", got)
	}
	if n := evalString(t, ctx, `String(document.querySelectorAll("#pg-choices .choice").length)`); n != "1" {
		t.Errorf("after Keep editing the output has %s answers, want the answer kept", n)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#pg-new")), chromedp.Poll[chromedp.Void](`document.getElementById("pg-confirm").open`), clickChoice("Discard changes"), settled(`document.getElementById("pg-choices").innerText.includes("Press Run")`)); err != nil {
		t.Fatal(err)
	}
	if got := messages(t, ctx); len(got) != 1 || got[0] != "user: " {
		t.Errorf("after Discard the conversation is %q, want one empty user message", got)
	}
	if sys := evalString(t, ctx, `document.getElementById("pg-system").value`); sys != "" {
		t.Errorf("after Discard the system message is %q, want it empty", sys)
	}
	if m := evalString(t, ctx, `document.getElementById("pg-metrics").innerText`); m != "" {
		t.Errorf("after Discard the metrics read %q, want none", m)
	}
	if pm := evalString(t, ctx, `document.getElementById("pg-provider").value + " " + document.getElementById("pg-model").value`); pm != "sim sim-fast" {
		t.Errorf("after Discard the provider and model are %q, want them kept", pm)
	}

	// An empty editor has nothing to lose: New does not ask.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#pg-new")), settled("")); err != nil {
		t.Fatal(err)
	}
	if open := evalString(t, ctx, `String(document.getElementById("pg-confirm").open)`); open != "false" {
		t.Error("New on an editor with no changes asked anyway")
	}
	// The server has the empty editor: a reload shows it, with no output.
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/"), settled("")); err != nil {
		t.Fatal(err)
	}
	if got := messages(t, ctx); len(got) != 1 || got[0] != "user: " {
		t.Errorf("after a reload the conversation is %q, want the empty one New left", got)
	}
	if n := evalString(t, ctx, `String(document.querySelectorAll("#pg-choices .choice").length)`); n != "0" {
		t.Errorf("after New and a reload the output shows %s answers, want none", n)
	}
}

func TestBrowserEditorOpeningARunAsksBeforeReplacingUnsavedWork(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	if err := chromedp.Do(ctx, choose("sim", "sim-fast"), typeMessage(0, "Tell me about lighthouses.")); err != nil {
		t.Fatal(err)
	}
	runAndWait(t, ctx)
	run, _ := lastRun(t, s, s.userID(t, "ada"))
	// A draft the server has (the page saves as the user types), then the
	// run is opened from History.
	err := chromedp.Do(ctx,
		typeMessage(0, "My unsaved draft"),
		settled(`document.getElementById("playground").dataset.stored === "unsaved"`),
		chromedp.Navigate(s.url+"/history"),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`a[href="/runs/%d"]`, run.ID))),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`form[action="/runs/%d/open"] button`, run.ID))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`form[action="/runs/%d/open"] button`, run.ID))),
	)
	if err != nil {
		t.Fatal(err)
	}
	text := dialogOpen(t, ctx, "#pg-pending")
	for _, want := range []string{fmt.Sprintf("Open run %d?", run.ID), "Keep mine", fmt.Sprintf("Replace with run %d", run.ID)} {
		if !strings.Contains(text, want) {
			t.Errorf("the question reads %q, want %q in it", text, want)
		}
	}
	screenshot(t, ctx, "playground-open-asks.png")
	if got := messages(t, ctx); len(got) != 1 || got[0] != "user: My unsaved draft" {
		t.Errorf("while it asks the editor holds %q, want the draft", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#pg-pending [data-keep]")), settled(`(document.querySelector(".flash") || { textContent: "" }).textContent.includes("Kept your playground")`)); err != nil {
		t.Fatal(err)
	}
	if got := messages(t, ctx); len(got) != 1 || got[0] != "user: My unsaved draft" {
		t.Errorf("after Keep mine the editor holds %q, want the draft", got)
	}
	if n := evalString(t, ctx, `String(document.querySelectorAll("#pg-pending").length)`); n != "0" {
		t.Error("after Keep mine the question is asked again")
	}
	// Kept means kept: a reload still has the draft.
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/"), settled("")); err != nil {
		t.Fatal(err)
	}
	if got := messages(t, ctx); len(got) != 1 || got[0] != "user: My unsaved draft" {
		t.Errorf("after Keep mine and a reload the editor holds %q, want the draft", got)
	}

	// Asked again, Replace opens the run: its setup and its answer.
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+fmt.Sprintf("/runs/%d", run.ID)),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`form[action="/runs/%d/open"] button`, run.ID))),
	)
	if err != nil {
		t.Fatal(err)
	}
	dialogOpen(t, ctx, "#pg-pending")
	if err := chromedp.Do(ctx, clickChoice(fmt.Sprintf("Replace with run %d", run.ID)), settled(`(document.querySelector(".flash") || { textContent: "" }).textContent.includes("Opened run") && document.querySelector("#pg-metrics a[href^='/runs/']")`)); err != nil {
		t.Fatal(err)
	}
	if got := messages(t, ctx); len(got) != 1 || got[0] != "user: Tell me about lighthouses." {
		t.Errorf("after Replace the editor holds %q, want the run's conversation", got)
	}
	if href := evalString(t, ctx, `document.querySelector("#pg-metrics a[href^='/runs/']").getAttribute("href")`); href != fmt.Sprintf("/runs/%d", run.ID) {
		t.Errorf("after Replace the output is of %s, want run %d's answer", href, run.ID)
	}

	// With nothing unsaved, opening does not ask.
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+fmt.Sprintf("/runs/%d", run.ID)),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`form[action="/runs/%d/open"] button`, run.ID))),
		settled(`(document.querySelector(".flash") || { textContent: "" }).textContent.includes("Loaded the setup of run")`),
	)
	if err != nil {
		t.Fatal(err)
	}
	if n := evalString(t, ctx, `String(document.querySelectorAll("#pg-pending").length)`); n != "0" {
		t.Error("opening a run over an editor with no unsaved changes asked")
	}
}

func TestBrowserEditorOutputIsStillThereAfterVisitingHistory(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	if err := chromedp.Do(ctx, choose("sim", "sim-fast"), typeMessage(0, "Tell me about tides.")); err != nil {
		t.Fatal(err)
	}
	runAndWait(t, ctx)
	run, res := lastRun(t, s, s.userID(t, "ada"))
	metrics := evalString(t, ctx, `document.querySelector("#pg-metrics dl").innerText`)
	err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`.mainnav a[href="/history"]`)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`a[href="/runs/%d"]`, run.ID))),
		chromedp.Click(chromedp.CSS(`.mainnav a[href="/"]`)),
		settled(`document.querySelector("#pg-metrics a[href^='/runs/']") && !document.getElementById("playground").classList.contains("running")`),
		// The answer's own text, as the model sent it.
		chromedp.Click(chromedp.CSS("#pg-show-raw")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, ctx, `document.querySelector("#pg-choices .choice .content").textContent`); got != res.Choices[0].Content {
		t.Errorf("back from History the output reads %q, want the answer %q", got, res.Choices[0].Content)
	}
	if href := evalString(t, ctx, `document.querySelector("#pg-metrics a[href^='/runs/']").getAttribute("href")`); href != fmt.Sprintf("/runs/%d", run.ID) {
		t.Errorf("back from History the output links to %s, want /runs/%d", href, run.ID)
	}
	again := evalString(t, ctx, `document.querySelector("#pg-metrics dl").innerText`)
	for _, label := range []string{"Tokens", "Total", "Status"} {
		if !strings.Contains(again, label) {
			t.Errorf("back from History the metrics read %q, want %s (before: %q)", again, label, metrics)
		}
	}
	// Coming back is no change: nothing is unsaved, New does not ask.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#pg-new")), settled("")); err != nil {
		t.Fatal(err)
	}
	if open := evalString(t, ctx, `String(document.getElementById("pg-confirm").open)`); open != "false" {
		t.Error("the editor, untouched since the run, counts as changed after a visit to History")
	}
}

func TestBrowserEditorChangedPresetSavesAsNewVersionOrNewPreset(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	user := s.userID(t, "ada")
	err := chromedp.Do(ctx,
		choose("sim", "sim-fast"),
		typeMessage(0, "Summarise the tides."),
		chromedp.Click(chromedp.CSS("#pg-save-as")),
		chromedp.WaitVisible(chromedp.CSS("#sv-name")),
		chromedp.SetValue(chromedp.CSS("#sv-name"), "Tides"),
		chromedp.Click(chromedp.CSS(`#pg-save-form button[value="save"]`)),
		settled(`document.getElementById("pg-preset-name").textContent === "Tides"`),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !isHidden(t, ctx, "#pg-preset-dirty") {
		t.Error("a preset just saved shows as modified")
	}
	if err := chromedp.Do(ctx, typeInto("#p-temperature", "0.9"), settled("")); err != nil {
		t.Fatal(err)
	}
	if isHidden(t, ctx, "#pg-preset-dirty") || evalString(t, ctx, `document.getElementById("pg-preset-dirty").textContent`) != "modified" {
		t.Error("a changed preset is not marked modified next to its name")
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#pg-save"))); err != nil {
		t.Fatal(err)
	}
	text := dialogOpen(t, ctx, "#pg-confirm")
	for _, want := range []string{"Save as new version of Tides", "Save as a new preset"} {
		if !strings.Contains(text, want) {
			t.Errorf("Save asks %q, want %q among the choices", text, want)
		}
	}
	screenshot(t, ctx, "playground-save-choices.png")
	if err := chromedp.Do(ctx, clickChoice("Save as new version of Tides"), settled(`document.getElementById("pg-preset-status").textContent.includes("version 2")`)); err != nil {
		t.Fatal(err)
	}
	presets, err := s.store.Presets(context.Background(), user, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(presets) != 1 || presets[0].Version != 2 || !strings.Contains(presets[0].Spec, `"temperature":0.9`) {
		t.Fatalf("after Save as new version the presets are %+v, want Tides alone at version 2 with temperature 0.9", presets)
	}
	if !isHidden(t, ctx, "#pg-preset-dirty") {
		t.Error("the preset shows as modified right after it was saved")
	}

	err = chromedp.Do(ctx,
		typeInto("#p-temperature", "0.3"),
		settled(""),
		chromedp.Click(chromedp.CSS("#pg-save")),
		chromedp.Poll[chromedp.Void](`document.getElementById("pg-confirm").open`),
		clickChoice("Save as a new preset"),
		chromedp.WaitVisible(chromedp.CSS("#sv-name")),
		chromedp.SetValue(chromedp.CSS("#sv-name"), "Tides, colder"),
		chromedp.Click(chromedp.CSS(`#pg-save-form button[value="save"]`)),
		settled(`document.getElementById("pg-preset-name").textContent === "Tides, colder"`),
	)
	if err != nil {
		t.Fatal(err)
	}
	presets, err = s.store.Presets(context.Background(), user, "")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	versions := map[string]int{}
	for _, p := range presets {
		byName[p.Name], versions[p.Name] = p.Spec, p.Version
	}
	if len(presets) != 2 || versions["Tides"] != 2 || !strings.Contains(byName["Tides"], `"temperature":0.9`) {
		t.Errorf("after Save as a new preset Tides is version %d with %s (of %d presets), want it unchanged at version 2", versions["Tides"], byName["Tides"], len(presets))
	}
	if versions["Tides, colder"] != 1 || !strings.Contains(byName["Tides, colder"], `"temperature":0.3`) {
		t.Errorf("the new preset is version %d with %s, want version 1 with temperature 0.3", versions["Tides, colder"], byName["Tides, colder"])
	}
}

func isHidden(t testing.TB, ctx context.Context, sel string) bool {
	t.Helper()
	s, _ := json.Marshal(sel)
	return evalString(t, ctx, `String(document.querySelector(`+string(s)+`).hidden)`) == "true"
}

// copied clicks the Copy button sel and checks that it says the text was
// copied, not only selected.
func copied(t testing.TB, ctx context.Context, sel string) {
	t.Helper()
	s, _ := json.Marshal(sel)
	err := chromedp.Do(ctx,
		// In the middle of the window, as a user would have it: a button
		// just inside the top edge is under the sticky toolbar, and a
		// click there lands on the toolbar.
		chromedp.Evaluate[chromedp.Void](`document.querySelector(`+string(s)+`).scrollIntoView({ block: "center" })`),
		chromedp.Click(chromedp.CSS(sel)),
		chromedp.Poll[chromedp.Void](`document.querySelector(`+string(s)+`).dataset.copied`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("clicking %s: %v", sel, err)
	}
	if got := evalString(t, ctx, `document.querySelector(`+string(s)+`).dataset.copied + ": " + document.querySelector(`+string(s)+`).textContent`); got != "copied: Copied" {
		t.Errorf("after a click %s reads %q, want it to say Copied", sel, got)
	}
}

func readClipboard(t testing.TB, ctx context.Context) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("reading the clipboard: %v", err)
	}
	return v
}

func TestBrowserEditorCopiesTheAnswerAndItsCodeBlocks(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	grantClipboard(t, ctx, s.url)
	err := chromedp.Do(ctx,
		choose("sim", "sim-fast"),
		typeMessage(0, "Write a Python function that parses invoices from a CSV file."),
	)
	if err != nil {
		t.Fatal(err)
	}
	runAndWait(t, ctx)
	_, res := lastRun(t, s, s.userID(t, "ada"))
	answer := res.Choices[0].Content
	if !strings.Contains(answer, "```python") {
		t.Fatalf("the simulator's answer has no code block to copy: %q", answer)
	}
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.querySelector("#pg-choices .content.md .code-block .code-copy")`, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		t.Fatalf("the rendered answer's code block has no Copy button: %v", err)
	}
	if streaming := evalString(t, ctx, `String(document.querySelectorAll("#pg-choices .content.streaming").length)`); streaming != "0" {
		t.Error("the streaming cursor's class is still on the answer after the run ended")
	}
	screenshot(t, ctx, "playground-after-run.png")

	copied(t, ctx, "#pg-choices .copy-answer")
	if got := readClipboard(t, ctx); got != answer {
		t.Errorf("Copy on the answer put %q on the clipboard, want the answer %q", got, answer)
	}

	code := evalString(t, ctx, `document.querySelector("#pg-choices .code-block pre").textContent`)
	copied(t, ctx, "#pg-choices .code-copy")
	if got := readClipboard(t, ctx); got != code || !strings.Contains(answer, strings.TrimSpace(got)) {
		t.Errorf("Copy on the code block put %q on the clipboard, want the block's code %q, as in the answer", got, code)
	}

	copied(t, ctx, "#pg-messages .message [data-copy-message]")
	if got := readClipboard(t, ctx); got != "Write a Python function that parses invoices from a CSV file." {
		t.Errorf("Copy on the message put %q on the clipboard", got)
	}
}

func TestBrowserEditorBranchFromHereKeepsTheMessagesUpToIt(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("sim", "sim-fast"),
		typeMessage(0, "First question"),
		chromedp.Click(chromedp.CSS(`[data-add-message="assistant"]`)),
		typeMessage(1, "First answer"),
		chromedp.Click(chromedp.CSS(`[data-add-message="user"]`)),
		typeMessage(2, "Second question"),
		chromedp.Click(chromedp.CSS(`[data-add-message="assistant"]`)),
		typeMessage(3, "Second answer"),
		// A preset is loaded: the branch is a new conversation, not the preset.
		chromedp.Click(chromedp.CSS("#pg-save-as")),
		chromedp.WaitVisible(chromedp.CSS("#sv-name")),
		chromedp.SetValue(chromedp.CSS("#sv-name"), "Quiz"),
		chromedp.Click(chromedp.CSS(`#pg-save-form button[value="save"]`)),
		settled(`document.getElementById("pg-preset-name").textContent === "Quiz"`),
		chromedp.Click(chromedp.CSS("#pg-messages .message:nth-child(2) [data-branch]")),
	)
	if err != nil {
		t.Fatal(err)
	}
	text := dialogOpen(t, ctx, "#pg-confirm")
	for _, want := range []string{"Branch from message 2?", "messages 1 to 2", "Nothing of this conversation was run"} {
		if !strings.Contains(text, want) {
			t.Errorf("Branch from here asks %q, want %q in it", text, want)
		}
	}
	// The dialog's close event, which carries the answer, comes a task
	// after it closes: wait for the branch itself.
	if err := chromedp.Do(ctx, clickChoice("Branch"), settled(`!document.getElementById("pg-confirm").open && document.querySelectorAll("#pg-messages .message").length === 2`)); err != nil {
		t.Fatal(err)
	}
	want := []string{"user: First question", "assistant: First answer"}
	if got := messages(t, ctx); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("after branching the conversation is %q, want %q", got, want)
	}
	if name := evalString(t, ctx, `document.getElementById("pg-preset-name").textContent`); name != "none" {
		t.Errorf("after branching the preset is %q, want none attached", name)
	}
	// The branch is what runs: the request carries its messages.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-add-message="user"]`)), typeMessage(2, "A different second question")); err != nil {
		t.Fatal(err)
	}
	runAndWait(t, ctx)
	run, _ := lastRun(t, s, s.userID(t, "ada"))
	var spec struct {
		Body struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		} `json:"body"`
	}
	if err := json.Unmarshal([]byte(run.Spec), &spec); err != nil {
		t.Fatal(err)
	}
	var sent []string
	for _, m := range spec.Body.Messages {
		sent = append(sent, m.Role+": "+m.Content)
	}
	wantSent := []string{"system: You are a helpful assistant.", "user: First question", "assistant: First answer", "user: A different second question"}
	if strings.Join(sent, "|") != strings.Join(wantSent, "|") {
		t.Errorf("the branch's run sent %q, want %q", sent, wantSent)
	}
	if run.PresetID != 0 {
		t.Errorf("the branch's run belongs to preset %d, want none", run.PresetID)
	}

	// Branching a conversation as it was run says it stays in history.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#pg-messages .message:nth-child(1) [data-branch]"))); err != nil {
		t.Fatal(err)
	}
	if text := dialogOpen(t, ctx, "#pg-confirm"); !strings.Contains(text, "stays in history") {
		t.Errorf("branching a conversation just run asks %q, want it to say the conversation stays in history", text)
	}
	if err := chromedp.Do(ctx, clickChoice("Cancel"), settled(`!document.getElementById("pg-confirm").open`)); err != nil {
		t.Fatal(err)
	}
	if got := messages(t, ctx); len(got) != 3 {
		t.Errorf("after Cancel the conversation is %q, want it unchanged", got)
	}
}

// cursorJS reads the streaming cursor at the end of the first answer's
// text: the ::after of its last text block, "none" when there is none.
const cursorJS = `(() => { const b = document.querySelector("#pg-choices .choice .content > .text-block:last-child"); return b ? getComputedStyle(b, "::after").content : "no text"; })()`

func TestBrowserEditorShowsAStreamingCursorUntilTheRunEnds(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("sim", "sim-slow"),
		typeMessage(0, "Tell me a long tale about tides."),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "30"),
		chromedp.Click(chromedp.CSS("#pg-run")),
		chromedp.Poll[chromedp.Void](cursorJS+` === '"▍"'`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("no cursor at the end of the text while it streams: %v", err)
	}
	waitRunDone(t, ctx)
	if c := evalString(t, ctx, cursorJS); c == `"▍"` {
		t.Error("after the run the end of the answer still shows the streaming cursor")
	}
	if n := evalString(t, ctx, `String(document.querySelectorAll("#pg-choices .content.streaming").length)`); n != "0" {
		t.Errorf("after the run %s answers are still marked as streaming", n)
	}
}
