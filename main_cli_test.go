package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestHelpListsCommands: knobs -h lists the client commands beside the
// variables, and a word that is no command is refused rather than taken
// for a server start.
func TestHelpListsCommands(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-h"}, envFrom(nil), &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run -h: %v", err)
	}
	for _, c := range []string{"serve", "run", "presets", "token", "backup", "KNOBS_URL", "KNOBS_TOKEN"} {
		if !strings.Contains(out.String(), c) {
			t.Errorf("knobs -h does not list %s:\n%s", c, out.String())
		}
	}
	out.Reset()
	err := run(t.Context(), []string{"frobnicate"}, envFrom(nil), &out)
	if err == nil || !strings.Contains(err.Error(), `unknown command "frobnicate"`) {
		t.Errorf("knobs frobnicate: %v", err)
	}
}
