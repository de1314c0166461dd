package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"knobs/arena"
	"knobs/db"
	"knobs/experiment"
	"knobs/field"
	"knobs/llm"
	"knobs/preset"
)

// ContestantInput is one side of an arena: a preset at a label or
// version, or a setup of its own, under the name revealed after a vote.
type ContestantInput struct {
	Name string `json:"name" minLength:"1" maxLength:"100" doc:"Shown to voters only after their vote."`
	PresetRun
	Provider string          `json:"provider,omitempty"`
	Endpoint string          `json:"endpoint,omitempty" enum:"chat,completion,"`
	Body     json.RawMessage `json:"body,omitempty" doc:"The request body; a list or open prompt fills {{prompt}}, or is added as the last user message."`
}

// ArenaPromptsInput says where an arena's prompts come from: one of a
// dataset's rows, a list, or the voters themselves.
type ArenaPromptsInput struct {
	Dataset        int64    `json:"dataset,omitempty" minimum:"0" doc:"A dataset's id: each row is a prompt, filling the contestants' {{variables}}."`
	DatasetVersion int      `json:"dataset_version,omitempty" minimum:"0"`
	List           []string `json:"list,omitempty" maxItems:"1000" doc:"Prompts as text."`
	Open           bool     `json:"open,omitempty" doc:"Voters type their own prompts; answers are made live."`
}

// CreateArenaInput is POST /api/v1/arenas.
type CreateArenaInput struct {
	Body struct {
		Name             string            `json:"name" minLength:"1" maxLength:"100"`
		Contestants      []ContestantInput `json:"contestants" minItems:"2" maxItems:"8"`
		Prompts          ArenaPromptsInput `json:"prompts"`
		Audience         string            `json:"audience" enum:"team,public" doc:"team: signed-in members vote; public: anyone with the link."`
		Mode             string            `json:"mode" enum:"pregenerated,live" doc:"pregenerated: every answer made before voting starts; live: made when a pair is asked for, within the budget."`
		BudgetUSD        *float64          `json:"budget_usd,omitempty" minimum:"0" doc:"The most live answers may cost, in USD."`
		BudgetCalls      *int              `json:"budget_calls,omitempty" minimum:"0" doc:"The most live answers that may be made."`
		MaxVotesPerVoter *int              `json:"max_votes_per_voter,omitempty" minimum:"1"`
		EndsAt           *time.Time        `json:"ends_at,omitempty" doc:"When voting ends."`
		MaskTerms        []string          `json:"mask_terms,omitempty" maxItems:"200" doc:"Words hidden from voters besides the contestants' names, models and providers and the built-in list."`
		ShowStreaming    bool              `json:"show_streaming,omitempty" doc:"A speed demo, for live arenas only: voters watch both answers stream side by side as they are written. Not blind: the streaming speed can reveal which model is which, and the results say blind false."`
	}
}

// ArenaDetail is an arena as its owner and team see it.
type ArenaDetail struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Owner    string `json:"owner"`
	Link     string `json:"link" doc:"The voting link, /a/{token}."`
	Status   string `json:"status" enum:"preparing,ready,error" doc:"preparing while pregenerated answers are made."`
	Error    string `json:"error"`
	Audience string `json:"audience" enum:"team,public"`
	Mode     string `json:"mode" enum:"pregenerated,live"`
	// ShowStreaming and Blind say the same thing two ways: a speed demo
	// is not blind.
	ShowStreaming bool               `json:"show_streaming" doc:"Voters watch both answers stream side by side (a speed demo)."`
	Blind         bool               `json:"blind" doc:"false for a speed demo: the streaming speed can reveal which model is which."`
	PromptsKind   string             `json:"prompts" enum:"dataset,list,open"`
	Prompts       int                `json:"prompt_count"`
	Contestants   []ArenaContestantV `json:"contestants" nullable:"false"`
	Answers       ArenaProgress      `json:"answers"`
	Votes         int                `json:"votes"`
	SpentUSD      float64            `json:"spent_usd"`
	Calls         int                `json:"calls"`
	BudgetUSD     *float64           `json:"budget_usd"`
	BudgetCalls   *int               `json:"budget_calls"`
	EndsAt        *time.Time         `json:"ends_at"`
	Revoked       bool               `json:"revoked"`
	CreatedAt     time.Time          `json:"created_at"`
}

// ArenaContestantV is a contestant as its arena's page shows it.
type ArenaContestantV struct {
	Index    int    `json:"index"`
	Name     string `json:"name"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// ArenaProgress counts an arena's answers.
type ArenaProgress struct {
	Done   int `json:"done"`
	Failed int `json:"failed"`
	Total  int `json:"total"`
}

// ArenaOutput answers an arena.
type ArenaOutput struct {
	Body ArenaDetail
}

// CreateAPIArena checks an arena whole and makes it: its contestants
// resolved (a preset's version at the time), its prompts stored, and for
// a pregenerated arena every answer made in the background; the arena is
// ready when GET /api/v1/arenas/{id} says so. Nothing is stored when
// anything is wrong (422).
func (h *Handler) CreateAPIArena(ctx context.Context, in *CreateArenaInput) (*ArenaOutput, error) {
	made, fe, err := h.createArena(ctx, apiUser(ctx), in)
	if err != nil {
		return nil, err
	}
	if !fe.Empty() {
		return nil, apiInvalid(fe)
	}
	d, err := h.arenaDetail(ctx, made)
	if err != nil {
		return nil, err
	}
	return &ArenaOutput{Body: d}, nil
}

// createArena checks an arena whole and, when nothing is wrong, stores
// it and starts making its answers; otherwise it stores nothing and
// answers what is wrong, field by field under the API's names. The API
// and the new arena page both make arenas through it.
func (h *Handler) createArena(ctx context.Context, u db.User, in *CreateArenaInput) (db.Arena, field.Errors, error) {
	b := in.Body
	fe := field.Errors{}
	name := strings.TrimSpace(b.Name)
	if name == "" || utf8.RuneCountInString(name) > 100 {
		fe.Add("name", "Give the arena a name of up to 100 characters.")
	}
	if n := len(b.Contestants); n < 2 || n > 8 {
		fe.Add("contestants", "An arena has 2 to 8 contestants.")
	}
	if b.Audience != db.ShareTeam && b.Audience != db.SharePublic {
		fe.Add("audience", "Choose who votes: the team or anyone with the link.")
	}
	if b.Mode != "pregenerated" && b.Mode != "live" {
		fe.Add("mode", "Choose when answers are made: ahead of time or live.")
	}
	kinds := 0
	var prompts []db.ArenaPrompt
	kind := ""
	var ds db.Dataset
	var rows []db.DatasetRow
	if b.Prompts.Dataset != 0 {
		kinds++
		kind = "dataset"
		var err error
		ds, err = h.store.Dataset(ctx, u.ID, b.Prompts.Dataset)
		if errors.Is(err, db.ErrNotFound) {
			fe.Add("prompts.dataset", "There is no such dataset.")
		} else if err != nil {
			return db.Arena{}, nil, err
		} else {
			version := b.Prompts.DatasetVersion
			if version == 0 {
				version = ds.Version
			}
			ds.Version = version
			dv, err := h.store.DatasetVersion(ctx, u.ID, ds.ID, version)
			if errors.Is(err, db.ErrNotFound) {
				fe.Add("prompts.dataset_version", "The dataset has no version "+strconv.Itoa(version)+".")
			} else if err != nil {
				return db.Arena{}, nil, err
			} else if dv.Rows > ArenaMaxPrompts {
				fe.Add("prompts.dataset", fmt.Sprintf("The dataset has %d rows; an arena takes at most %d prompts.", dv.Rows, ArenaMaxPrompts))
			} else if rows, err = h.store.DatasetRows(ctx, u.ID, ds.ID, version, 0, dv.Rows); err != nil {
				return db.Arena{}, nil, err
			}
		}
	}
	if len(b.Prompts.List) > 0 {
		kinds++
		kind = "list"
		for i, t := range b.Prompts.List {
			t = strings.TrimSpace(t)
			if t == "" || len(t) > 64<<10 {
				fe.Add(fmt.Sprintf("prompts.list[%d]", i), "A prompt is some text, up to 64 KiB.")
				continue
			}
			prompts = append(prompts, db.ArenaPrompt{Index: len(prompts), Text: t})
		}
	}
	if b.Prompts.Open {
		kinds++
		kind = "open"
	}
	if kinds != 1 {
		fe.Add("prompts", `Give one of {"dataset": id}, {"list": [...]} or {"open": true}.`)
	}
	if kind == "open" && b.Mode != "live" {
		fe.Add("mode", "Voters' own prompts are answered live: choose mode live.")
	}
	if b.ShowStreaming && b.Mode != "live" {
		fe.Add("show_streaming", "Streaming side by side needs live answers: answers made ahead of time are complete before anyone votes. Choose live answers, or leave the speed demo off.")
	}
	if b.Mode == "live" && b.BudgetUSD == nil && b.BudgetCalls == nil {
		fe.Add("budget_usd", "A live arena needs a budget, in dollars or calls, so that voters cannot spend without bound.")
	}
	if b.EndsAt != nil && !b.EndsAt.After(time.Now()) {
		fe.Add("ends_at", "The end is in the past.")
	}
	for i, t := range b.MaskTerms {
		if strings.TrimSpace(t) == "" || len(t) > 200 {
			fe.Add(fmt.Sprintf("mask_terms[%d]", i), "A term is 1 to 200 characters.")
		}
	}
	if !fe.Empty() {
		return db.Arena{}, fe, nil
	}
	// The prompts of a dataset: each row fills the contestants' variables;
	// the voter reads the first contestant's filled prompt.
	contestants := make([]db.ArenaContestant, len(b.Contestants))
	names := map[string]bool{}
	for i, c := range b.Contestants {
		ac, cfe, err := h.arenaContestant(ctx, i, c)
		if err != nil {
			return db.Arena{}, nil, err
		}
		for k, msg := range cfe {
			fe.Add(fmt.Sprintf("contestants[%d].%s", i, k), msg)
		}
		if names[strings.ToLower(ac.Name)] {
			fe.Add(fmt.Sprintf("contestants[%d].name", i), "Two contestants have this name: votes would reveal nothing.")
		}
		names[strings.ToLower(ac.Name)] = true
		contestants[i] = ac
	}
	// A dollar budget holds only where prices are known: a live arena of
	// a model without one needs a budget in calls.
	if b.Mode == "live" && b.BudgetCalls == nil && fe.Empty() {
		for _, c := range contestants {
			var spec llm.RunSpec
			_ = json.Unmarshal([]byte(c.Spec), &spec)
			prov, err := h.findProvider(ctx, spec.Provider)
			if err != nil {
				continue
			}
			m, err := h.pricedModel(ctx, prov, spec.Model())
			if err != nil {
				return db.Arena{}, nil, err
			}
			if !m.Priced() {
				fe.Add("budget_calls", fmt.Sprintf("%s's model %s has no known price, so a budget in dollars cannot hold it: set budget_calls too.", c.Name, spec.Model()))
				break
			}
		}
	}
	if kind == "dataset" && fe.Empty() {
		for ri, r := range rows {
			p := db.ArenaPrompt{Index: ri, Vars: r.Vars}
			setup, err := arenaSetup(contestants[0], p, kind)
			if err != nil {
				return db.Arena{}, nil, err
			}
			for _, c := range contestants {
				cs, _ := arenaSetup(c, p, kind)
				if _, cfe, err := h.checkRun(ctx, playgroundState{RunSpec: cs.Spec, Variables: cs.Variables}); err != nil {
					return db.Arena{}, nil, err
				} else if len(cfe) > 0 {
					fe.Add(fmt.Sprintf("contestants[%d]", c.Index), fmt.Sprintf("Row %d: %s", ri+1, cfe.Describe()))
				}
			}
			p.Text = arenaPromptText(setup)
			prompts = append(prompts, p)
			if !fe.Empty() {
				break
			}
		}
	}
	if _, err := arena.NewMasker(b.MaskTerms); err != nil {
		fe.Add("mask_terms", err.Error())
	}
	if !fe.Empty() {
		return db.Arena{}, fe, nil
	}
	status := db.ArenaReady
	if b.Mode == "pregenerated" {
		status = db.ArenaPreparing
	}
	a := db.Arena{OwnerID: u.ID, Name: name, Audience: b.Audience, Mode: b.Mode, PromptsKind: kind, DatasetID: ds.ID,
		DatasetVersion: ds.Version, BudgetUSD: b.BudgetUSD, BudgetCalls: b.BudgetCalls, MaxVotesPerVoter: b.MaxVotesPerVoter,
		MaskTerms: b.MaskTerms, ShowStreaming: b.ShowStreaming, Status: status}
	if b.EndsAt != nil {
		a.EndsAt = *b.EndsAt
	}
	made, err := h.store.CreateArena(ctx, a, contestants, prompts)
	if err != nil {
		return db.Arena{}, nil, err
	}
	if made.Status == db.ArenaPreparing {
		h.goBackground(func() { h.prepareArena(made) })
	}
	return made, nil, nil
}

// arenaContestant resolves one contestant: a preset's version (with
// overrides) or a setup of its own, checked as a run's spec.
func (h *Handler) arenaContestant(ctx context.Context, i int, c ContestantInput) (db.ArenaContestant, map[string]string, error) {
	ac := db.ArenaContestant{Index: i, Name: strings.TrimSpace(c.Name)}
	var st playgroundState
	own := c.Provider != "" || c.Endpoint != "" || len(c.Body) > 0
	switch {
	case c.Ref != "" && own:
		return ac, map[string]string{"preset": "Give a preset or provider, endpoint and body, not both."}, nil
	case c.Ref != "":
		var err error
		st, err = h.presetState(ctx, c.PresetRun, nil)
		var p *Problem
		if errors.As(err, &p) && p.Status < 500 {
			return ac, map[string]string{"preset": p.Message}, nil
		} else if err != nil {
			return ac, nil, err
		}
		ac.PresetID, ac.PresetVersion, ac.PresetLabel = st.PresetID, st.PresetVersion, c.Label
	case c.Provider == "" || c.Endpoint == "":
		return ac, map[string]string{"preset": "Name a preset, or give provider, endpoint and body."}, nil
	default:
		st = playgroundState{RunSpec: llm.RunSpec{Provider: c.Provider, Endpoint: llm.Endpoint(c.Endpoint), Body: c.Body}}
	}
	if ac.Name == "" {
		return ac, map[string]string{"name": "Give the contestant a name, revealed after each vote."}, nil
	}
	if _, err := h.findProvider(ctx, st.Provider); errors.Is(err, errNoProvider) {
		return ac, map[string]string{"provider": "There is no provider " + strconv.Quote(st.Provider) + "."}, nil
	} else if err != nil {
		return ac, nil, err
	}
	if len(st.Body) == 0 || !json.Valid(st.Body) {
		return ac, map[string]string{"body": "The request body is missing or not JSON."}, nil
	}
	spec, err := json.Marshal(st.RunSpec)
	if err != nil {
		return ac, nil, err
	}
	ac.Spec = string(spec)
	if len(st.Variables) > 0 {
		v, _ := json.Marshal(st.Variables)
		ac.Variables = string(v)
	}
	return ac, nil, nil
}

// arenaDetail is an arena as the API shows it.
func (h *Handler) arenaDetail(ctx context.Context, a db.Arena) (ArenaDetail, error) {
	d := ArenaDetail{ID: a.ID, Name: a.Name, Owner: a.OwnerName, Link: "/a/" + a.Token, Status: a.Status, Error: a.Error,
		Audience: a.Audience, Mode: a.Mode, ShowStreaming: a.ShowStreaming, Blind: !a.ShowStreaming, PromptsKind: a.PromptsKind, Votes: a.Votes, SpentUSD: a.SpentUSD, Calls: a.Calls,
		BudgetUSD: a.BudgetUSD, BudgetCalls: a.BudgetCalls, Revoked: !a.RevokedAt.IsZero(), CreatedAt: a.CreatedAt,
		Contestants: []ArenaContestantV{}}
	if !a.EndsAt.IsZero() {
		t := a.EndsAt
		d.EndsAt = &t
	}
	cs, err := h.store.ArenaContestants(ctx, a.ID)
	if err != nil {
		return d, err
	}
	for _, c := range cs {
		var spec llm.RunSpec
		_ = json.Unmarshal([]byte(c.Spec), &spec)
		d.Contestants = append(d.Contestants, ArenaContestantV{Index: c.Index, Name: c.Name, Provider: spec.Provider, Model: spec.Model()})
	}
	ps, err := h.store.ArenaPrompts(ctx, a.ID)
	if err != nil {
		return d, err
	}
	d.Prompts = len(ps)
	answers, err := h.store.ArenaAnswers(ctx, a.ID, -1)
	if err != nil {
		return d, err
	}
	for _, x := range answers {
		d.Answers.Total++
		switch x.Status {
		case "done":
			d.Answers.Done++
		case "error":
			d.Answers.Failed++
		}
	}
	return d, nil
}

// arenaPromptText is what a voter reads of a dataset row's prompt: the
// filled spec's last user message, or its prompt.
func arenaPromptText(s experiment.Setup) string {
	filled, _, err := preset.Fill(s.Spec, s.Variables, MaxBody)
	if err != nil {
		return ""
	}
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Prompt json.RawMessage `json:"prompt"`
	}
	_ = json.Unmarshal(filled.Body, &body)
	for i := len(body.Messages) - 1; i >= 0; i-- {
		if body.Messages[i].Role == "user" {
			return contentText(body.Messages[i].Content)
		}
	}
	var prompt string
	_ = json.Unmarshal(body.Prompt, &prompt)
	return prompt
}
