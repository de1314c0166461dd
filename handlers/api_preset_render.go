package handlers

import (
	"context"
	"encoding/json"

	"knobs/llm"
)

// RenderPresetInput is POST /api/v1/presets/{preset}/render.
type RenderPresetInput struct {
	PresetRef
	Body struct {
		PresetPick
		Variables map[string]string          `json:"variables,omitempty" doc:"Values for the preset's {{placeholders}}, over its defaults."`
		Overrides map[string]json.RawMessage `json:"overrides,omitempty" doc:"Top-level body fields to set over the preset's; null removes one."`
	}
}

// RenderedRequest is the request Knobs would send upstream for a preset:
// for apps that call the provider themselves.
type RenderedRequest struct {
	Provider string          `json:"provider"`
	Endpoint string          `json:"endpoint" enum:"chat,completion"`
	Body     json.RawMessage `json:"body" doc:"The JSON body exactly as a run sends it, stream fields included."`
}

// RenderPresetOutput is the answer to a render.
type RenderPresetOutput struct {
	Body RenderedRequest
}

// RenderAPIPreset fills a preset's variables, checks the result as a run
// would, and answers the body a run would send, byte for byte; nothing is
// sent or stored. It needs no provider key.
func (h *Handler) RenderAPIPreset(ctx context.Context, in *RenderPresetInput) (*RenderPresetOutput, error) {
	st, err := h.presetState(ctx, PresetRun{Ref: in.Ref, Label: in.Body.Label, Version: in.Body.Version, Overrides: in.Body.Overrides}, in.Body.Variables)
	if err != nil {
		return nil, err
	}
	cr, fe, err := h.checkRun(ctx, st)
	if err != nil {
		return nil, err
	}
	if len(fe) > 0 {
		return nil, apiInvalid(fe)
	}
	body, err := llm.WireBody(cr.provider.Dialect, cr.spec.Body)
	if err != nil {
		return nil, err
	}
	return &RenderPresetOutput{Body: RenderedRequest{Provider: cr.provider.ID, Endpoint: string(cr.spec.Endpoint), Body: body}}, nil
}
