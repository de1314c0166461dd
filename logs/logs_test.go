package logs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"knobs/logs"
)

func TestValidRequestID(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want bool
	}{
		{"abc-123", true},
		{"lb:7f3a.42_trace", true},
		{strings.Repeat("a", logs.MaxRequestIDLen), true},
		{"", false},
		{strings.Repeat("a", logs.MaxRequestIDLen+1), false},
		{"has space", false},
		{"line\nbreak", false},
		{`quote"`, false},
		{"naïve", false},
	} {
		if got := logs.ValidRequestID(tt.id); got != tt.want {
			t.Errorf("ValidRequestID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
	if id := logs.NewRequestID(); !logs.ValidRequestID(id) || len(id) != 24 || id == logs.NewRequestID() {
		t.Errorf("NewRequestID() = %q", id)
	}
}

// A line logged with a request's context carries its id, in JSON and in
// text, through With; one without carries none.
func TestLinesCarryTheRequestID(t *testing.T) {
	var buf bytes.Buffer
	log := logs.New(&buf, logs.FormatJSON).With("component", "test")
	ctx := logs.WithRequestID(context.Background(), "req-1")
	log.InfoContext(ctx, "with")
	log.Info("without")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var with, without map[string]any
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &with) != nil || json.Unmarshal([]byte(lines[1]), &without) != nil {
		t.Fatalf("log: %q", buf.String())
	}
	if with["request_id"] != "req-1" || with["component"] != "test" {
		t.Errorf("line with the context: %v", with)
	}
	if _, ok := without["request_id"]; ok {
		t.Errorf("line without the context: %v", without)
	}

	buf.Reset()
	text := logs.WithRequests(slog.New(slog.NewTextHandler(&buf, nil)))
	text.WarnContext(ctx, "plain")
	if !strings.Contains(buf.String(), "request_id=req-1") {
		t.Errorf("text line: %q", buf.String())
	}
	if logs.WithRequests(text) != text {
		t.Error("WithRequests wrapped a logger twice")
	}
}
