package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"knobs/llm"
	"knobs/views"
)

// defaultSpec is what a fresh playground holds: the simulator, so that the
// first Run works with no key and no network.
var defaultSpec = llm.RunSpec{
	Provider: "sim",
	Endpoint: llm.EndpointChat,
	Body:     json.RawMessage(`{"model":"sim-fast","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Explain in three short paragraphs why the sky is blue."}]}`),
}

// presetInfo tells the page which preset is loaded, so that it can show
// its name, say when the setup differs from it, and save over it.
type presetInfo struct {
	ID        int64             `json:"id"`
	Name      string            `json:"name"`
	Version   int               `json:"version"`
	Spec      json.RawMessage   `json:"spec"`
	Variables map[string]string `json:"variables"`
	CanEdit   bool              `json:"can_edit"`
	// Label is the label the preset was opened at, "" when none: the
	// page names it, and Version and Spec are then that label's.
	Label string `json:"label,omitempty"`
}

// currentSetup is what the user's playground holds: what they left, or
// their default preset on a fresh start, or the built-in example.
func (h *Handler) currentSetup(ctx context.Context, user int64) (playgroundState, error) {
	s, err := h.currentPlayground(ctx, user)
	return s.playgroundState, err
}

// currentPlayground is currentSetup with what the page keeps around it:
// the last run shown and whether the editor has unsaved changes.
func (h *Handler) currentPlayground(ctx context.Context, user int64) (playgroundSaved, error) {
	saved, ok, err := h.savedPlayground(ctx, user)
	if err != nil || ok {
		return saved, err
	}
	if raw, err := h.store.PlaygroundState(ctx, user); err != nil {
		return playgroundSaved{}, err
	} else if raw == "" {
		if d, err := h.store.DefaultPreset(ctx, user); err == nil {
			return playgroundSaved{playgroundState: playgroundState{RunSpec: presetSpec(d), PresetID: d.ID, PresetVersion: d.Version, PresetName: d.Name, Variables: d.Variables}}, nil
		}
	}
	return playgroundSaved{playgroundState: playgroundState{RunSpec: defaultSpec}}, nil
}

// ShowPlaygroundPage renders the playground with the setup the user left,
// or their default preset on a fresh start.
func (h *Handler) ShowPlaygroundPage(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	st, err := h.currentPlayground(ctx(c), u.ID)
	if err != nil {
		return err
	}
	providers, err := h.providerList(ctx(c))
	if err != nil {
		return err
	}
	p, ok := providerByID(providers, st.Provider)
	if !ok {
		st = playgroundSaved{playgroundState: playgroundState{RunSpec: defaultSpec}, Pending: st.Pending}
		p = providers[0]
	}
	model, err := h.pricedModel(ctx(c), p, st.Model())
	if err != nil {
		return err
	}
	pending := st.Pending
	st.Pending = nil // asked about by the page's dialog, never loaded by its script
	stateJSON, err := json.Marshal(st)
	if err != nil {
		return err
	}
	v := views.PlaygroundView{
		Page:  h.page(c, "Playground", "playground"),
		Spec:  string(stateJSON),
		Panel: panelView(p, st.Endpoint, model),
	}
	if pending != nil {
		v.Pending = pending.Label
	}
	if v.Budget, err = h.budgetNotice(ctx(c), u.ID); err != nil {
		return err
	}
	if st.PresetID != 0 {
		// The preset as saved, to tell whether the setup changed since.
		if pr, err := h.store.Preset(ctx(c), u.ID, st.PresetID); err == nil {
			info := presetInfo{ID: pr.ID, Name: pr.Name, Version: pr.Version, Spec: json.RawMessage(pr.Spec), Variables: pr.Variables, CanEdit: pr.OwnerID == u.ID || u.IsAdmin()}
			if st.PresetLabel != "" && st.PresetVersion != pr.Version {
				// Opened at a label behind the current version: compared
				// with, and saved over, the version the label gave.
				if lv, err := h.store.PresetVersion(ctx(c), u.ID, pr.ID, st.PresetVersion); err == nil {
					info.Version, info.Spec, info.Variables = lv.Version, json.RawMessage(lv.Spec), lv.Variables
				}
			}
			info.Label = st.PresetLabel
			b, _ := json.Marshal(info)
			v.Preset = string(b)
		}
	}
	for _, o := range providers {
		v.Providers = append(v.Providers, views.ProviderOption{ID: o.ID, Name: o.Name, Selected: o.ID == p.ID})
	}
	return Render(c, fiber.StatusOK, views.PlaygroundPage(v))
}

// ShowPanel renders the parameter panel alone, for a changed provider,
// endpoint or model.
func (h *Handler) ShowPanel(c *fiber.Ctx) error {
	p, err := h.findProvider(ctx(c), c.Query("provider"))
	if errors.Is(err, errNoProvider) {
		return fiber.NewError(fiber.StatusNotFound, "There is no such provider.")
	} else if err != nil {
		return err
	}
	e := llm.Endpoint(c.Query("endpoint"))
	if !e.Valid() {
		return fiber.NewError(fiber.StatusBadRequest, `The endpoint is "chat" or "completion".`)
	}
	model, err := h.pricedModel(ctx(c), p, c.Query("model"))
	if err != nil {
		return err
	}
	return Render(c, fiber.StatusOK, views.Panel(panelView(p, e, model)))
}

// completionInputs belong with the prompt; the panel shows them first.
var completionInputs = map[string]bool{"suffix": true, "echo": true, "best_of": true}

// panelSkips are edited elsewhere (model, messages, prompt) or set by Knobs.
var panelSkips = map[string]bool{"model": true, "messages": true, "prompt": true}

// panelView builds the parameter panel for provider p, endpoint e and
// model (at its price in force).
func panelView(p Provider, e llm.Endpoint, model llm.Model) views.PanelView {
	modelID := model.ID
	v := views.PanelView{Provider: p.ID, Endpoint: string(e), Model: modelID, ModelHint: modelHint(model)}
	groups := map[string]int{}
	if e == llm.EndpointCompletion {
		groups["completion input"] = 0
		v.Groups = append(v.Groups, views.ParamGroup{Name: "Completion input"})
	}
	for _, prm := range llm.Params(p.Dialect, e) {
		if panelSkips[prm.Name] {
			continue
		}
		ctl := paramControl(prm)
		fitTokenSteps(&ctl, model)
		if ok, reason := llm.Support(p.Dialect, e, model, prm.Name); !ok {
			ctl.Disabled, ctl.Reason = true, reason
		}
		name := string(prm.Group)
		if e == llm.EndpointCompletion && completionInputs[prm.Name] {
			name = "completion input"
		}
		i, ok := groups[name]
		if !ok {
			i = len(v.Groups)
			groups[name] = i
			v.Groups = append(v.Groups, views.ParamGroup{Name: strings.ToUpper(name[:1]) + name[1:]})
		}
		v.Groups[i].Params = append(v.Groups[i].Params, ctl)
	}
	return v
}

// paramControl picks the control for a registry parameter.
func paramControl(p llm.Param) views.ParamControl {
	// A default shown is the one the endpoint's seed gives; without one
	// the provider decides, and the placeholder says so.
	c := views.ParamControl{Name: p.Name, Doc: p.Doc, Enum: p.Enum, MaxItems: p.MaxItems, Note: p.Note, Placeholder: "provider default"}
	if p.Default != nil {
		c.Placeholder = fmt.Sprintf("default %v", p.Default)
		c.Default = fmt.Sprint(p.Default)
	}
	if p.Deprecated {
		c.Deprecated = "Deprecated: use " + p.Replacement + "."
	}
	if p.Min != nil {
		c.Min = strconv.FormatFloat(*p.Min, 'f', -1, 64)
	}
	if p.Max != nil {
		c.Max = strconv.FormatFloat(*p.Max, 'f', -1, 64)
	}
	switch p.Type {
	case llm.TypeNumber:
		c.Kind, c.Step = "number", "any"
	case llm.TypeInteger:
		c.Kind, c.Step = "integer", "1"
	case llm.TypeBoolean:
		c.Kind = "bool"
	case llm.TypeEnum:
		c.Kind = "enum"
	case llm.TypeStringOrArray, llm.TypeStringArray:
		c.Kind = "stop"
		if c.MaxItems == 0 {
			c.MaxItems = 4
		}
	case llm.TypeEnumOrObject:
		c.Kind = "tool_choice"
	case llm.TypeObject, llm.TypeArray:
		c.Kind = "json"
		if p.Name == "response_format" {
			c.Kind = "response_format"
		}
		if c.Placeholder == "provider default" {
			c.Placeholder = "JSON, provider default"
		}
	default:
		c.Kind = "string"
	}
	fitSteps(&c, p)
	return c
}

// modelHint says what is known of a model in one line.
func modelHint(m llm.Model) string {
	var parts []string
	if m.Reasoning {
		r := "reasoning"
		if len(m.ReasoningEfforts) > 0 {
			r += " (" + strings.Join(m.ReasoningEfforts, ", ") + ")"
		}
		parts = append(parts, r)
	}
	if m.ContextLength > 0 {
		parts = append(parts, humanTokens(m.ContextLength)+" context")
	}
	if m.Priced() {
		parts = append(parts, fmt.Sprintf("$%g/M in, $%g/M out", m.PromptPrice, m.CompletionPrice))
	}
	return strings.Join(parts, " · ")
}

func humanTokens(n int) string {
	if n >= 1000 {
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}
