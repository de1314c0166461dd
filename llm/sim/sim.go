// Package sim is the offline simulator: a provider that needs no network
// and no key, so the whole of Knobs can be tried and tested offline.
//
// The simulator is an http.Handler speaking the Cerebras wire format
// (chat and text completions, streamed and not, Cerebras' error bodies),
// so tests can use it as the upstream of the real clients. In the product
// the same handler is served in process through Transport, behind the real
// Cerebras-format client.
//
// Output is built from the request: prose about the words of the last user
// message or prompt, JSON that validates against a requested schema, tool
// calls whose arguments validate against the tool's parameters. It is
// deterministic for a given seed and honours the sampling and length knobs.
package sim

import (
	"net/http"
	"time"

	"knobs/llm"
)

// BaseURL is the base URL of the in-process simulator. The .invalid TLD
// guarantees that a request which escapes the in-process transport never
// reaches a real host.
const BaseURL = "http://sim.knobs.invalid"

// NoPacing as Options.TokensPerSecond streams as fast as the reader takes it.
const NoPacing = -1

// Options tune a simulator handler. The zero value is the product default.
type Options struct {
	// TokensPerSecond overrides the per-model speed: 0 keeps each model's
	// profile, a positive value applies to every model, a negative value
	// (NoPacing) removes all waits, including the time to first token.
	TokensPerSecond float64
	// APIKey, when set, is required as "Authorization: Bearer <key>";
	// requests without it get Cerebras' 401 body.
	APIKey string
	// Now stamps "created" and ids; nil means time.Now. A fixed clock makes
	// a seeded response identical byte for byte, ids included.
	Now func() time.Time
}

// Config is the "sim" provider as Knobs runs it by default: the simulator
// in process, at each model's own speed.
func Config() llm.ProviderConfig { return NewConfig(Options{}) }

// NewConfig is the "sim" provider served in process by a handler built
// with opts.
func NewConfig(opts Options) llm.ProviderConfig {
	return llm.ProviderConfig{
		ID:         "sim",
		Name:       "Simulator",
		Dialect:    llm.DialectSim,
		BaseURL:    BaseURL,
		HTTPClient: &http.Client{Transport: Transport(NewHandler(opts))},
	}
}

// Models lists the simulator's models, as GET /v1/models describes them.
func Models() []llm.Model {
	out := make([]llm.Model, 0, len(profiles))
	for _, p := range profiles {
		out = append(out, p.model())
	}
	return out
}

// profile is how one simulated model behaves.
type profile struct {
	id          string
	created     int64
	reasoning   bool
	tps         float64       // output tokens per second
	promptTPS   float64       // prompt tokens processed per second
	queue       time.Duration // fixed wait before the prompt is processed
	minLen      int           // natural answer length range, in tokens
	maxLen      int
	failAfter   int // >0: the stream fails with an error chunk after this many tokens
	contextLen  int
	maxOutput   int
	description string
}

var reasoningEfforts = []string{"low", "medium", "high"}

// profiles is read-only after package initialisation.
var profiles = []profile{
	{id: "sim-fast", created: 1767225600, tps: 2000, promptTPS: 40000, queue: 2 * time.Millisecond,
		minLen: 120, maxLen: 280, contextLen: 131072, maxOutput: 8192,
		description: "about 2,000 tokens/s"},
	{id: "sim-reasoning", created: 1767225600, reasoning: true, tps: 1000, promptTPS: 20000, queue: 5 * time.Millisecond,
		minLen: 100, maxLen: 220, contextLen: 131072, maxOutput: 16384,
		description: "reasons before it answers; reasoning_effort low/medium/high"},
	{id: "sim-slow", created: 1767225600, tps: 20, promptTPS: 2000, queue: 300 * time.Millisecond,
		minLen: 220, maxLen: 420, contextLen: 131072, maxOutput: 4096,
		description: "about 20 tokens/s, for trying Stop"},
	{id: "sim-flaky", created: 1767225600, tps: 200, promptTPS: 10000, queue: 20 * time.Millisecond,
		minLen: 150, maxLen: 260, failAfter: 40, contextLen: 131072, maxOutput: 4096,
		description: "fails with an in-stream error after a few tokens"},
}

func findProfile(id string) (profile, bool) {
	for _, p := range profiles {
		if p.id == id {
			return p, true
		}
	}
	return profile{}, false
}

func (p profile) model() llm.Model {
	m := llm.Model{ID: p.id, OwnedBy: "knobs", ContextLength: p.contextLen, MaxOutput: p.maxOutput, Reasoning: p.reasoning}
	if p.reasoning {
		m.ReasoningEfforts = append([]string(nil), reasoningEfforts...)
	}
	return m
}
