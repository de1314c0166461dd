package db_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"knobs/db"
)

// historyUser creates an account; sign-up is opened on first use.
func historyUser(t *testing.T, s *db.Store, name string) int64 {
	t.Helper()
	ctx := context.Background()
	must(t, s.SetSetting(ctx, db.SettingSignUpMode, "open"))
	u, err := s.CreateUser(ctx, db.SignUp{Username: name, PasswordHash: "x", Open: true})
	must(t, err)
	return u.ID
}

// testRun describes a run to store; zero fields get defaults.
type testRun struct {
	provider, model, status string
	system, prompt          string // chat: system and user messages
	completion              string // completion endpoint prompt instead
	output, reasoning, tool string
	tokens                  int
	at                      time.Time
	preset                  int64
	events                  string
}

func chatSpec(provider, model, system, user string) string {
	var msgs []map[string]any
	if system != "" {
		msgs = append(msgs, map[string]any{"role": "system", "content": system})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": user})
	b, _ := json.Marshal(map[string]any{"provider": provider, "endpoint": "chat", "body": map[string]any{"model": model, "messages": msgs, "temperature": 0.7}})
	return string(b)
}

func resultJSON(output, reasoning, tool string, tokens int) string {
	choice := map[string]any{"index": 0, "content": output, "finish_reason": "stop"}
	if reasoning != "" {
		choice["reasoning"] = reasoning
	}
	if tool != "" {
		choice["tool_calls"] = []map[string]any{{"index": 0, "id": "call_1", "type": "function", "name": tool, "arguments": `{"city":"Paris"}`}}
	}
	b, _ := json.Marshal(map[string]any{
		"choices": []any{choice},
		"usage":   map[string]any{"prompt_tokens": 12, "completion_tokens": tokens, "total_tokens": 12 + tokens},
		"metrics": map[string]any{"ttft_ms": 120.5, "total_ms": 900.0, "tokens": tokens, "tokens_per_sec": 55.5, "cost_usd": 0.0012},
	})
	return string(b)
}

// storeRun creates and finishes a run through the store, as the runner does.
func storeRun(t *testing.T, s *db.Store, user int64, r testRun) int64 {
	t.Helper()
	ctx := context.Background()
	if r.provider == "" {
		r.provider = "sim"
	}
	if r.model == "" {
		r.model = "sim-small"
	}
	if r.status == "" {
		r.status = db.RunDone
	}
	if r.at.IsZero() {
		r.at = time.Now()
	}
	if r.tokens == 0 {
		r.tokens = 42
	}
	spec, endpoint := chatSpec(r.provider, r.model, r.system, r.prompt), "chat"
	if r.completion != "" {
		b, _ := json.Marshal(map[string]any{"provider": r.provider, "endpoint": "completion", "body": map[string]any{"model": r.model, "prompt": r.completion}})
		spec, endpoint = string(b), "completion"
	}
	id, err := s.CreateRun(ctx, db.Run{UserID: user, Provider: r.provider, Endpoint: endpoint, Model: r.model, Spec: spec, CreatedAt: r.at, PresetID: r.preset})
	must(t, err)
	if r.status == db.RunRunning {
		return id
	}
	if r.events == "" {
		r.events = fmt.Sprintf("id: 1\nevent: delta\ndata: {\"text\":%q}\n\n", r.output)
	}
	must(t, s.FinishRun(ctx, id, r.status, `{"url":"https://example.test/v1/chat/completions"}`, resultJSON(r.output, r.reasoning, r.tool, r.tokens), []byte(r.events), r.at.Add(time.Second)))
	return id
}

func ids(runs []db.RunSummary) []int64 {
	out := make([]int64, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}

func listIDs(t *testing.T, s *db.Store, f db.RunFilter) []int64 {
	t.Helper()
	runs, _, err := s.Runs(context.Background(), f)
	if err != nil {
		t.Fatalf("Runs(%+v): %v", f, err)
	}
	return ids(runs)
}

// text joins segments, with matches in brackets.
func text(seg []db.Segment) string {
	var b strings.Builder
	for _, s := range seg {
		if s.Match {
			b.WriteString("[" + s.Text + "]")
		} else {
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

func TestRunsOwnerScoping(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	alice, bob := historyUser(t, s, "alice"), historyUser(t, s, "bob")
	a := storeRun(t, s, alice, testRun{provider: "cerebras", model: "llama", prompt: "secret plans of alice", output: "alice output"})
	b := storeRun(t, s, bob, testRun{provider: "xai", model: "grok", prompt: "bob's question", output: "bob output"})
	share, err := s.CreateShare(ctx, alice, db.ShareRun, a, db.SharePublic)
	must(t, err)

	if got := listIDs(t, s, db.RunFilter{UserID: bob}); !slices.Equal(got, []int64{b}) {
		t.Errorf("bob's list = %v, want only %d", got, b)
	}
	if got := listIDs(t, s, db.RunFilter{UserID: bob, Query: "alice"}); len(got) != 0 {
		t.Errorf("bob's search for alice's words = %v, want none", got)
	}
	providers, models, err := s.RunFacets(ctx, bob)
	must(t, err)
	if !slices.Equal(providers, []string{"xai"}) || !slices.Equal(models, []string{"grok"}) {
		t.Errorf("bob's facets = %v %v, want [xai] [grok]", providers, models)
	}

	notFound := map[string]error{
		"Run":           func() error { _, err := s.Run(ctx, bob, a); return err }(),
		"RunEvents":     func() error { _, err := s.RunEvents(ctx, bob, a); return err }(),
		"SetRunStarred": s.SetRunStarred(ctx, bob, a, true),
		"SetRunNote":    s.SetRunNote(ctx, bob, a, "mine now"),
		"RemoveRun":     s.RemoveRun(ctx, bob, a),
		"CreateShare":   func() error { _, err := s.CreateShare(ctx, bob, db.ShareRun, a, db.ShareTeam); return err }(),
		"RevokeShare":   s.RevokeShare(ctx, bob, share.ID),
	}
	for name, err := range notFound {
		if !errors.Is(err, db.ErrNotFound) {
			t.Errorf("%s on another user's run: %v, want ErrNotFound", name, err)
		}
	}
	if sh, err := s.Shares(ctx, bob, db.ShareRun, a); err != nil || len(sh) != 0 {
		t.Errorf("bob sees shares of alice's run: %v %v", sh, err)
	}
	var exported []int64
	must(t, s.ExportRuns(ctx, bob, []int64{a, b}, func(r db.Run) error { exported = append(exported, r.ID); return nil }))
	if !slices.Equal(exported, []int64{b}) {
		t.Errorf("bob exported %v, want only %d", exported, b)
	}

	// Nothing bob tried changed alice's run.
	r, err := s.Run(ctx, alice, a)
	must(t, err)
	if r.Starred || r.Note != "" {
		t.Errorf("alice's run changed by bob: starred %v note %q", r.Starred, r.Note)
	}
	if _, _, err := s.SharedRun(ctx, share.Token); err != nil {
		t.Errorf("alice's share stopped working after bob's revoke attempt: %v", err)
	}
}

func TestRunsFilters(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	u := historyUser(t, s, "alice")
	day := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	r1 := storeRun(t, s, u, testRun{provider: "cerebras", model: "llama-3.3-70b", status: db.RunDone, at: day, prompt: "one"})
	r2 := storeRun(t, s, u, testRun{provider: "cerebras", model: "qwen-3-32b", status: db.RunError, at: day.Add(24 * time.Hour), prompt: "two", preset: 7})
	r3 := storeRun(t, s, u, testRun{provider: "xai", model: "grok-4", status: db.RunDone, at: day.Add(48 * time.Hour), prompt: "three", preset: 7})
	r4 := storeRun(t, s, u, testRun{provider: "xai", model: "grok-4", status: db.RunCancelled, at: day.Add(72 * time.Hour), prompt: "four", preset: 9})
	r5 := storeRun(t, s, u, testRun{provider: "sim", model: "sim-small", status: db.RunRunning, at: day.Add(96 * time.Hour), prompt: "five"})
	must(t, s.SetRunStarred(ctx, u, r2, true))
	must(t, s.SetRunStarred(ctx, u, r4, true))
	must(t, s.SetRunStarred(ctx, u, r4, false))
	must(t, s.SetRunStarred(ctx, u, r3, true))

	tests := []struct {
		name string
		f    db.RunFilter
		want []int64
	}{
		{"all", db.RunFilter{}, []int64{r5, r4, r3, r2, r1}},
		{"provider", db.RunFilter{Provider: "cerebras"}, []int64{r2, r1}},
		{"model", db.RunFilter{Model: "grok-4"}, []int64{r4, r3}},
		{"status", db.RunFilter{Status: db.RunDone}, []int64{r3, r1}},
		{"running", db.RunFilter{Status: db.RunRunning}, []int64{r5}},
		{"preset", db.RunFilter{PresetID: 7}, []int64{r3, r2}},
		{"from inclusive", db.RunFilter{From: day.Add(48 * time.Hour)}, []int64{r5, r4, r3}},
		{"to exclusive", db.RunFilter{To: day.Add(48 * time.Hour)}, []int64{r2, r1}},
		{"one day", db.RunFilter{From: day.Add(24 * time.Hour), To: day.Add(48 * time.Hour)}, []int64{r2}},
		{"starred", db.RunFilter{Starred: true}, []int64{r3, r2}},
		{"combined", db.RunFilter{Provider: "xai", Status: db.RunDone, Starred: true, PresetID: 7}, []int64{r3}},
		{"nothing", db.RunFilter{Provider: "xai", Model: "llama-3.3-70b"}, []int64{}},
		{"unknown provider", db.RunFilter{Provider: "x' OR 1=1 --"}, []int64{}},
		{"limit", db.RunFilter{Limit: 2}, []int64{r5, r4}},
		{"before", db.RunFilter{Before: r3}, []int64{r2, r1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.f.UserID = u
			if got := listIDs(t, s, tt.f); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}

	runs, _, err := s.Runs(ctx, db.RunFilter{UserID: u, Starred: true})
	must(t, err)
	for _, r := range runs {
		if !r.Starred {
			t.Errorf("run %d listed as starred but Starred is false", r.ID)
		}
	}
	providers, models, err := s.RunFacets(ctx, u)
	must(t, err)
	if !slices.Equal(providers, []string{"cerebras", "sim", "xai"}) {
		t.Errorf("providers = %v", providers)
	}
	if !slices.Equal(models, []string{"grok-4", "llama-3.3-70b", "qwen-3-32b", "sim-small"}) {
		t.Errorf("models = %v", models)
	}
}

func TestRunSummaryColumns(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	u := historyUser(t, s, "alice")
	chat := storeRun(t, s, u, testRun{system: "You are terse.", prompt: "\n\n  Summarise this:  \nsecond line", output: "A summary.\nMore.", tokens: 7})
	completion := storeRun(t, s, u, testRun{completion: "Once upon a time\nthere was", output: " a fox."})
	reasoning := storeRun(t, s, u, testRun{prompt: "think", output: "  \n", reasoning: "Let me think.\nStep 2"})
	tool := storeRun(t, s, u, testRun{prompt: "weather?", tool: "get_weather"})
	long := storeRun(t, s, u, testRun{prompt: strings.Repeat("word ", 100), output: "ok"})
	must(t, s.SetRunNote(ctx, u, chat, "a good one"))

	runs, _, err := s.Runs(ctx, db.RunFilter{UserID: u})
	must(t, err)
	byID := map[int64]db.RunSummary{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	tests := []struct {
		id             int64
		prompt, output string
	}{
		{chat, "Summarise this:", "A summary."},
		{completion, "Once upon a time", "a fox."},
		{reasoning, "think", "Let me think."},
		{tool, "weather?", "get_weather"},
	}
	for _, tt := range tests {
		r := byID[tt.id]
		if text(r.Prompt) != tt.prompt || text(r.Output) != tt.output {
			t.Errorf("run %d: prompt %q output %q, want %q %q", tt.id, text(r.Prompt), text(r.Output), tt.prompt, tt.output)
		}
	}
	if p := text(byID[long].Prompt); len([]rune(p)) > 201 || len([]rune(p)) < 190 || !strings.HasSuffix(p, "…") {
		t.Errorf("a long first line is %d runes %q, want about 200 and an ellipsis", len([]rune(p)), p)
	}
	r := byID[chat]
	if r.Tokens != 7 || r.TTFTMs != 120.5 || r.TokensPerSec != 55.5 || r.CostUSD != 0.0012 || r.Note != "a good one" ||
		r.Provider != "sim" || r.Model != "sim-small" || r.Endpoint != "chat" || r.Status != db.RunDone || r.CreatedAt.IsZero() {
		t.Errorf("summary of run %d: %+v", chat, r)
	}
	if byID[completion].Endpoint != "completion" {
		t.Errorf("completion run's endpoint %q", byID[completion].Endpoint)
	}
}

// A run is found by its prompt while it runs, and by its output once it
// ends: checkpoints append its stream only, and the one final write
// indexes what it said.
func TestFinishIndexesOutput(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	u := historyUser(t, s, "alice")
	id := storeRun(t, s, u, testRun{status: db.RunRunning, prompt: "tell me about otters"})
	if got := listIDs(t, s, db.RunFilter{UserID: u, Query: "otters"}); !slices.Equal(got, []int64{id}) {
		t.Errorf("a running run is not found by its prompt: %v", got)
	}
	must(t, s.WriteRuns(ctx, []db.RunWrite{{RunID: id, Chunk: &db.RunChunk{First: 1, Frames: []byte("id: 1\nevent: delta\ndata: {\"choice\":0,\"text\":\"Sea\"}\n\n")}}}))
	if got := listIDs(t, s, db.RunFilter{UserID: u, Query: "sea"}); len(got) != 0 {
		t.Errorf("a checkpoint indexed output: %v", got)
	}
	must(t, s.FinishRun(ctx, id, db.RunDone, "{}", resultJSON("Sea otters float on their backs", "", "", 9), nil, time.Now()))
	runs, _, err := s.Runs(ctx, db.RunFilter{UserID: u, Query: "backs"})
	must(t, err)
	if len(runs) != 1 || text(runs[0].Output) != "Sea otters float on their [backs]" || runs[0].Tokens != 9 {
		t.Fatalf("after the finish: %+v", runs)
	}
}

func TestFTSQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"hello world", `"hello" AND "world"`},
		{"hel*", `"hel"*`},
		{`say "hi"`, `"say" AND """hi"""`},
		{`"`, ``},
		{`* - : ( ) "" **`, ``},
		{"NEAR(a b)", `"NEAR(a" AND "b)"`},
		{"a OR b", `"a" AND "OR" AND "b"`},
		{"col:term -x ^y", `"col:term" AND "-x" AND "^y"`},
		{"dup dup", `"dup"`},
	}
	for _, tt := range tests {
		if got := db.FTSQuery(tt.in); got != tt.want {
			t.Errorf("FTSQuery(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRunsSearch(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	u := historyUser(t, s, "alice")
	quotes := storeRun(t, s, u, testRun{prompt: `She said "hello there" to the crowd`, output: "A greeting."})
	star := storeRun(t, s, u, testRun{prompt: "compute 2*3 please", output: "2*3 = 6"})
	dash := storeRun(t, s, u, testRun{prompt: "the state-of-the-art model", output: "GPT-like"})
	colon := storeRun(t, s, u, testRun{prompt: "title: Dune", output: "author: Herbert"})
	parens := storeRun(t, s, u, testRun{prompt: "call f(x) now", output: "f(x) = x^2"})
	near := storeRun(t, s, u, testRun{prompt: "NEAR the river AND OR NOT", output: "banks"})
	system := storeRun(t, s, u, testRun{system: "You are a pirate captain.", prompt: "Greet me", output: "Ahoy, matey!"})
	reasoning := storeRun(t, s, u, testRun{prompt: "Which is bigger?", output: "Nine.", reasoning: "Compare nine and seven carefully."})
	accent := storeRun(t, s, u, testRun{prompt: "un café crème", output: "voilà"})
	completion := storeRun(t, s, u, testRun{completion: "The quick brown fox", output: "jumps over the lazy dog"})

	tests := []struct {
		q    string
		want []int64
	}{
		{"hello", []int64{quotes}},
		{`"hello there"`, []int64{quotes}},
		{`"hello`, []int64{quotes}},
		{`hello"`, []int64{quotes}},
		{`"`, nil},
		{`""`, nil},
		{`"""`, nil},
		{"*", nil},
		{"2*3", []int64{star}},
		{"2*", []int64{parens, star}}, // x^2 has the token 2 too
		{"state-of-the-art", []int64{dash}},
		{"-art", []int64{dash}},
		{"state -art", []int64{dash}},
		{"title:", []int64{colon}},
		{"title:dune", []int64{colon}},
		{"author:", []int64{colon}},
		{"f(x)", []int64{parens}},
		{"(x", []int64{parens}},
		{"x)", []int64{parens}},
		{"NEAR", []int64{near}},
		{"NEAR(the", []int64{near}},
		{"river AND", []int64{near}},
		{"OR", []int64{near}},
		{"NOT", []int64{near}},
		{"AND OR NOT", []int64{near}},
		{"pirate", []int64{system}},
		{"pira*", []int64{system}},
		{"seven", []int64{reasoning}},
		{"cafe", []int64{accent}},
		{"CAFÉ", []int64{accent}},
		{"quick lazy", []int64{completion}},
		{"quick cat", nil},
		{"nine OR banks", nil},
		{"^hello", []int64{quotes}},
		{"hello \x00\x02 world\x03", nil},
		{strings.Repeat("zz ", 100) + "hello", nil},
		{"w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 hello", nil},
		{"the", []int64{completion, near, dash, quotes}},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			runs, next, err := s.Runs(ctx, db.RunFilter{UserID: u, Query: tt.q})
			if err != nil {
				t.Fatalf("search %q: %v", tt.q, err)
			}
			if got := ids(runs); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("search %q = %v, want %v", tt.q, got, tt.want)
			}
			if next != 0 {
				t.Errorf("search %q: next = %d on the only page", tt.q, next)
			}
		})
	}
	// Filters apply to search results too.
	if got := listIDs(t, s, db.RunFilter{UserID: u, Query: "the", Status: db.RunDone, Before: near}); !slices.Equal(got, []int64{dash, quotes}) {
		t.Errorf("search with paging = %v", got)
	}
}

func TestRunsSearchSegments(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	u := historyUser(t, s, "alice")
	long := strings.Repeat("filler ", 60)
	inLine := storeRun(t, s, u, testRun{prompt: "Translate the word otter\ninto French", output: "loutre\nis the word"})
	further := storeRun(t, s, u, testRun{system: "Always mention the otter.", prompt: "Write a poem", output: "Roses are red\n" + long + "otters are brown " + long})
	outputOnly := storeRun(t, s, u, testRun{prompt: "Name an animal", output: "The otter, clearly."})
	inLongLine := storeRun(t, s, u, testRun{prompt: long + "otter " + long, output: "ok"})

	runs, _, err := s.Runs(ctx, db.RunFilter{UserID: u, Query: "otter*"})
	must(t, err)
	got := map[int64][2]string{}
	for _, r := range runs {
		got[r.ID] = [2]string{text(r.Prompt), text(r.Output)}
	}
	if g := got[inLine]; g != [2]string{"Translate the word [otter]", "loutre"} {
		t.Errorf("a match in the first line: %q", g)
	}
	if g := got[further]; !strings.Contains(g[0], "[otter]") || !strings.Contains(g[1], "[otters]") || !strings.HasPrefix(g[1], "…") || strings.Contains(g[1], "\n") {
		t.Errorf("a match further in, around the match: %q", g)
	}
	if g := got[outputOnly]; g != [2]string{"Name an animal", "The [otter], clearly."} {
		t.Errorf("a match in the output only: %q", g)
	}
	if g := got[inLongLine]; !strings.Contains(g[0], "[otter]") || !strings.HasPrefix(g[0], "…") {
		t.Errorf("a match far into a long line: %q", g)
	}
	for _, r := range runs {
		for _, seg := range slices.Concat(r.Prompt, r.Output) {
			if strings.ContainsAny(seg.Text, "\x02\x03<>") {
				t.Errorf("a marker or markup leaked into %q", seg.Text)
			}
		}
	}
	// Without a search nothing is marked.
	plain, _, err := s.Runs(ctx, db.RunFilter{UserID: u})
	must(t, err)
	for _, r := range plain {
		for _, seg := range slices.Concat(r.Prompt, r.Output) {
			if seg.Match {
				t.Errorf("run %d has a marked segment without a search", r.ID)
			}
		}
	}
}

func TestRunsPagingWhileAdding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openStore(t)
	u := historyUser(t, s, "alice")
	other := historyUser(t, s, "bob")
	var want []int64
	for i := range 23 {
		want = append(want, storeRun(t, s, u, testRun{prompt: fmt.Sprintf("paging prompt %d", i), output: "page"}))
		storeRun(t, s, other, testRun{prompt: "paging other"})
	}
	slices.Reverse(want)

	for _, f := range []db.RunFilter{
		{UserID: u, Limit: 5},
		{UserID: u, Limit: 5, Query: "paging"},
		{UserID: u, Limit: 5, Status: db.RunDone},
	} {
		var seen []int64
		added := 0
		for page := 0; ; page++ {
			runs, next, err := s.Runs(ctx, f)
			must(t, err)
			seen = append(seen, ids(runs)...)
			// New runs arrive between pages.
			storeRun(t, s, u, testRun{prompt: "paging newcomer", output: "page"})
			added++
			if next == 0 {
				break
			}
			if page > 10 {
				t.Fatal("paging does not end")
			}
			f.Before = next
		}
		if !slices.Equal(seen, want) {
			t.Errorf("filter %+v: paged %v, want %v", f, seen, want)
		}
		// The newcomers are on a fresh first page.
		f.Before = 0
		f.Limit = added
		runs, _, err := s.Runs(ctx, f)
		must(t, err)
		for _, r := range runs {
			if slices.Contains(want, r.ID) {
				t.Errorf("filter %+v: the first page of %d has old run %d", f, added, r.ID)
			}
		}
		want = append(slices.Clone(ids(runs)), want...)
	}

	// Limit defaults and caps.
	for i := 0; i < 210-len(want); i++ {
		storeRun(t, s, u, testRun{prompt: "more"})
	}
	for _, tt := range []struct{ limit, want int }{{0, 50}, {-1, 50}, {500, 200}, {200, 200}} {
		runs, next, err := s.Runs(ctx, db.RunFilter{UserID: u, Limit: tt.limit})
		must(t, err)
		if len(runs) != tt.want || next != runs[len(runs)-1].ID {
			t.Errorf("Limit %d: %d runs, next %d", tt.limit, len(runs), next)
		}
	}
}

func TestRemoveRun(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	u := historyUser(t, s, "alice")
	keep := storeRun(t, s, u, testRun{prompt: "unicorn stays", output: "kept"})
	gone := storeRun(t, s, u, testRun{prompt: "unicorn goes", output: "removed"})
	share, err := s.CreateShare(ctx, u, db.ShareRun, gone, db.SharePublic)
	must(t, err)
	if _, _, err := s.SharedRun(ctx, share.Token); err != nil {
		t.Fatal(err)
	}

	must(t, s.RemoveRun(ctx, u, gone))
	if got := listIDs(t, s, db.RunFilter{UserID: u}); !slices.Equal(got, []int64{keep}) {
		t.Errorf("list after removal: %v", got)
	}
	if got := listIDs(t, s, db.RunFilter{UserID: u, Query: "unicorn"}); !slices.Equal(got, []int64{keep}) {
		t.Errorf("search after removal: %v", got)
	}
	if got := listIDs(t, s, db.RunFilter{UserID: u, Query: "removed"}); len(got) != 0 {
		t.Errorf("the removed run's output is still found: %v", got)
	}
	if _, _, err := s.SharedRun(ctx, share.Token); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("share of a removed run: %v, want ErrNotFound", err)
	}
	if sh, err := s.Shares(ctx, u, db.ShareRun, gone); err != nil || len(sh) != 0 {
		t.Errorf("shares of a removed run: %v %v", sh, err)
	}
	if err := s.RemoveRun(ctx, u, gone); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("removing twice: %v, want ErrNotFound", err)
	}
	if _, err := s.Run(ctx, u, gone); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("loading a removed run: %v", err)
	}
}

// exported is the JSON Lines record the export test writes and reads back.
type exported struct {
	ID        int64           `json:"id"`
	CreatedAt time.Time       `json:"created_at"`
	Provider  string          `json:"provider"`
	Model     string          `json:"model"`
	Status    string          `json:"status"`
	Spec      json.RawMessage `json:"spec"`
	Request   json.RawMessage `json:"request"`
	Result    json.RawMessage `json:"result"`
	Events    string          `json:"events"`
	Note      string          `json:"note"`
}

func TestExportRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openStore(t)
	u, other := historyUser(t, s, "alice"), historyUser(t, s, "bob")
	var want []int64
	for i := range 120 { // more than one batch
		want = append(want, storeRun(t, s, u, testRun{
			prompt: fmt.Sprintf("export %d", i), output: fmt.Sprintf("answer %d ünïcødé \"quoted\"", i), reasoning: "why",
			events: fmt.Sprintf("id: %d\nevent: delta\ndata: {\"text\":\"answer\"}\n\nevent: done\ndata: {}\n\n", i),
		}))
		if i%40 == 0 {
			storeRun(t, s, other, testRun{prompt: "not alice's"})
		}
	}
	must(t, s.SetRunNote(ctx, u, want[3], "note\nwith lines"))

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	must(t, s.ExportRuns(ctx, u, nil, func(r db.Run) error {
		return enc.Encode(exported{ID: r.ID, CreatedAt: r.CreatedAt, Provider: r.Provider, Model: r.Model, Status: r.Status,
			Spec: json.RawMessage(r.Spec), Request: json.RawMessage(r.RawRequest), Result: json.RawMessage(r.Result), Events: string(r.Events), Note: r.Note})
	}))

	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	var got []int64
	for sc.Scan() {
		var e exported
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d does not read back: %v", len(got)+1, err)
		}
		got = append(got, e.ID)
		stored, err := s.Run(ctx, u, e.ID)
		must(t, err)
		var spec, result map[string]any
		must(t, json.Unmarshal(e.Spec, &spec))
		must(t, json.Unmarshal(e.Result, &result))
		if string(e.Spec) != stored.Spec || string(e.Result) != stored.Result || string(e.Request) != stored.RawRequest ||
			e.Events != "" || e.Note != stored.Note ||
			!e.CreatedAt.Equal(stored.CreatedAt) || e.Status != stored.Status || e.Model != stored.Model {
			t.Errorf("run %d does not round-trip: %+v", e.ID, e)
		}
		if c := result["choices"].([]any)[0].(map[string]any); !strings.Contains(c["content"].(string), `ünïcødé "quoted"`) || c["reasoning"] != "why" {
			t.Errorf("run %d result choice: %v", e.ID, c)
		}
	}
	must(t, sc.Err())
	if !slices.Equal(got, want) {
		t.Errorf("exported %d runs %v..., want %d oldest first", len(got), got[:min(5, len(got))], len(want))
	}

	// Selected runs, in any order and with duplicates, come oldest first.
	var sel []int64
	must(t, s.ExportRuns(ctx, u, []int64{want[100], want[2], want[2], want[60]}, func(r db.Run) error {
		// An export has no place for stored events: they are not read.
		if len(r.Events) != 0 {
			t.Errorf("run %d was read with its events", r.ID)
		}
		sel = append(sel, r.ID)
		return nil
	}))
	if !slices.Equal(sel, []int64{want[2], want[60], want[100]}) {
		t.Errorf("selected export = %v", sel)
	}
	if err := s.ExportRuns(ctx, u, []int64{}, func(db.Run) error { t.Error("an empty selection exported a run"); return nil }); err != nil {
		t.Error(err)
	}
	// The writer is not held while the reader consumes the export.
	stop := errors.New("stop")
	n := 0
	err := s.ExportRuns(ctx, u, nil, func(r db.Run) error {
		if n++; n == 10 {
			return stop
		}
		must(t, s.SetRunNote(ctx, u, r.ID, "written during the export"))
		return nil
	})
	if !errors.Is(err, stop) || n != 10 {
		t.Errorf("an error from fn: %v after %d runs", err, n)
	}
}

func TestPurgeRuns(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	u, other := historyUser(t, s, "alice"), historyUser(t, s, "bob")
	now := time.Now()
	old1 := storeRun(t, s, u, testRun{prompt: "ancient walrus", at: now.AddDate(0, 0, -40)})
	old2 := storeRun(t, s, other, testRun{prompt: "ancient walrus", at: now.AddDate(0, 0, -31)})
	stuck := storeRun(t, s, u, testRun{prompt: "ancient walrus", status: db.RunRunning, at: now.AddDate(0, 0, -35)})
	recent := storeRun(t, s, u, testRun{prompt: "recent walrus", at: now.AddDate(0, 0, -29)})
	share, err := s.CreateShare(ctx, u, db.ShareRun, old1, db.ShareTeam)
	must(t, err)

	n, err := s.PurgeRuns(ctx, now.AddDate(0, 0, -30))
	must(t, err)
	if n != 2 {
		t.Errorf("purged %d runs, want 2", n)
	}
	if got := listIDs(t, s, db.RunFilter{UserID: u, Query: "walrus"}); !slices.Equal(got, []int64{recent, stuck}) {
		t.Errorf("alice's walruses after the purge: %v", got)
	}
	if got := listIDs(t, s, db.RunFilter{UserID: other}); len(got) != 0 {
		t.Errorf("bob's old run %d survived: %v", old2, got)
	}
	if _, _, err := s.SharedRun(ctx, share.Token); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("share of a purged run: %v", err)
	}
	if n, err := s.PurgeRuns(ctx, now.AddDate(0, 0, -30)); n != 0 || err != nil {
		t.Errorf("purging again: %d %v", n, err)
	}
}

func TestPurgeRunsInBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openStore(t)
	u := historyUser(t, s, "alice")
	at := time.Now().AddDate(-1, 0, 0)
	for range 510 { // more than one purge batch
		_, err := s.CreateRun(ctx, db.Run{UserID: u, Provider: "sim", Endpoint: "chat", Model: "m", Spec: chatSpec("sim", "m", "", "bulk"), CreatedAt: at})
		must(t, err)
	}
	// Running runs are kept: mark them done first, as a restart would.
	if _, err := s.InterruptRuns(ctx, nil); err != nil {
		t.Fatal(err)
	}
	n, err := s.PurgeRuns(ctx, time.Now())
	if n != 510 || err != nil {
		t.Errorf("purged %d, %v; want 510", n, err)
	}
	if got := listIDs(t, s, db.RunFilter{UserID: u, Query: "bulk"}); len(got) != 0 {
		t.Errorf("%d purged runs still found", len(got))
	}
}

func TestRemovedUserLeavesSearch(t *testing.T) {
	ctx := context.Background()
	s, path := openStore(t)
	historyUser(t, s, "admin")
	u := historyUser(t, s, "leaver")
	id := storeRun(t, s, u, testRun{prompt: "farewell"})
	must(t, s.RemoveUser(ctx, u))
	var n int
	must(t, rawDB(t, path).QueryRow(`SELECT count(*) FROM runs_fts WHERE rowid & ((1 << 40) - 1) = ?`, id).Scan(&n))
	if n != 0 {
		t.Errorf("a removed user's run is still in the search index")
	}
}

func TestMigrationSummarisesExistingRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := t.TempDir() + "/old.db"
	// The schema as Knobs left it before history (raw_response, version 3).
	must(t, db.MigrateTo(ctx, path, 3))
	raw := rawDB(t, path)
	tx, err := raw.Begin()
	must(t, err)
	_, err = tx.Exec(`INSERT INTO users (id, username, password_hash, role, created_at) VALUES (1, 'alice', 'x', 'admin', 0), (2, 'bob', 'x', 'member', 0)`)
	must(t, err)
	insert := `INSERT INTO runs (user_id, provider, endpoint, model, spec, status, created_at, finished_at, raw_request, result, events) VALUES (?, ?, 'chat', ?, ?, ?, ?, ?, '{}', ?, ?)`
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli()
	for i := range 520 { // more than one backfill batch
		user := int64(1 + i%2)
		status, result := db.RunDone, resultJSON(fmt.Sprintf("legacy answer %d", i), "", "", i+1)
		if i == 7 {
			status, result = db.RunInterrupted, `{}`
		}
		if i == 8 {
			result = `not json`
		}
		_, err := tx.Exec(insert, user, "cerebras", "llama", chatSpec("cerebras", "llama", "be brief", fmt.Sprintf("legacy question %d\nmore", i)),
			status, at+int64(i), at+int64(i)+1000, result, "event: done\ndata: {}\n\n")
		must(t, err)
	}
	must(t, tx.Commit())
	raw.Close()

	s, err := db.Open(ctx, path)
	must(t, err)
	defer s.Close()
	runs, next, err := s.Runs(ctx, db.RunFilter{UserID: 1, Limit: 200})
	must(t, err)
	if len(runs) != 200 || next == 0 {
		t.Fatalf("alice's first page after migrating: %d runs, next %d", len(runs), next)
	}
	last := runs[0] // run 519 is bob's; 518 is alice's
	if text(last.Prompt) != "legacy question 518" || text(last.Output) != "legacy answer 518" || last.Tokens != 519 || last.TTFTMs != 120.5 || last.Starred || last.Note != "" {
		t.Errorf("backfilled summary: %+v", last)
	}
	for q, want := range map[string]int{"legacy": 260, "503": 0, "answer 502": 1, "brief": 260, "question* 8": 1} {
		runs, _, err := s.Runs(ctx, db.RunFilter{UserID: 1, Query: q, Limit: 200})
		must(t, err)
		n := len(runs)
		for next := int64(0); len(runs) == 200; n += len(runs) {
			next = runs[len(runs)-1].ID
			runs, _, err = s.Runs(ctx, db.RunFilter{UserID: 1, Query: q, Limit: 200, Before: next})
			must(t, err)
		}
		if n != want {
			t.Errorf("search %q after migrating: %d runs, want %d", q, n, want)
		}
	}
	bob, _, err := s.Runs(ctx, db.RunFilter{UserID: 2, Query: "question 7"})
	must(t, err)
	if len(bob) != 1 || bob[0].Status != db.RunInterrupted || len(bob[0].Output) != 0 {
		t.Errorf("an interrupted legacy run: %+v", bob)
	}
	if got := schemaVersion(t, path); got != db.SchemaVersion() {
		t.Errorf("schema version %d after migrating, want %d", got, db.SchemaVersion())
	}
}
