package web_test

// Browser tests: Debian's Chromium driven with chromedp against the real
// server. .ci/run installs chromium; without it these tests fail with a
// message saying so, never skip.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"knobs/db"
)

// newBrowser starts a headless Chromium for one test. Browser tests run
// in parallel with each other (they mostly wait on pages and paced
// streams), each with its own server, database and browser profile.
func newBrowser(t testing.TB) context.Context {
	t.Helper()
	if tt, ok := t.(*testing.T); ok {
		tt.Parallel()
	}
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Fatal("the browser tests need Chromium: apt-get install chromium (.ci/run installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
		// This machine's network is closed: keep Chromium from calling home.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	return ctx
}

// browserSignUp creates the first account through the sign-up form.
func browserSignUp(t testing.TB, ctx context.Context, s *server, name string) {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/signup"),
		chromedp.WaitVisible(chromedp.CSS("#username")),
		chromedp.SendKeys(chromedp.CSS("#username"), name),
		chromedp.SendKeys(chromedp.CSS("#password"), testPassword),
		chromedp.SendKeys(chromedp.CSS("#password2"), testPassword),
		chromedp.Submit(chromedp.CSS("#username")),
		chromedp.WaitVisible(chromedp.CSS("#playground")),
		// The page script has set up the panel and the models are in.
		chromedp.Poll[chromedp.Void](`document.getElementById("playground").dataset.ready && !document.getElementById("playground").dataset.busy`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("sign up in the browser: %v", err)
	}
}

func screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot is not a PNG (%d bytes)", len(png))
	}
	path := filepath.Join(t.TempDir(), name)
	if dir := os.Getenv("KNOBS_SCREENSHOTS"); dir != "" {
		path = filepath.Join(dir, name)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBrowserSignUpLandsOnPlayground(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if loc != s.url+"/" {
		t.Errorf("after sign-up the browser is at %s, want the playground %s/", loc, s.url)
	}
	nav, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".mainnav")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Playground", "Compare", "Presets", "History", "Settings"} {
		if !strings.Contains(nav, want) {
			t.Errorf("navigation %q lacks %q", nav, want)
		}
	}
	screenshot(t, ctx, "playground.png")
}

// waitRunDone waits until the page shows a finished run and returns its
// status as the metrics bar shows it.
func waitRunDone(t testing.TB, ctx context.Context) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.getElementById("playground").classList.contains("running") && document.querySelector("#pg-metrics dl") !== null && document.getElementById("pg-run").disabled === false`, chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		t.Fatalf("waiting for the run to finish: %v", err)
	}
}

// lastRun loads the newest run of user from the database.
func lastRun(t testing.TB, s *server, user int64) (db.Run, runResult) {
	t.Helper()
	var id int64
	for i := int64(1); i < 1000; i++ {
		if _, err := s.store.Run(context.Background(), user, i); err != nil {
			break
		}
		id = i
	}
	if id == 0 {
		t.Fatal("no run was stored")
	}
	r, err := s.store.Run(context.Background(), user, id)
	if err != nil {
		t.Fatal(err)
	}
	var res runResult
	if err := json.Unmarshal([]byte(r.Result), &res); err != nil {
		t.Fatalf("stored result %q: %v", r.Result, err)
	}
	return r, res
}

// runResult is the part of a stored result these tests read.
type runResult struct {
	Choices []struct {
		Content      string `json:"content"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Error *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

// choose sets the provider and model pickers as a user would and waits
// until the page has settled (model list and parameter panel loaded for
// them), so that later actions do not touch controls being replaced.
func choose(provider, model string) chromedp.Action[chromedp.Void] {
	p, _ := json.Marshal(provider)
	m, _ := json.Marshal(model)
	settled := func(cond string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](`document.getElementById("playground").dataset.ready && !document.getElementById("playground").dataset.busy && `+cond, chromedp.WithPollingInterval(20*time.Millisecond))
	}
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		err := chromedp.Do(ctx,
			settled("true"),
			chromedp.SetValue(chromedp.CSS("#pg-provider"), provider),
			settled(`document.querySelector("#pg-panel .panel").dataset.provider === `+string(p)),
			chromedp.SetValue(chromedp.CSS("#pg-model"), model),
			settled(`document.querySelector("#pg-panel .panel").dataset.model === `+string(m)),
		)
		return chromedp.Void{}, err
	}
}

// setMessage puts text in the last message of the chat editor.
func setMessage(text string) chromedp.Action[chromedp.Void] {
	js, _ := json.Marshal(text)
	return chromedp.Evaluate[chromedp.Void](`(() => { const all = document.querySelectorAll("#pg-messages .message [data-content]"); all[all.length - 1].value = ` + string(js) + `; })()`)
}

func TestBrowserChatRunOnSimFastShowsTheWholeAnswer(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("sim", "sim-fast"),
		setMessage("Write about the history of lighthouses."),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "400"),
		chromedp.Click(chromedp.CSS("#pg-run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	_, res := lastRun(t, s, s.userID(t, "ada"))
	if len(res.Choices) != 1 || len(res.Choices[0].Content) < 200 {
		t.Fatalf("stored run has %+v, want one long answer", res.Choices)
	}
	// The raw-text view shows exactly what was streamed.
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const b = document.getElementById("pg-show-raw"); b.click(); return document.querySelector(".choice .content").textContent; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if shown != res.Choices[0].Content {
		t.Errorf("page shows %d characters, the run stored %d; they differ:\npage:   %.200q\nstored: %.200q", len(shown), len(res.Choices[0].Content), shown, res.Choices[0].Content)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#pg-metrics")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"First token", "Tokens/s", "done"} {
		if !strings.Contains(status, want) {
			t.Errorf("metrics %q lack %q", status, want)
		}
	}
	// The answer stays in the output; the conversation is as it was.
	if roles := messageRoles(t, ctx); len(roles) != 1 || roles[0] != "user" {
		t.Errorf("message roles after the run = %v, want the user's message alone", roles)
	}
	screenshot(t, ctx, "run.png")
}

func TestBrowserStopDuringSimSlowKeepsThePartialAnswer(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("sim", "sim-slow"),
		setMessage("Tell me a long story about rivers."),
		chromedp.Click(chromedp.CSS("#pg-run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Wait for some words, then press Esc.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(document.querySelector(".choice .content") || {textContent: ""}).textContent.length > 20`, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("no text streamed from sim-slow: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent("\u001b")); err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	run, res := lastRun(t, s, s.userID(t, "ada"))
	if run.Status != db.RunCancelled {
		t.Fatalf("stored status = %q, want %q", run.Status, db.RunCancelled)
	}
	if len(res.Choices) == 0 || len(res.Choices[0].Content) < 20 {
		t.Fatalf("stored partial answer = %+v, want the text streamed before Stop", res.Choices)
	}
	shown, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#pg-choices")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown, "Stopped") {
		t.Errorf("the page does not say the run was stopped: %q", shown)
	}
}

func TestBrowserRateLimitShowsTheProvidersMessage(t *testing.T) {
	const message = "Requests per minute limit exceeded - too many requests sent."
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"message":"` + message + `","type":"too_many_requests_error","param":"quota","code":"request_quota_exceeded"}`))
	}))
	defer upstream.Close()
	s := newServer(t)
	if err := s.store.CreateCustomProvider(context.Background(), db.CustomProvider{ID: "busy", Name: "Busy", BaseURL: upstream.URL}, nil, ""); err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("busy", "any-model"),
		chromedp.Click(chromedp.CSS("#pg-run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	box, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#pg-error")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"429", message, "retry in"} {
		if !strings.Contains(box, want) {
			t.Errorf("error box %q lacks %q", box, want)
		}
	}
}

func TestBrowserOutOfRangeTemperatureIsRefusedBesideTheField(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS("#p-temperature"), "5"),
		chromedp.Click(chromedp.CSS("#pg-run")),
		chromedp.WaitVisible(chromedp.CSS(`[data-error-for="temperature"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-error-for="temperature"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "temperature") || !strings.Contains(msg, "2") {
		t.Errorf("message beside temperature = %q, want it to name the range", msg)
	}
	// The message sits in the temperature control itself.
	inParam, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-error-for="temperature"]').closest('[data-param="temperature"]') !== null`))
	if err != nil || !inParam {
		t.Errorf("the temperature message is not beside its field (err %v)", err)
	}
	if _, err := s.store.Run(context.Background(), s.userID(t, "ada"), 1); err == nil {
		t.Error("a run was stored although the temperature was refused")
	}
}

func TestBrowserHistoryFindsAndOpensARun(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("sim", "sim-fast"),
		setMessage("Write about the migration of arctic terns."),
		chromedp.Click(chromedp.CSS("#pg-run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/history"),
		chromedp.WaitVisible(chromedp.CSS("#h-q")),
		chromedp.SendKeys(chromedp.CSS("#h-q"), "terns"),
		chromedp.Submit(chromedp.CSS("#h-q")),
		chromedp.WaitVisible(chromedp.CSS("table.runs mark")),
	)
	if err != nil {
		t.Fatalf("searching history: %v", err)
	}
	mark, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("table.runs mark")))
	if err != nil || !strings.EqualFold(mark, "terns") {
		t.Errorf("highlighted %q (%v), want terns", mark, err)
	}
	screenshot(t, ctx, "history.png")
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("table.runs td.texts a")),
		chromedp.WaitVisible(chromedp.CSS(".run-page")),
	)
	if err != nil {
		t.Fatalf("opening the run: %v", err)
	}
	body, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".run-page")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"arctic terns", "Knobs simulator", "First token", "done"} {
		if !strings.Contains(body, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	screenshot(t, ctx, "run-page.png")
}

func TestBrowserSaveAPresetWithVariables(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("sim", "sim-fast"),
		setMessage("Write a haiku about {{subject}}."),
		// The editor's input event makes the page look for variables.
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#pg-messages .message:last-child [data-content]").dispatchEvent(new Event("input", {bubbles: true}))`),
		chromedp.WaitVisible(chromedp.CSS("#var-subject")),
		chromedp.SendKeys(chromedp.CSS("#var-subject"), "autumn rain"),
		chromedp.Click(chromedp.CSS("#pg-save-as")),
		chromedp.WaitVisible(chromedp.CSS("#sv-name")),
		chromedp.SetValue(chromedp.CSS("#sv-name"), "Haiku writer"),
		chromedp.Click(chromedp.CSS(`#pg-save-form button[value="save"]`)),
		chromedp.Poll[chromedp.Void](`document.getElementById("pg-preset-name").textContent === "Haiku writer"`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("saving a preset in the browser: %v", err)
	}
	dirty, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.getElementById("pg-preset-dirty").hidden`))
	if err != nil || dirty {
		t.Errorf("a preset just saved shows as modified (%v)", err)
	}
	// A change marks it modified; Save, as a new version, makes version 2.
	err = chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS("#p-temperature"), "0.3"),
		chromedp.Poll[chromedp.Void](`!document.getElementById("pg-preset-dirty").hidden && !document.getElementById("pg-save").disabled`, chromedp.WithPollingInterval(20*time.Millisecond)),
		chromedp.Click(chromedp.CSS("#pg-save")),
		chromedp.Poll[chromedp.Void](`document.getElementById("pg-confirm").open`, chromedp.WithPollingInterval(20*time.Millisecond)),
		clickChoice("Save as new version of Haiku writer"),
		chromedp.Poll[chromedp.Void](`document.getElementById("pg-preset-dirty").hidden && document.getElementById("pg-preset-status").textContent.includes("version 2")`, chromedp.WithPollingInterval(20*time.Millisecond)),
		chromedp.Click(chromedp.CSS("#pg-run")),
	)
	if err != nil {
		t.Fatalf("changing and saving the preset: %v", err)
	}
	waitRunDone(t, ctx)
	run, _ := lastRun(t, s, s.userID(t, "ada"))
	if !strings.Contains(run.RawRequest, "Write a haiku about autumn rain.") || run.PresetID == 0 {
		t.Errorf("the run sent %s from preset %d; want the variable filled in and the preset recorded", run.RawRequest, run.PresetID)
	}
	presets, err := s.store.Presets(context.Background(), s.userID(t, "ada"), "")
	if err != nil || len(presets) != 1 || presets[0].Version != 2 || presets[0].Variables["subject"] != "autumn rain" {
		t.Errorf("stored presets %+v (%v)", presets, err)
	}
	screenshot(t, ctx, "preset.png")
}

func TestBrowserCompletionModeSendsAPrompt(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`input[name="endpoint"][value="completion"]`)),
		chromedp.WaitVisible(chromedp.CSS("#pg-prompt")),
		// The panel is rebuilt for the completions endpoint: echo is one of its fields.
		chromedp.Poll[chromedp.Void](`!document.getElementById("playground").dataset.busy && document.querySelector('#pg-panel [data-param="echo"]') !== null`, chromedp.WithPollingInterval(20*time.Millisecond)),
		chromedp.SetValue(chromedp.CSS("#pg-prompt"), "The old clock tower"),
		chromedp.SetValue(chromedp.CSS("#p-max_tokens"), "30"),
		chromedp.SetValue(chromedp.CSS("#p-echo"), "true"),
		chromedp.Click(chromedp.CSS("#pg-run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	run, res := lastRun(t, s, s.userID(t, "ada"))
	if run.Endpoint != "completion" || !strings.Contains(run.RawRequest, `"prompt":"The old clock tower"`) || !strings.Contains(run.RawRequest, `"echo":true`) {
		t.Fatalf("stored %s run with request %s", run.Endpoint, run.RawRequest)
	}
	if len(res.Choices) == 0 || !strings.HasPrefix(res.Choices[0].Content, "The old clock tower") {
		t.Errorf("with echo the answer should start with the prompt: %+v", res.Choices)
	}
	// A completion is not a chat: nothing is appended to the messages.
	roles, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#pg-messages .message").length`))
	if err != nil {
		t.Fatal(err)
	}
	if roles > 1 {
		t.Errorf("a completion appended %d messages to the chat editor", roles)
	}
}

// messageRoles is the role of each message of the playground's conversation.
func messageRoles(t testing.TB, ctx context.Context) []string {
	t.Helper()
	roles, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#pg-messages [data-role]")).map(s => s.value)`))
	if err != nil {
		t.Fatal(err)
	}
	return roles
}

// storedRequest is the body of a stored run's request as the user wrote it.
type storedRequest struct {
	Body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Temperature *float64 `json:"temperature"`
	} `json:"body"`
}

// runsNewestFirst loads user's stored requests, newest first, without
// their system message.
func runsNewestFirst(t testing.TB, s *server, user int64) []storedRequest {
	t.Helper()
	list, _, err := s.store.Runs(context.Background(), db.RunFilter{UserID: user, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var out []storedRequest
	for _, r := range list {
		run, err := s.store.Run(context.Background(), user, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		var req storedRequest
		if err := json.Unmarshal([]byte(run.Spec), &req); err != nil {
			t.Fatal(err)
		}
		// The system prompt has its own field on the page: the
		// conversation is what follows it.
		if m := req.Body.Messages; len(m) > 0 && m[0].Role == "system" {
			req.Body.Messages = m[1:]
		}
		out = append(out, req)
	}
	return out
}

// Tweak and run again: the second run sends the same conversation with
// the new temperature, not the first answer as an extra turn.
func TestBrowserRunTwiceKeepsTheConversation(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	run := func(temperature string) {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS("#p-temperature"), temperature),
			chromedp.Click(chromedp.CSS("#pg-run")),
		); err != nil {
			t.Fatal(err)
		}
		waitRunDone(t, ctx)
	}
	if err := chromedp.Do(ctx, choose("sim", "sim-fast"), setMessage("Name three lighthouses."),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "30")); err != nil {
		t.Fatal(err)
	}
	run("0.2")
	run("0.9")
	runs := runsNewestFirst(t, s, s.userID(t, "ada"))
	if len(runs) != 2 {
		t.Fatalf("%d runs stored, want 2", len(runs))
	}
	for i, want := range []float64{0.9, 0.2} {
		r := runs[i]
		if len(r.Body.Messages) != 1 || r.Body.Messages[0].Role != "user" || r.Body.Messages[0].Content != "Name three lighthouses." {
			t.Errorf("run %d sent %+v, want the one user message", i, r.Body.Messages)
		}
		if r.Body.Temperature == nil || *r.Body.Temperature != want {
			t.Errorf("run %d sent temperature %v, want %v", i, r.Body.Temperature, want)
		}
	}
	if roles := messageRoles(t, ctx); len(roles) != 1 {
		t.Errorf("the conversation changed: %v", roles)
	}
}

// Add to conversation, then reply: the next request is user, assistant
// (the answer), user (the reply).
func TestBrowserAddToConversationThenReply(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	if err := chromedp.Do(ctx, choose("sim", "sim-fast"), setMessage("Name a lighthouse."),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "20"),
		chromedp.Click(chromedp.CSS("#pg-run"))); err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	_, first := lastRun(t, s, s.userID(t, "ada"))
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#pg-add"))); err != nil {
		t.Fatal(err)
	}
	if roles := messageRoles(t, ctx); len(roles) != 2 || roles[1] != "assistant" {
		t.Fatalf("after Add to conversation the roles are %v, want user, assistant", roles)
	}
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS("#pg-reply-text"), "And another?"),
		chromedp.Click(chromedp.CSS(`#pg-reply button[type="submit"]`)),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll("#pg-messages [data-role]").length === 3`, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	runs := runsNewestFirst(t, s, s.userID(t, "ada"))
	if len(runs) != 2 {
		t.Fatalf("%d runs stored, want 2", len(runs))
	}
	m := runs[0].Body.Messages
	if len(m) != 3 || m[0].Role != "user" || m[1].Role != "assistant" || m[2].Role != "user" || m[2].Content != "And another?" {
		t.Fatalf("the reply sent %+v, want user, assistant, user", m)
	}
	if m[1].Content != first.Choices[0].Content {
		t.Errorf("the assistant turn sent is %q, the first answer was %q", m[1].Content, first.Choices[0].Content)
	}
}

// A rate from a handful of tokens means nothing: the page shows none.
func TestBrowserTinyAnswerShowsNoTokensPerSecond(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	if err := chromedp.Do(ctx, choose("sim", "sim-fast"), setMessage("Hi."),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "3"),
		chromedp.Click(chromedp.CSS("#pg-run"))); err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	rate, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { for (const d of document.querySelectorAll("#pg-metrics dl > div")) if (d.querySelector("dt").textContent === "Tokens/s") return d.querySelector("dd").textContent; return "missing"; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if rate != "—" {
		t.Errorf("a 3-token answer shows %q tokens/s, want —", rate)
	}
}
