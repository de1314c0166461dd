package llm

import (
	"slices"
	"testing"
)

func TestKnownModels(t *testing.T) {
	for _, d := range []Dialect{DialectCerebras, DialectXAI, DialectOpenAI, DialectSim} {
		seen := map[string]bool{}
		for _, m := range KnownModels(d) {
			if m.ID == "" || seen[m.ID] {
				t.Errorf("%s: empty or duplicate id %q", d, m.ID)
			}
			seen[m.ID] = true
			if m.Source != "fallback" {
				t.Errorf("%s %s: Source = %q, want fallback", d, m.ID, m.Source)
			}
			if len(m.ReasoningEfforts) > 0 && !m.Reasoning {
				t.Errorf("%s %s: reasoning efforts on a model that does not reason", d, m.ID)
			}
			if m.ContextLength <= 0 {
				t.Errorf("%s %s: no context length", d, m.ID)
			}
		}
	}
	if got := KnownModels(DialectOpenAI); len(got) != 0 {
		t.Errorf("openai fallback list = %v, want empty", got)
	}
	if got := KnownModels("nope"); got != nil {
		t.Errorf("unknown dialect list = %v, want nil", got)
	}
}

func TestKnownModelsLookup(t *testing.T) {
	tests := []struct {
		d         Dialect
		id        string
		wantID    string
		reasoning bool
		efforts   []string
	}{
		{DialectCerebras, "gpt-oss-120b", "gpt-oss-120b", true, []string{"low", "medium", "high"}},
		{DialectCerebras, "llama3.1-8b", "llama3.1-8b", false, nil},
		{DialectXAI, "grok-3-mini", "grok-3-mini", true, []string{"low", "high"}},
		{DialectXAI, "grok-4", "grok-4-0709", true, nil},
		{DialectXAI, "grok-4-latest", "grok-4-0709", true, nil},
		{DialectXAI, "grok-code-fast-1", "grok-code-fast-1", true, nil},
		{DialectXAI, "grok-4-1-fast-non-reasoning", "grok-4-1-fast-non-reasoning", false, nil},
		{DialectXAI, "grok-3", "grok-3", false, nil},
		{DialectSim, "sim-fast", "sim-fast", false, nil},
		{DialectSim, "sim-slow", "sim-slow", false, nil},
		{DialectSim, "sim-flaky", "sim-flaky", false, nil},
		{DialectSim, "sim-reasoning", "sim-reasoning", true, []string{"low", "medium", "high"}},
	}
	for _, tt := range tests {
		m, ok := LookupModel(tt.d, tt.id)
		if !ok {
			t.Errorf("LookupModel(%s, %s) not found", tt.d, tt.id)
			continue
		}
		if m.ID != tt.wantID || m.Reasoning != tt.reasoning || !slices.Equal(m.ReasoningEfforts, tt.efforts) {
			t.Errorf("LookupModel(%s, %s) = %s reasoning=%v efforts=%v, want %s %v %v",
				tt.d, tt.id, m.ID, m.Reasoning, m.ReasoningEfforts, tt.wantID, tt.reasoning, tt.efforts)
		}
	}
	for _, miss := range []struct {
		d  Dialect
		id string
	}{{DialectCerebras, "grok-4"}, {DialectXAI, "gpt-oss-120b"}, {DialectOpenAI, "gpt-4o"}, {DialectSim, ""}} {
		if _, ok := LookupModel(miss.d, miss.id); ok {
			t.Errorf("LookupModel(%s, %q) found, want not", miss.d, miss.id)
		}
	}
}

func TestKnownModelsPrices(t *testing.T) {
	// The paid providers' fallback entries carry prices, so that a run's
	// cost can be estimated offline.
	for _, d := range []Dialect{DialectCerebras, DialectXAI} {
		for _, m := range KnownModels(d) {
			if m.PromptPrice <= 0 || m.CompletionPrice <= 0 {
				t.Errorf("%s %s: no price", d, m.ID)
			}
		}
	}
}

func TestKnownModelsNotShared(t *testing.T) {
	a := KnownModels(DialectCerebras)
	a[0].ReasoningEfforts[0] = "changed"
	if b, _ := LookupModel(DialectCerebras, a[0].ID); b.ReasoningEfforts[0] == "changed" {
		t.Fatal("KnownModels returns shared slices")
	}
}
