package handlers

import (
	"testing"

	"knobs/llm"
)

func TestPanelStepsFitEachRange(t *testing.T) {
	chat := map[string]llm.Param{}
	for _, p := range llm.Params(llm.DialectSim, llm.EndpointChat) {
		chat[p.Name] = p
	}
	completion := map[string]llm.Param{}
	for _, p := range llm.Params(llm.DialectXAI, llm.EndpointCompletion) {
		completion[p.Name] = p
	}
	tests := []struct {
		param         llm.Param
		nudge, lo, hi string // the arrows' step and the slider's range; "" for none
		why           string
	}{
		{chat["temperature"], "0.1", "0", "2", "0 to 2: ArrowUp on 0.7 gives 0.8"},
		{chat["top_p"], "0.05", "0", "1", "0 to 1"},
		{chat["frequency_penalty"], "0.1", "-2", "2", "-2 to 2"},
		{chat["top_logprobs"], "1", "0", "20", "an integer steps by 1"},
		{chat["seed"], "", "", "", "unbounded: typed, not slid"},
		{chat["n"], "", "", "", "no maximum"},
		{completion["seed"], "", "", "", "int32 bounds are too wide for a slider"},
	}
	for _, tt := range tests {
		c := paramControl(tt.param)
		if c.Nudge != tt.nudge || c.SliderMin != tt.lo || c.SliderMax != tt.hi {
			t.Errorf("%s (%s): nudge %q, slider %q to %q; want %q, %q to %q", tt.param.Name, tt.why, c.Nudge, c.SliderMin, c.SliderMax, tt.nudge, tt.lo, tt.hi)
		}
	}
	// Number boxes accept any value (0.75 is valid); arrows use Nudge.
	if c := paramControl(chat["temperature"]); c.Step != "any" {
		t.Errorf("temperature's box has step %q, want any", c.Step)
	}
}

func TestMaxTokensSliderReachesTheModelsLimit(t *testing.T) {
	p, _ := llm.FindParam(llm.DialectSim, llm.EndpointChat, "max_completion_tokens")
	for _, tt := range []struct {
		model     llm.Model
		nudge, hi string
	}{
		{llm.Model{ContextLength: 131072}, "1024", "131072"},
		{llm.Model{ContextLength: 131072, MaxOutput: 8192}, "64", "8192"},
		{llm.Model{ContextLength: 2000000}, "8192", "2000000"},
		{llm.Model{}, "", ""}, // nothing known: no slider
	} {
		c := paramControl(p)
		fitTokenSteps(&c, tt.model)
		if c.Nudge != tt.nudge || c.SliderMax != tt.hi {
			t.Errorf("for %+v: nudge %q up to %q, want %q up to %q", tt.model, c.Nudge, c.SliderMax, tt.nudge, tt.hi)
		}
	}
	seed, _ := llm.FindParam(llm.DialectSim, llm.EndpointChat, "seed")
	c := paramControl(seed)
	fitTokenSteps(&c, llm.Model{ContextLength: 131072})
	if c.SliderMax != "" {
		t.Errorf("seed got a token slider up to %s", c.SliderMax)
	}
}
