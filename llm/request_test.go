package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStreamBody(t *testing.T) {
	tests := []struct {
		name         string
		in           string
		includeUsage bool
		want         string
		wantErr      bool
		added        string // the fields Knobs added, comma separated
	}{
		{"adds stream and stream_options at the end", `{"model":"m","temperature":0.70,"messages":[]}`, true,
			`{"model":"m","temperature":0.70,"messages":[],"stream":true,"stream_options":{"include_usage":true}}`, false, "stream,stream_options"},
		{"keeps exact values and order", `{"z":1e2,"a":{"b": [1, 2]},"m":"\u00e9"}`, false,
			`{"z":1e2,"a":{"b": [1, 2]},"m":"\u00e9","stream":true}`, false, "stream"},
		{"user stream_options win", `{"model":"m","stream_options":{"include_usage":false}}`, true,
			`{"model":"m","stream_options":{"include_usage":false},"stream":true}`, false, "stream"},
		{"stream false set by the user is kept: a non-streamed run", `{"stream":false,"model":"m"}`, true,
			`{"stream":false,"model":"m"}`, false, ""},
		{"stream true set by the user is the user's", `{"stream":true,"model":"m"}`, true,
			`{"stream":true,"model":"m","stream_options":{"include_usage":true}}`, false, "stream_options"},
		{"stream null is replaced in place", `{"stream":null,"model":"m"}`, false,
			`{"stream":true,"model":"m"}`, false, "stream"},
		{"stream last with whitespace", "{\"model\":\"m\", \"stream\" : false \n}", false,
			"{\"model\":\"m\", \"stream\" : false \n}", false, ""},
		{"empty object", `{}`, true, `{"stream":true,"stream_options":{"include_usage":true}}`, false, "stream,stream_options"},
		{"pretty body", "{\n  \"model\": \"m\"\n}\n", false, "{\n  \"model\": \"m\",\"stream\":true}\n", false, "stream"},
		{"not an object", `["model"]`, true, "", true, ""},
		{"not JSON", `model=m`, true, "", true, ""},
		{"trailing data", `{"model":"m"} {}`, true, "", true, ""},
		{"unterminated", `{"model":"m"`, true, "", true, ""},
		{"empty", ``, true, "", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, added, err := streamBody([]byte(tt.in), tt.includeUsage)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("streamBody(%q) = %q, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("streamBody(%q)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			if !json.Valid(got) {
				t.Fatalf("result is not valid JSON: %s", got)
			}
			if strings.Join(added, ",") != tt.added {
				t.Fatalf("streamBody(%q) says Knobs added %q, want %q", tt.in, added, tt.added)
			}
		})
	}
}
