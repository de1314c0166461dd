package handlers

import "knobs/llm"

// playgroundState is what the playground keeps per user: the spec being
// edited and, when it came from a preset, which one and which version,
// with the values of its variables.
type playgroundState struct {
	llm.RunSpec
	PresetID      int64             `json:"preset_id,omitempty"`
	PresetVersion int               `json:"preset_version,omitempty"`
	PresetName    string            `json:"preset_name,omitempty"`
	Variables     map[string]string `json:"variables,omitempty"`
}
