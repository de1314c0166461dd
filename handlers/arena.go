package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"knobs/arena"
	"knobs/db"
	"knobs/experiment"
	"knobs/llm"
	"knobs/llm/sim"
	"knobs/preset"
	"knobs/runner"
)

// Bounds of an arena.
const (
	ArenaMinContestants = 2
	ArenaMaxContestants = 8
	ArenaMaxPrompts     = 1000
	arenaOpenPrompts    = 1000 // prompts voters may type into an open arena
	arenaPrepareConc    = 4    // answers made at once while an arena prepares
	arenaAnswerMax      = 64 << 10
)

// promptVar is the variable a contestant's body reads a list or open
// prompt from; a body without it gets the prompt as its last user
// message.
const promptVar = "prompt"

// arenaSetup is what a contestant sends for a prompt: its spec with the
// prompt put in, and the values to fill.
func arenaSetup(c db.ArenaContestant, p db.ArenaPrompt, kind string) (experiment.Setup, error) {
	var spec llm.RunSpec
	if err := json.Unmarshal([]byte(c.Spec), &spec); err != nil {
		return experiment.Setup{}, err
	}
	vars := map[string]string{}
	if c.Variables != "" {
		_ = json.Unmarshal([]byte(c.Variables), &vars)
	}
	if kind == "dataset" {
		maps.Copy(vars, p.Vars)
	} else {
		vars[promptVar] = p.Text
		used := preset.Variables(spec)
		if !containsString(used, promptVar) {
			// The prompt goes in as {{prompt}}, filled once: a voter's text
			// holding {{a_variable}} of the contestant's stays as written.
			var err error
			if spec.Body, err = withPrompt(spec, "{{"+promptVar+"}}"); err != nil {
				return experiment.Setup{}, err
			}
		}
	}
	return experiment.Setup{Spec: spec, Variables: vars, PresetID: c.PresetID}, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// withPrompt puts a prompt into a body that has no {{prompt}}: a chat's
// last user message, or a completion's prompt.
func withPrompt(spec llm.RunSpec, text string) (json.RawMessage, error) {
	if spec.Endpoint == llm.EndpointCompletion {
		v, _ := json.Marshal(text)
		return preset.Override(spec.Body, map[string]json.RawMessage{"prompt": v})
	}
	var body struct {
		Messages []json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(spec.Body, &body)
	msg, _ := json.Marshal(map[string]string{"role": "user", "content": text})
	msgs, err := json.Marshal(append(body.Messages, msg))
	if err != nil {
		return nil, err
	}
	return preset.Override(spec.Body, map[string]json.RawMessage{"messages": msgs})
}

// arenaMasker is an arena's blinding: the built-in names, its own terms,
// and its contestants' names, models and providers.
func (h *Handler) arenaMasker(a db.Arena, cs []db.ArenaContestant) (*arena.Masker, error) {
	return arena.NewMasker(h.arenaMaskTerms(a, cs))
}

// arenaMaskTerms are the words an arena hides besides the built-in names.
func (h *Handler) arenaMaskTerms(a db.Arena, cs []db.ArenaContestant) []string {
	terms := append([]string(nil), a.MaskTerms...)
	for _, c := range cs {
		terms = append(terms, c.Name)
		var spec llm.RunSpec
		if json.Unmarshal([]byte(c.Spec), &spec) == nil {
			if m := spec.Model(); m != "" {
				terms = append(terms, m)
			}
			if spec.Provider != "" {
				terms = append(terms, spec.Provider)
				// And the provider's name as people write it ("Simulator",
				// "Cerebras", a custom provider's own).
				if prov, err := h.findProvider(h.background, spec.Provider); err == nil {
					terms = append(terms, strings.Fields(strings.Split(prov.Name, "(")[0])...)
				}
			}
		}
	}
	return dedupe(terms)
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		k := strings.ToLower(strings.TrimSpace(x))
		if k != "" && !seen[k] {
			seen[k] = true
			out = append(out, strings.TrimSpace(x))
		}
	}
	return out
}

// arenaAnswer makes one contestant's answer to a prompt as the arena's
// owner, waits for it, and stores it: its text, or why there is none.
// started, when not nil, is told of the run as it starts.
func (h *Handler) arenaAnswer(ctx context.Context, a db.Arena, c db.ArenaContestant, p db.ArenaPrompt, started func(*runner.Run)) (db.ArenaAnswer, float64) {
	ans := db.ArenaAnswer{Prompt: p.Index, Contestant: c.Index, Status: "error"}
	setup, err := arenaSetup(c, p, a.PromptsKind)
	if err != nil {
		ans.Error = "The contestant's setup is unreadable."
		return ans, 0
	}
	setup.Arena = a.ID
	for {
		launched, fe, err := h.launchCell(ctx, a.OwnerID, setup)
		var le *runner.LimitError
		if errors.As(err, &le) {
			select {
			case <-ctx.Done():
				ans.Error = "Knobs stopped before the answer was made."
				return ans, 0
			case <-time.After(500 * time.Millisecond):
				continue
			}
		}
		switch {
		case err != nil:
			ans.Error = "The run could not start: " + err.Error()
			return ans, 0
		case len(fe) > 0:
			ans.Error = "Not sent: " + fe.Describe()
			return ans, 0
		}
		run := launched.Run
		ans.RunID = run.ID
		leave := run.Subscribe()
		if started != nil {
			started(run)
		}
		select {
		case <-run.Kept():
		case <-ctx.Done():
			leave()
			ans.Error = "Knobs stopped before the answer was made."
			return ans, 0
		}
		leave()
		stored, err := h.store.Run(ctx, a.OwnerID, run.ID)
		if err != nil {
			ans.Error = "The answer could not be read back."
			return ans, 0
		}
		var res runner.Result
		_ = json.Unmarshal([]byte(stored.Result), &res)
		if res.Error != nil {
			ans.Error = res.Error.Message
			return ans, 0
		}
		if len(res.Choices) > 0 {
			ans.Text = clipBytes(res.Choices[0].Content, arenaAnswerMax)
		}
		ans.Status = "done"
		return ans, res.Metrics.CostUSD
	}
}

// clipBytes cuts s to at most n bytes on a rune boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// arenaJobs are the arenas whose answers are being made ahead, so that a
// restart's resume and a new arena do not make them twice.
type arenaJobs struct {
	mu      sync.Mutex
	running map[int64]bool
}

// prepareArena makes every answer an arena pregenerates that is not made
// yet, a few at a time, then marks it ready (or failed, saying why).
func (h *Handler) prepareArena(a db.Arena) {
	h.arenas.mu.Lock()
	if h.arenas.running == nil {
		h.arenas.running = map[int64]bool{}
	}
	if h.arenas.running[a.ID] {
		h.arenas.mu.Unlock()
		return
	}
	h.arenas.running[a.ID] = true
	h.arenas.mu.Unlock()
	defer func() {
		h.arenas.mu.Lock()
		delete(h.arenas.running, a.ID)
		h.arenas.mu.Unlock()
	}()
	ctx := h.background
	cs, err := h.store.ArenaContestants(ctx, a.ID)
	if err != nil {
		h.log.Error("preparing an arena", "arena", a.ID, "err", err)
		return
	}
	ps, err := h.store.ArenaPrompts(ctx, a.ID)
	if err != nil {
		h.log.Error("preparing an arena", "arena", a.ID, "err", err)
		return
	}
	answers, err := h.store.ArenaAnswers(ctx, a.ID, -1)
	if err != nil {
		h.log.Error("preparing an arena", "arena", a.ID, "err", err)
		return
	}
	todo := make(chan db.ArenaAnswer)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for range arenaPrepareConc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range todo {
				ans, cost := h.arenaAnswer(ctx, a, cs[t.Contestant], ps[t.Prompt], nil)
				if ctx.Err() != nil {
					continue // left pending for the next start
				}
				if cost > 0 {
					if err := h.store.AddArenaSpend(context.WithoutCancel(ctx), a.ID, cost); err != nil {
						h.log.Error("recording an arena's spend", "arena", a.ID, "err", err)
					}
				}
				if err := h.store.SaveArenaAnswer(context.WithoutCancel(ctx), a.ID, ans); err != nil {
					h.log.Error("storing an arena's answer", "arena", a.ID, "err", err)
				}
				if ans.Status != "done" {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		}()
	}
	for _, t := range answers {
		if t.Status == "done" || t.Contestant >= len(cs) || t.Prompt >= len(ps) {
			continue
		}
		select {
		case todo <- t:
		case <-ctx.Done():
		}
	}
	close(todo)
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	status, msg := db.ArenaReady, ""
	if failed > 0 {
		msg = fmt.Sprintf("%d answers could not be made; the prompts they belong to are left out of the pairs.", failed)
	}
	if failed == len(answers) && failed > 0 {
		status = db.ArenaError
	}
	if err := h.store.SetArenaStatus(context.WithoutCancel(ctx), a.ID, status, msg); err != nil {
		h.log.Error("marking an arena ready", "arena", a.ID, "err", err)
	}
}

// answerEstimate is the most a contestant's answer to a prompt can cost
// at its model's price in force (pricedModel): the prompt as the simulator counts it and
// the output at its max_tokens (else the model's limit); 0, and known
// false, when the model has no price.
func (h *Handler) answerEstimate(ctx context.Context, c db.ArenaContestant, p db.ArenaPrompt, kind string) (usd float64, known bool) {
	setup, err := arenaSetup(c, p, kind)
	if err != nil {
		return 0, false
	}
	prov, err := h.findProvider(ctx, setup.Spec.Provider)
	if err != nil {
		return 0, false
	}
	model, err := h.pricedModel(ctx, prov, setup.Spec.Model())
	if err != nil || !model.Priced() {
		return 0, false
	}
	filled, _, err := preset.Fill(setup.Spec, setup.Variables, MaxBody)
	if err != nil {
		return 0, false
	}
	in, ok := sim.PromptTokens(filled.Endpoint, filled.Body)
	if !ok {
		in = sim.CountTokens(string(filled.Body))
	}
	limit, n := outputLimit(filled.Body)
	if limit <= 0 {
		limit = model.MaxOutput
	}
	if limit <= 0 {
		return 0, false
	}
	return (float64(in)*model.PromptPrice + float64(limit*n)*model.CompletionPrice) / 1e6, true
}
