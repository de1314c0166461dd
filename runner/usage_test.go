package runner_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"knobs/db"
	"knobs/db/dbtest"
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

// A priced run cut by a crash is counted at its price when Knobs comes
// back, from what its checkpoints stored: its prompt as sent, a token per
// output frame, reasoning apart, on the day it last streamed.
func TestARunCutByARestartIsCountedAtItsPrice(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "knobs.db")
	dbtest.Fresh(t, path)
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	u, err := store.CreateUser(ctx, db.SignUp{Username: "ada", PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	r := runner.New(store, slog.New(slog.NewTextHandler(io.Discard, nil)), runner.Options{Checkpoint: 20 * time.Millisecond})
	defer func() {
		// The first runner still holds its (now closed) store; stop it.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r.Shutdown(ctx)
	}()
	slots, err := r.Reserve(u.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	row := db.Run{ID: store.NextRunID(), UserID: u.ID, Provider: "sim", Endpoint: "chat", Model: "sim-reasoning", Spec: `{"provider":"sim","endpoint":"chat","body":{}}`, CreatedAt: created}
	run, err := slots.Create(row, thinkingUpstream(t), chatSpec(thinkingBody), thinkingModel)
	slots.Release()
	if err != nil {
		t.Fatal(err)
	}
	leave := run.Subscribe()
	defer leave()
	waitFrame(t, run, "delta")
	// Wait for a checkpoint with every frame, then "crash": the process
	// goes away without the runner storing anything more.
	for i := 0; ; i++ {
		events, _ := store.RunEvents(ctx, u.ID, row.ID)
		if strings.Contains(string(events), "Because") {
			break
		}
		if i > 500 {
			t.Fatal("no checkpoint within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	store.Close()

	store2, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer store2.Close()
	if n, err := store2.InterruptRuns(ctx, runner.ResultFromFrames); err != nil || n != 1 {
		t.Fatalf("InterruptRuns = %d, %v; want 1", n, err)
	}
	got, err := store2.Run(ctx, u.ID, row.ID)
	if err != nil {
		t.Fatal(err)
	}
	var res runner.Result
	if err := json.Unmarshal([]byte(got.Result), &res); err != nil {
		t.Fatal(err)
	}
	if got.Status != db.RunInterrupted || res.Choices[0].Content != "Because" {
		t.Fatalf("after the restart: %s %s", got.Status, got.Result)
	}
	wantThinkingUsage(t, res)
	if res.Price == nil || res.Price.Reasoning != 5 {
		t.Errorf("the result keeps the price %+v, want the one the run started with", res.Price)
	}
	rep, err := store2.Usage(ctx, db.UsageQuery{From: created.AddDate(0, 0, -1), To: time.Now(), GroupBy: db.UsageByDay})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 || rep.Rows[0].Key != "2026-06-01" || rep.Total.Calls != 1 || rep.Total.UnpricedCalls != 0 ||
		rep.Total.ReasoningTokens != 3 || math.Abs(rep.Total.CostUSD-res.Metrics.CostUSD) > 1e-12 || rep.Total.CostUSD <= 0 {
		t.Errorf("usage after the restart: %+v, want one priced call of $%g on 2026-06-01", rep, res.Metrics.CostUSD)
	}
}

// A run of a hosted model (one the simulator does not serve) stopped
// before the provider's usage still counts its prompt: the provider
// bills it whatever model it is.
func TestAStoppedHostedRunCountsItsPrompt(t *testing.T) {
	const body = `{"model":"llama3.1-8b","messages":[{"role":"user","content":"Why are there two tides a day? Explain the moon's pull and the sun's."}]}`
	if _, ok := sim.PromptTokens(llm.EndpointChat, []byte(body)); ok {
		t.Fatal("the simulator reads this body: the test needs one it does not")
	}
	f := newFixture(t, runner.Options{})
	id, err := f.store.CreateRun(t.Context(), db.Run{UserID: f.user, Provider: "sim", Endpoint: "chat", Model: "llama3.1-8b", Spec: "{}", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	run, err := f.r.Start(id, f.user, thinkingUpstream(t), chatSpec(body), llm.Model{ID: "llama3.1-8b", PromptPrice: 1, CompletionPrice: 2})
	if err != nil {
		t.Fatal(err)
	}
	leave := run.Subscribe()
	defer leave()
	waitFrame(t, run, "delta")
	if !f.r.Cancel(run.ID, f.user) {
		t.Fatal("Cancel found no live run")
	}
	_, res := f.waitStored(t, run.ID)
	want := sim.EstimatePromptTokens(llm.EndpointChat, []byte(body))
	if u := res.Usage; u == nil || !u.Estimated || u.PromptTokens != want || want < 10 {
		t.Fatalf("usage %+v, want an estimate with the prompt's %d tokens", u, want)
	}
}
