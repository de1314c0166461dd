package views

import (
	"slices"
	"strconv"
	"strings"

	"knobs/field"
)

// arenaCoord is a place on an interval's drawing, 0 to 100.
func arenaCoord(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// arenaAudience says who votes in an arena.
func arenaAudience(a string) string {
	if a == "team" {
		return "team members vote"
	}
	return "anyone with the link votes"
}

// arenaSlotMessages are the messages of a contestant's slot, each with
// the field it names when it names one.
func arenaSlotMessages(errs field.Errors, prefix string) []string {
	var out []string
	for k, msg := range errs {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			if rest = strings.TrimPrefix(rest, "."); rest != "" {
				msg = rest + ": " + msg
			}
			out = append(out, msg)
		}
	}
	slices.Sort(out)
	return out
}
