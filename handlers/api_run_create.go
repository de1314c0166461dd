package handlers

import (
	"context"
	"encoding/json"
	"strconv"

	"knobs/field"
	"knobs/llm"
)

// CreateRunInput is POST /api/v1/runs: a run spec as POST /runs takes
// it, validated by the same code, or a preset to run.
type CreateRunInput struct {
	Body struct {
		Provider string          `json:"provider,omitempty" doc:"The provider's id, as GET /api/v1/providers lists it (with endpoint and body, or else preset)."`
		Endpoint string          `json:"endpoint,omitempty" doc:"\"chat\" or \"completion\"."`
		Body     json.RawMessage `json:"body,omitempty" doc:"The JSON request body for the endpoint, as the provider takes it (model, messages or prompt, parameters); it may hold {{placeholders}}."`
		PresetRun
		Variables map[string]string `json:"variables,omitempty" doc:"Values for the body's {{placeholders}} (over a preset's defaults)."`
		Wait      bool              `json:"wait,omitempty" doc:"Answer when the run has ended, with the run as GET /api/v1/runs/{id} gives it, rather than at once with its id."`
	}
}

// RunCreated is the answer to a run started without wait: its id and
// where its events stream.
type RunCreated struct {
	ID     int64  `json:"id"`
	Events string `json:"events" doc:"The run's events as server-sent events: GET it with Accept: text/event-stream."`
}

// CreateRunOutput is the answer to POST /api/v1/runs: a RunCreated, or
// with wait a RunDetail.
type CreateRunOutput struct {
	Warning string `header:"X-Knobs-Budget-Warning" doc:"Set when a monthly budget that applies to the run is used past the admin's warning share: what to tell the user."`
	Body    any
}

// CreateAPIRun validates a run spec as POST /runs does and starts the
// run: field errors are 422, a spent monthly budget 402, with nothing
// sent or stored. It answers once
// the run is in the database, or with wait once it has ended and is
// stored, with the run.
func (h *Handler) CreateAPIRun(ctx context.Context, in *CreateRunInput) (*CreateRunOutput, error) {
	u := apiUser(ctx)
	st, err := h.runRequest(ctx, in)
	if err != nil {
		return nil, err
	}
	run, warn, fields, err := h.startRun(ctx, u.ID, st)
	if err != nil {
		return nil, err
	}
	if len(fields) > 0 {
		return nil, apiInvalid(fields)
	}
	if !in.Body.Wait {
		if err := run.WaitStored(); err != nil {
			return nil, err
		}
		return &CreateRunOutput{Warning: warn, Body: RunCreated{ID: run.ID, Events: "/api/v1/runs/" + strconv.FormatInt(run.ID, 10) + "/events"}}, nil
	}
	// The caller is the run's listener while it waits: a caller that
	// hangs up leaves it, and the run stops as a page's would.
	leave := run.Subscribe()
	defer leave()
	select {
	case <-run.Kept(): // all of it, its line in the history list included
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	d, err := h.apiRun(ctx, u.ID, run.ID)
	if err != nil {
		return nil, err
	}
	return &CreateRunOutput{Warning: warn, Body: d}, nil
}

// runRequest is the setup a POST /api/v1/runs asks for: its spec, or
// the preset it names.
func (h *Handler) runRequest(ctx context.Context, in *CreateRunInput) (playgroundState, error) {
	b := in.Body
	spec := b.Provider != "" || b.Endpoint != "" || len(b.Body) > 0
	switch {
	case b.Ref != "" && spec:
		return playgroundState{}, apiInvalid(field.Errors{"preset": "Send a preset or provider, endpoint and body, not both."})
	case b.Ref != "":
		return h.presetState(ctx, b.PresetRun, b.Variables)
	case b.Label != "" || b.Version != 0 || len(b.Overrides) > 0:
		return playgroundState{}, apiInvalid(field.Errors{"preset": "label, version and overrides go with a preset: name it."})
	}
	fe := field.Errors{}
	if b.Provider == "" {
		fe.Add("provider", "Name the provider, or run a preset.")
	}
	if b.Endpoint == "" {
		fe.Add("endpoint", `Choose the endpoint "chat" or "completion".`)
	}
	if !fe.Empty() {
		return playgroundState{}, apiInvalid(fe)
	}
	return playgroundState{RunSpec: llm.RunSpec{Provider: b.Provider, Endpoint: llm.Endpoint(b.Endpoint), Body: b.Body}, Variables: b.Variables}, nil
}
