package handlers

import "knobs/llm"

// playgroundState is what the playground keeps per user: the spec being
// edited and, when it came from a preset, which one and which version,
// with the values of its variables.
type playgroundState struct {
	llm.RunSpec
	PresetID      int64  `json:"preset_id,omitempty"`
	PresetVersion int    `json:"preset_version,omitempty"`
	PresetName    string `json:"preset_name,omitempty"`
	// PresetLabel is the label the preset was opened at ("production"),
	// "" when it was opened at its current version; a save clears it.
	PresetLabel string            `json:"preset_label,omitempty"`
	Variables   map[string]string `json:"variables,omitempty"`
}

// playgroundSaved is what is stored for the user's playground: the setup,
// and around it what the page needs to pick up where the user left it.
type playgroundSaved struct {
	playgroundState
	// LastRun is the run whose answer the output showed, shown again
	// when the user comes back.
	LastRun int64 `json:"last_run,omitempty"`
	// Baseline fingerprints the setup as last run, loaded or saved, and
	// Ran the setup as last run; the page compares its editor with them.
	Baseline string `json:"baseline,omitempty"`
	Ran      string `json:"ran,omitempty"`
	// Unsaved says the editor differs from Baseline: opening something
	// else then asks before it replaces the user's work.
	Unsaved bool `json:"unsaved,omitempty"`
	// Pending is a setup opened while the editor had unsaved changes,
	// waiting for the user to replace theirs with it or keep theirs.
	Pending *playgroundOffer `json:"pending,omitempty"`
}

// playgroundOffer is a setup offered to the playground: a run's, a
// preset's or a shared link's.
type playgroundOffer struct {
	State playgroundState `json:"state"`
	// Label names what it is, for the question: "run 12", "the preset Tides".
	Label   string `json:"label"`
	LastRun int64  `json:"last_run,omitempty"`
}
