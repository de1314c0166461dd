package cli

import (
	"strings"
	"testing"
)

// TestHelpListsFlags: -h of each command prints its usage and flags on
// stdout and exits 0, without a server or a token.
func TestHelpListsFlags(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		flags []string
	}{
		{[]string{"run", "-h"}, []string{"-preset", "-label", "-version", "-var", "-set", "-provider", "-model", "-endpoint", "-system", "-json", "-url", "-token"}},
		{[]string{"presets", "-h"}, []string{"pull", "push", "render", "list"}},
		{[]string{"presets", "pull", "-h"}, []string{"-label", "-version", "-url", "-token"}},
		{[]string{"presets", "push", "--help"}, []string{"-base-version", "-visibility", "-url"}},
		{[]string{"presets", "render", "-h"}, []string{"-label", "-version", "-var"}},
		{[]string{"presets", "list", "-h"}, []string{"-query", "-json"}},
		{[]string{"token", "-h"}, []string{"create", "list", "revoke"}},
		{[]string{"token", "create", "-h"}, []string{"-name", "-scope", "-expires", "-url", "-token"}},
		{[]string{"token", "list", "-h"}, []string{"-url", "-token"}},
		{[]string{"token", "revoke", "-h"}, []string{"-url", "-token"}},
		{[]string{"backup", "-h"}, []string{"-db", "KNOBS_DB"}},
		{[]string{"restore", "-h"}, []string{"-db", "-force", "KNOBS_DB", "before-restore", "integrity"}},
		{[]string{"health", "--help"}, []string{"-timeout", "/healthz", "KNOBS_ADDR"}},
	} {
		var out, errOut strings.Builder
		code := Main(t.Context(), tc.args, func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
		if code != 0 || errOut.Len() != 0 || !strings.HasPrefix(out.String(), "Usage: knobs ") {
			t.Errorf("knobs %s: exit %d, stdout %q, stderr %q", strings.Join(tc.args, " "), code, out.String(), errOut.String())
			continue
		}
		for _, f := range tc.flags {
			if !strings.Contains(out.String(), f) {
				t.Errorf("knobs %s does not list %s:\n%s", strings.Join(tc.args, " "), f, out.String())
			}
		}
	}
}

// TestUsageLists: knobs -h (main's) lists the commands.
func TestUsageListsCommands(t *testing.T) {
	var out strings.Builder
	Usage(&out)
	for _, c := range []string{"serve", "run", "presets", "token", "backup", "restore", "health", "KNOBS_URL", "KNOBS_TOKEN"} {
		if !strings.Contains(out.String(), c) {
			t.Errorf("usage does not list %s:\n%s", c, out.String())
		}
	}
	var errOut strings.Builder
	if code := Main(t.Context(), []string{"frobnicate"}, func(string) string { return "" }, strings.NewReader(""), &out, &errOut); code != exitUsage {
		t.Errorf("an unknown command: exit %d", code)
	}
}
