package llm

import "strings"

// A provider that echoes the key back into the answer (a misconfigured
// proxy, a model shown its own request, a prompt injection asking for
// it) must not put it in front of users: Knobs shows output live, keeps
// it in history and exports it. The stream replaces the key with "***"
// in every text it hands out, so everything downstream sees redacted
// text only. Text arrives in fragments, and the key may be cut between
// two: a filter per text (a choice's content, its reasoning, a tool
// call's arguments) holds back a tail that could be the start of the key
// until the next fragment says whether it is, and lets it go when the
// text ends.

// keyFilter redacts key from one text arriving in fragments.
type keyFilter struct {
	held string // a tail that is a proper prefix of the key
}

// feed returns fragment text with the key redacted, less a tail that may
// be the start of the key, which the next feed or flush returns.
func (f *keyFilter) feed(key, text string) string {
	s := text
	if f.held != "" {
		s, f.held = f.held+text, ""
	}
	if strings.Contains(s, key) {
		s = strings.ReplaceAll(s, key, "***")
	}
	if k := keyPrefixAtEnd(s, key); k > 0 {
		s, f.held = s[:len(s)-k], s[len(s)-k:]
	}
	return s
}

// flush returns what is held back: the text ended without completing
// the key.
func (f *keyFilter) flush() string {
	h := f.held
	f.held = ""
	return h
}

// keyPrefixAtEnd returns the length of the longest tail of s that is a
// proper prefix of key, or 0. Only the last len(key)-1 bytes can be.
func keyPrefixAtEnd(s, key string) int {
	for i := max(0, len(s)-len(key)+1); i < len(s); i++ {
		j := strings.IndexByte(s[i:], key[0])
		if j < 0 {
			return 0
		}
		i += j
		if strings.HasPrefix(key, s[i:]) {
			return len(s) - i
		}
	}
	return 0
}
