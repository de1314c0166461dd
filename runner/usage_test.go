package runner_test

import (
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"knobs/db"
	"knobs/llm"
	"knobs/llm/sim"
	"knobs/runner"
)

// thinkingUpstream streams three reasoning chunks and one of content,
// then waits until its request ends, without a usage.
func thinkingUpstream(t *testing.T) *llm.Client {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, delta := range []string{`{"reasoning":"Tides"}`, `{"reasoning":" follow"}`, `{"reasoning":" the moon"}`, `{"content":"Because"}`} {
			w.Write([]byte(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `}]}` + "\n\n"))
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(up.Close)
	return llm.NewClient(llm.ProviderConfig{ID: "sim", Dialect: llm.DialectSim, BaseURL: up.URL})
}

// thinkingModel prices reasoning apart from the rest of the output.
var thinkingModel = llm.Model{ID: "sim-reasoning", PromptPrice: 1, CompletionPrice: 2, ReasoningPrice: 5}

const thinkingBody = `{"model":"sim-reasoning","messages":[{"role":"user","content":"Why are there two tides a day?"}]}`

// wantThinkingUsage checks the estimate of a thinkingUpstream run that
// was stopped before the provider's usage: four output tokens, three of
// them reasoning, priced as reasoning.
func wantThinkingUsage(t *testing.T, res runner.Result) {
	t.Helper()
	prompt, ok := sim.PromptTokens(llm.EndpointChat, []byte(thinkingBody))
	if !ok || prompt == 0 {
		t.Fatalf("the prompt's estimate: %d, %v", prompt, ok)
	}
	u := res.Usage
	if u == nil || !u.Estimated || u.PromptTokens != prompt || u.CompletionTokens != 4 || u.ReasoningTokens != 3 || u.OutputTokens() != 4 {
		t.Fatalf("usage %+v, want an estimate of %d prompt tokens and 4 output tokens, 3 of them reasoning", u, prompt)
	}
	want := (float64(prompt)*1 + 1*2 + 3*5) / 1e6
	if math.Abs(res.Metrics.CostUSD-want) > 1e-12 {
		t.Errorf("cost $%g, want $%g (reasoning at its own price)", res.Metrics.CostUSD, want)
	}
}

// A reasoning run stopped before the provider's usage shows its
// reasoning tokens, and they are priced as reasoning.
func TestAStoppedRunCountsItsReasoningApart(t *testing.T) {
	f := newFixture(t, runner.Options{})
	id, err := f.store.CreateRun(t.Context(), db.Run{UserID: f.user, Provider: "sim", Endpoint: "chat", Model: "sim-reasoning", Spec: "{}", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	run, err := f.r.Start(id, f.user, thinkingUpstream(t), chatSpec(thinkingBody), thinkingModel)
	if err != nil {
		t.Fatal(err)
	}
	leave := run.Subscribe()
	defer leave()
	waitFrame(t, run, "delta")
	if !f.r.Cancel(run.ID, f.user) {
		t.Fatal("Cancel found no live run")
	}
	r, res := f.waitStored(t, run.ID)
	if r.Status != db.RunCancelled {
		t.Fatalf("status %s, want cancelled", r.Status)
	}
	wantThinkingUsage(t, res)
}
