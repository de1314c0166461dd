package handlers

import (
	"strings"
	"time"
	"unicode/utf8"

	"knobs/db"
	"knobs/field"
)

// TokenNameMax bounds a token's name, in characters.
const TokenNameMax = 100

// TokenDays are the lifetimes a token may have, in days; 0 is never
// expiring.
var TokenDays = []int{30, 90, 365, 0}

// newTokenInput checks what a new token is asked with, from the settings
// form or the API, and returns it for the store or what is wrong with
// each field.
func (h *Handler) newTokenInput(user int64, name, scope string, days int) (db.NewTokenInput, field.Errors) {
	fe := field.Errors{}
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		fe.Add("name", "Give the token a name, such as the script or machine that will use it.")
	case utf8.RuneCountInString(name) > TokenNameMax:
		fe.Add("name", "Use at most 100 characters.")
	}
	if scope != db.ScopeRead && scope != db.ScopeWrite {
		fe.Add("scope", "Choose read or write.")
	}
	known := false
	for _, d := range TokenDays {
		known = known || d == days
	}
	if !known {
		fe.Add("expires_in_days", "Choose 30, 90 or 365 days, or never.")
	}
	in := db.NewTokenInput{User: user, Name: name, Scope: scope}
	if days > 0 {
		in.Expires = h.now().Add(time.Duration(days) * 24 * time.Hour)
	}
	return in, fe
}
