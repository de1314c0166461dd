package llm

import (
	"strings"
	"testing"
)

func TestCheckOutput(t *testing.T) {
	schema := `{"response_format":{"type":"json_schema","json_schema":{"name":"c","schema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}}}`
	tests := []struct {
		name, body, output string
		wantNil            bool
		valid              bool
		msg                string
	}{
		{"no response_format", `{"model":"m"}`, "hi", true, false, ""},
		{"text format", `{"response_format":{"type":"text"}}`, "hi", true, false, ""},
		{"json_object valid", `{"response_format":{"type":"json_object"}}`, `{"a":1}`, false, true, "valid JSON"},
		{"json_object broken", `{"response_format":{"type":"json_object"}}`, `{"a":`, false, false, "not valid JSON"},
		{"schema match", schema, `{"n":3}`, false, true, "matches the schema"},
		{"schema mismatch names the problem", schema, `{"n":"three"}`, false, false, "does not match the schema"},
		{"schema missing required", schema, `{}`, false, false, "n"},
		{"answer nested too deep", schema, strings.Repeat("[", 5000) + strings.Repeat("]", 5000), false, false, "nested deeper than 64 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckOutput([]byte(tt.body), tt.output)
			if tt.wantNil {
				if got != nil {
					t.Fatalf("CheckOutput = %+v, want nil", got)
				}
				return
			}
			if got == nil || got.Valid != tt.valid || !strings.Contains(got.Message, tt.msg) {
				t.Fatalf("CheckOutput = %+v, want valid=%v and a message containing %q", got, tt.valid, tt.msg)
			}
		})
	}
}
