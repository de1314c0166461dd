package views

import (
	"slices"
	"strings"
	"unicode/utf8"

	"knobs/field"
)

// errorsUnder lists the messages of the fields under prefix
// ("variants[1]."), each led by the rest of its field's name, in order.
func errorsUnder(errs field.Errors, prefix string) []string {
	var out []string
	for k, msg := range errs {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out = append(out, rest+": "+msg)
		}
	}
	slices.Sort(out)
	return out
}

func boolAttr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// clipText cuts s to n characters with an ellipsis.
func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// gradeMark is a grade's kind as a mark that reads without colour.
func gradeMark(kind string) string {
	switch kind {
	case "pass":
		return "✓"
	case "fail":
		return "✗"
	}
	return "⚠"
}
