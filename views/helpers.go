package views

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

func initial(name string) string {
	r, _ := utf8.DecodeRuneInString(name)
	if r == utf8.RuneError {
		return "?"
	}
	return string(unicode.ToUpper(r))
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "—"
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// audienceLabel names who a share link is for.
func audienceLabel(audience string) string {
	if audience == "public" {
		return "Public link"
	}
	return "Team link"
}

func revokePath(id int64) string {
	if id == 0 {
		return ""
	}
	return "/shares/" + itoa64(id) + "/revoke"
}

func groupSharePath(group int64) string {
	if group == 0 {
		return ""
	}
	return "/groups/" + itoa64(group) + "/shares"
}
