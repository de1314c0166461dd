package llm

// The fallback lists below are what Knobs knows of each dialect's models
// without asking the provider (offline, or no key yet). They were current in
// late 2026; a provider's own /v1/models answer always wins over them.
// Prices are USD per million tokens, from the providers' price pages.
// Tools and JSONSchema are set for every model below: Cerebras, xAI and the
// simulator take function tools and json_schema response formats on all of
// them (the providers' docs, late 2026).

// KnownModels is the built-in list of a dialect's models, used when the
// provider cannot be asked (offline or keyless). OpenAI-compatible servers
// have no list: their models are whatever the server serves.
func KnownModels(d Dialect) []Model {
	var ms []Model
	switch d {
	case DialectCerebras:
		ms = cerebrasModels()
	case DialectXAI:
		ms = xaiModels()
	case DialectSim:
		ms = simModels()
	default:
		return nil
	}
	for i := range ms {
		ms[i].Source = "fallback"
		ms[i].Tools, ms[i].JSONSchema = true, true
	}
	return ms
}

// LookupModel finds a model of the dialect's fallback list by id or by one
// of the aliases the provider accepts for it (xAI's "grok-4" is
// "grok-4-0709").
func LookupModel(d Dialect, id string) (Model, bool) {
	if canonical, ok := modelAliases(d)[id]; ok {
		id = canonical
	}
	for _, m := range KnownModels(d) {
		if m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

func cerebrasModels() []Model {
	return []Model{
		{
			// The safe default: the one id that survived the 2026 retirements
			// of the llama-*, qwen-3-* and zai-glm-* families.
			ID:               "gpt-oss-120b",
			OwnedBy:          "openai",
			ContextLength:    131072,
			Reasoning:        true,
			ReasoningEfforts: []string{"low", "medium", "high"},
			PromptPrice:      0.25,
			CompletionPrice:  0.69,
		},
		{
			// Kept because the seeds use it in their examples; it may have
			// been retired with the other Llama ids, in which case Cerebras
			// answers 404 model_not_found and the user is told so.
			ID:              "llama3.1-8b",
			OwnedBy:         "Meta",
			ContextLength:   32768,
			PromptPrice:     0.10,
			CompletionPrice: 0.10,
		},
	}
}

func xaiModels() []Model {
	// xAI's reasoning models take no reasoning_effort except grok-3-mini
	// (low or high); sending it to the others is a 400.
	return []Model{
		{ID: "grok-4-0709", OwnedBy: "xai", ContextLength: 256000, Reasoning: true,
			PromptPrice: 3, CompletionPrice: 15, CachedPrice: 0.75},
		{ID: "grok-4-1-fast-reasoning", OwnedBy: "xai", ContextLength: 2000000, Reasoning: true,
			PromptPrice: 0.20, CompletionPrice: 0.50, CachedPrice: 0.05},
		{ID: "grok-4-1-fast-non-reasoning", OwnedBy: "xai", ContextLength: 2000000,
			PromptPrice: 0.20, CompletionPrice: 0.50, CachedPrice: 0.05},
		{ID: "grok-4-fast-reasoning", OwnedBy: "xai", ContextLength: 2000000, Reasoning: true,
			PromptPrice: 0.20, CompletionPrice: 0.50, CachedPrice: 0.05},
		{ID: "grok-4-fast-non-reasoning", OwnedBy: "xai", ContextLength: 2000000,
			PromptPrice: 0.20, CompletionPrice: 0.50, CachedPrice: 0.05},
		{ID: "grok-code-fast-1", OwnedBy: "xai", ContextLength: 256000, Reasoning: true,
			PromptPrice: 0.20, CompletionPrice: 1.50, CachedPrice: 0.02},
		{ID: "grok-3-mini", OwnedBy: "xai", ContextLength: 131072, Reasoning: true,
			ReasoningEfforts: []string{"low", "high"},
			PromptPrice:      0.30, CompletionPrice: 0.50, CachedPrice: 0.075},
		{ID: "grok-3", OwnedBy: "xai", ContextLength: 131072,
			PromptPrice: 3, CompletionPrice: 15, CachedPrice: 0.75},
	}
}

func simModels() []Model {
	// The simulator (llm/sim) is free and offline. sim-fast streams about
	// 2,000 tokens/s, sim-reasoning about 1,000, sim-slow about 20 (for
	// trying Stop), and sim-flaky fails mid-stream on purpose. It clamps
	// max tokens to its own limits instead of refusing them, so no
	// MaxOutput is given here.
	//
	// sim-reasoning carries a made-up price, the same as a mid-range
	// hosted reasoning model's, so that cost estimates, cost columns and
	// "lowest cost" can be tried and tested offline: no money is involved,
	// and the other simulated models stay unpriced ("no price known").
	return []Model{
		{ID: "sim-fast", OwnedBy: "knobs", ContextLength: 131072},
		{ID: "sim-reasoning", OwnedBy: "knobs", ContextLength: 131072, Reasoning: true,
			ReasoningEfforts: []string{"low", "medium", "high"},
			PromptPrice:      0.5, CompletionPrice: 2},
		{ID: "sim-slow", OwnedBy: "knobs", ContextLength: 131072},
		{ID: "sim-flaky", OwnedBy: "knobs", ContextLength: 131072},
	}
}

func modelAliases(d Dialect) map[string]string {
	if d != DialectXAI {
		return nil
	}
	return map[string]string{
		"grok-4":             "grok-4-0709",
		"grok-4-latest":      "grok-4-0709",
		"grok-3-latest":      "grok-3",
		"grok-3-mini-latest": "grok-3-mini",
		"grok-code-fast":     "grok-code-fast-1",
	}
}
