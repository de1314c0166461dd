package web_test

// Browser tests of provider fidelity (issue 12): what the playground sends
// is the request as written, and what the provider answered is shown.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"knobs/db"
	"knobs/llm/llmtest"
	"knobs/runner"
)

// playgroundReady waits until the playground's script has set up the page
// and nothing is loading.
var playgroundReady = chromedp.Poll[chromedp.Void](`document.getElementById("playground").dataset.ready && !document.getElementById("playground").dataset.busy && document.querySelector("#pg-panel .panel") !== null`, chromedp.WithPollingInterval(20*time.Millisecond))

// openPreset stores spec as a preset of user and opens it in the
// playground the way a user does, from the preset's page.
func openPreset(t *testing.T, ctx context.Context, s *server, user, spec string) {
	t.Helper()
	p, err := s.store.CreatePreset(context.Background(), db.Preset{OwnerID: s.userID(t, user), Name: "Two openings", Visibility: db.PresetTeam, Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/presets/%d", s.url, p.ID)),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`form[action="/presets/%d/open"] button`, p.ID))),
		chromedp.WaitVisible(chromedp.CSS("#playground")),
		playgroundReady,
	)
	if err != nil {
		t.Fatalf("opening the preset in the playground: %v", err)
	}
}

func TestBrowserArrayPromptFromAPresetGoesOutAsAnArray(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	openPreset(t, ctx, s, "ada", `{"provider":"sim","endpoint":"completion","body":{"model":"sim-fast","prompt":["The lighthouse keeper","The old clock tower"],"max_tokens":6,"n":2}}`)
	form, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("pg-prompt-form").value`))
	if err != nil || form != "rows" {
		t.Fatalf("the editor shows the two prompts as %q (%v), want a prompt per row", form, err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#pg-run"))); err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	run, res := lastRun(t, s, s.userID(t, "ada"))
	var spec struct {
		Body struct {
			Prompt json.RawMessage `json:"prompt"`
		} `json:"body"`
	}
	if err := json.Unmarshal([]byte(run.Spec), &spec); err != nil {
		t.Fatalf("stored spec %s: %v", run.Spec, err)
	}
	if string(spec.Body.Prompt) != `["The lighthouse keeper","The old clock tower"]` {
		t.Errorf("the run's prompt is %s, want the array of the preset", spec.Body.Prompt)
	}
	if !strings.Contains(run.RawRequest, `"prompt":["The lighthouse keeper","The old clock tower"]`) {
		t.Errorf("the request sent was %s, want the prompt as an array", run.RawRequest)
	}
	if len(res.Choices) != 4 {
		t.Fatalf("the run has %d choices, want n=2 for each of 2 prompts", len(res.Choices))
	}
	labels, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#pg-choices .choice-index")).map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Prompt 1 · choice 0", "Prompt 1 · choice 1", "Prompt 2 · choice 0", "Prompt 2 · choice 1"}
	if strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Errorf("the choices are labelled %q, want %q", labels, want)
	}
}

// logprobView is what the playground's logprob view shows of a choice:
// its tokens' text, each token's probability (its title's first line) and
// the probability column of its table.
type logprobView struct {
	Text   string   `json:"text"`
	Titles []string `json:"titles"`
	Table  []string `json:"table"`
}

// Scoring a prompt: nothing generated, the prompt echoed with the
// probability of each of its tokens.
func TestBrowserScoringAPromptShowsItsTokensLogprobs(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	const prompt = "The old clock tower"
	err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`input[name="endpoint"][value="completion"]`)),
		chromedp.WaitVisible(chromedp.CSS("#pg-prompt")),
		chromedp.Poll[chromedp.Void](`!document.getElementById("playground").dataset.busy && document.querySelector('#pg-panel [data-param="echo"]') !== null`, chromedp.WithPollingInterval(20*time.Millisecond)),
		chromedp.SetValue(chromedp.CSS("#pg-prompt"), prompt),
		chromedp.SetValue(chromedp.CSS("#p-max_tokens"), "0"),
		chromedp.SetValue(chromedp.CSS("#p-echo"), "true"),
		chromedp.SetValue(chromedp.CSS("#p-logprobs"), "2"),
		chromedp.Click(chromedp.CSS("#pg-run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	run, _ := lastRun(t, s, s.userID(t, "ada"))
	if !strings.Contains(run.RawRequest, `"max_tokens":0`) {
		t.Fatalf("the request sent was %s, want max_tokens 0", run.RawRequest)
	}
	if run.Status != "done" {
		t.Fatalf("the run ended %q: %s", run.Status, run.Result)
	}
	err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.querySelector(".choice .logprob-table tbody tr") !== null`, chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		t.Fatalf("the output shows no logprob table: %v", err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[logprobView](`(() => {
		const toks = Array.from(document.querySelectorAll(".choice .content.logprobs .tok"));
		return {
			text: toks.map(s => s.textContent).join(""),
			titles: toks.map(s => s.title.split("\n")[0]),
			table: Array.from(document.querySelectorAll(".choice .logprob-table tbody tr")).map(tr => tr.cells[1].textContent),
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if shown.Text != prompt {
		t.Errorf("the logprob view shows %q, want the echoed prompt %q", shown.Text, prompt)
	}
	if len(shown.Titles) < 2 || shown.Titles[0] != "no logprob" {
		t.Fatalf("the tokens' probabilities are %q, want the first to say no logprob", shown.Titles)
	}
	for i, p := range shown.Titles[1:] {
		if !strings.HasSuffix(p, "%") {
			t.Errorf("token %d of the prompt shows %q, want its probability", i+1, p)
		}
	}
	if len(shown.Table) != len(shown.Titles) || shown.Table[0] != "no logprob" {
		t.Errorf("the logprob table shows %q, want a row per token, the first with no logprob", shown.Table)
	}
}

// completionMode switches the playground to completions and waits for
// the panel of that endpoint.
func completionMode(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
	return chromedp.Void{}, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`input[name="endpoint"][value="completion"]`)),
		chromedp.WaitVisible(chromedp.CSS("#pg-prompt")),
		chromedp.Poll[chromedp.Void](`!document.getElementById("playground").dataset.busy && document.querySelector('#pg-panel .panel').dataset.endpoint === "completion"`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
}

// The provider's labels of its answer and the raw token ids it returned
// are on the playground, not only on the run's page.
func TestBrowserPlaygroundShowsTheAnswersLabelsAndRawTokens(t *testing.T) {
	up := httptest.NewServer(llmtest.Handler(llmtest.ShapeCerebras))
	t.Cleanup(up.Close)
	s := newServer(t, withEnv("CEREBRAS_API_KEY", "csk-fixture-key-123456"), withEnv("CEREBRAS_BASE_URL", up.URL))
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("cerebras", llmtest.Model),
		chromedp.Action[chromedp.Void](completionMode),
		chromedp.SetValue(chromedp.CSS("#pg-prompt"), "1, 2, 3, 4, "),
		chromedp.Click(chromedp.CSS("#pg-run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	labels, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#pg-metrics .answer-labels")))
	if err != nil {
		t.Fatalf("no labels of the answer under the metrics: %v", err)
	}
	for _, want := range []string{"Model that answered", llmtest.Model, "Response id", llmtest.ID, "System fingerprint", llmtest.Fingerprint, "2024-07-16 00:11:59 UTC"} {
		if !strings.Contains(labels, want) {
			t.Errorf("the answer's labels %q lack %q", labels, want)
		}
	}
	// The raw request names what Knobs added to the body for streaming.
	added, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const p = document.querySelector("#pg-raw-request").previousElementSibling; return p && p.classList.contains("added") && !p.hidden ? p.textContent : ""; })()`))
	if err != nil || !strings.Contains(added, "Added by Knobs, not by you: stream, stream_options") {
		t.Errorf("the raw request's note says %q (%v), want the fields Knobs added", added, err)
	}
	// The tokens toggle is closed at first, and opens on the ids.
	tokens, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const d = document.querySelector(".choice details.raw-tokens");
		if (!d) return [];
		const closed = String(!d.open);
		d.querySelector("summary").click();
		return [d.querySelector("summary").textContent, closed, String(d.open), d.querySelector("pre").textContent];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(tokens, "|") != "tokens (2)|true|true|9906 505" {
		t.Errorf("the tokens toggle shows %q, want it closed, then the ids 9906 505", tokens)
	}
}

// A 404 from a provider without the endpoint says what to check.
func TestBrowserNoEndpointErrorSaysWhatToCheck(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(up.Close)
	s := newServer(t, withEnv("CEREBRAS_API_KEY", "csk-fixture-key-123456"), withEnv("CEREBRAS_BASE_URL", up.URL))
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("cerebras", "llama3.1-8b"),
		setMessage("hello"),
		chromedp.Click(chromedp.CSS("#pg-run")),
		chromedp.Poll[chromedp.Void](`!document.getElementById("pg-error").hidden && document.querySelector("#pg-error .advice").textContent !== ""`, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#pg-error")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.ToLower(shown), "no endpoint") || !strings.Contains(shown, "check its base URL") {
		t.Errorf("the playground's error says %q, want the no-endpoint kind and what to check", shown)
	}
}

// A reasoning model's completion tokens already include its reasoning:
// the playground's Tokens is the provider's figure, not that plus the
// reasoning again.
func TestBrowserReasoningRunTokensAreTheProvidersCompletionTokens(t *testing.T) {
	s := newServer(t)
	ctx := newBrowser(t)
	browserSignUp(t, ctx, s, "ada")
	err := chromedp.Do(ctx,
		choose("sim", "sim-reasoning"),
		setMessage("Why is the sky blue?"),
		chromedp.SetValue(chromedp.CSS("#p-max_completion_tokens"), "300"),
		chromedp.Click(chromedp.CSS("#pg-run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitRunDone(t, ctx)
	run, _ := lastRun(t, s, s.userID(t, "ada"))
	var res runner.Result
	if err := json.Unmarshal([]byte(run.Result), &res); err != nil {
		t.Fatal(err)
	}
	if res.Usage == nil || res.Usage.ReasoningTokens == 0 || res.Usage.CompletionTokens == 0 {
		t.Fatalf("the run's usage is %+v, want a reasoning run", res.Usage)
	}
	figures, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries(Array.from(document.querySelectorAll("#pg-metrics dl:first-child > div")).map(d => [d.querySelector("dt").textContent, d.querySelector("dd").textContent]))`))
	if err != nil {
		t.Fatal(err)
	}
	number := func(label string) int {
		n, err := strconv.Atoi(strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, figures[label]))
		if err != nil {
			t.Fatalf("the metrics show %s as %q: %v (all: %v)", label, figures[label], err, figures)
		}
		return n
	}
	if got := number("Tokens"); got != res.Usage.CompletionTokens {
		t.Errorf("Tokens shows %d, want the provider's completion tokens %d (reasoning %d counted once)", got, res.Usage.CompletionTokens, res.Usage.ReasoningTokens)
	}
	if got := number("Reasoning"); got != res.Usage.ReasoningTokens {
		t.Errorf("Reasoning shows %d, want %d", got, res.Usage.ReasoningTokens)
	}
}
