package preset

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"knobs/db"
	"knobs/field"
)

// The rules a preset's fields follow, checked before the store saves one
// (the store keeps what it is given: raw SQL per noun).

// Limits of a preset's fields.
const (
	NameMax        = 100     // runes
	DescriptionMax = 10000   // runes
	TagMax         = 32      // bytes of [a-z0-9_-]
	TagsMax        = 20      // tags on one preset
	SpecMax        = MaxSize // bytes of spec JSON, as an imported file
)

var (
	tagPattern      = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)
	variablePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// ParseTags splits what a user typed in a tags field at commas and
// spaces; NormalizeTags then checks and orders them.
func ParseTags(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
}

// NormalizeTags lowercases, trims, sorts and deduplicates tags, dropping
// empty ones; msg names the first tag that is not 1 to 32 of a-z, 0-9,
// "-" and "_", or says there are too many.
func NormalizeTags(tags []string) (out []string, msg string) {
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		if !tagPattern.MatchString(t) {
			if msg == "" {
				msg = fmt.Sprintf("The tag %q is not 1 to %d of a-z, 0-9, - and _.", t, TagMax)
			}
			continue
		}
		out = append(out, t)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if msg == "" && len(out) > TagsMax {
		msg = fmt.Sprintf("A preset has at most %d tags; this one has %d.", TagsMax, len(out))
	}
	return out, msg
}

// Normalize trims p's name, normalises its tags, makes an empty
// visibility private and nil variables empty, and checks every field
// ("name", "description", "tags", "visibility", "spec", "variables"),
// with messages for the form. Every save of a preset goes through it.
func Normalize(p db.Preset) (db.Preset, field.Errors) {
	errs := field.Errors{}
	p.Name = strings.TrimSpace(p.Name)
	switch n := utf8.RuneCountInString(p.Name); {
	case n == 0:
		errs.Add("name", "Give the preset a name.")
	case n > NameMax:
		errs.Add("name", fmt.Sprintf("The name is at most %d characters; this one has %d.", NameMax, n))
	case !utf8.ValidString(p.Name):
		errs.Add("name", "The name is not valid UTF-8.")
	}
	p.Description = strings.TrimSpace(p.Description)
	if n := utf8.RuneCountInString(p.Description); n > DescriptionMax {
		errs.Add("description", fmt.Sprintf("The description is at most %d characters; this one has %d.", DescriptionMax, n))
	}
	var msg string
	if p.Tags, msg = NormalizeTags(p.Tags); msg != "" {
		errs.Add("tags", msg)
	}
	if p.Visibility == "" {
		p.Visibility = db.PresetPrivate
	}
	if p.Visibility != db.PresetPrivate && p.Visibility != db.PresetTeam {
		errs.Add("visibility", fmt.Sprintf("Visibility is private or team, not %q.", p.Visibility))
	}
	if msg := checkSpec(p.Spec); msg != "" {
		errs.Add("spec", msg)
	}
	if p.Variables == nil {
		p.Variables = map[string]string{}
	}
	names := make([]string, 0, len(p.Variables))
	for name := range p.Variables {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !variablePattern.MatchString(name) {
			errs.Add("variables", fmt.Sprintf("%q is not a variable name: a letter or _, then up to 63 letters, digits or _.", name))
			break
		}
	}
	return p, errs
}

// checkSpec checks what a preset relies on: a RunSpec object with an
// endpoint and a body object. The body itself is llm.Validate's concern.
func checkSpec(spec string) string {
	if len(spec) > SpecMax {
		return fmt.Sprintf("The setup is %d bytes; the limit is %d.", len(spec), SpecMax)
	}
	var s struct {
		Endpoint string          `json:"endpoint"`
		Body     json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return "The setup is not a JSON object with provider, endpoint and body."
	}
	if s.Endpoint != "chat" && s.Endpoint != "completion" {
		return fmt.Sprintf("The endpoint must be chat or completion, not %q.", s.Endpoint)
	}
	var body map[string]json.RawMessage
	if json.Unmarshal(s.Body, &body) != nil || body == nil {
		return "The request body must be a JSON object."
	}
	return ""
}

// LabelMax bounds a label's name, in bytes.
const LabelMax = 32

var labelPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,31}$`)

// LabelName checks a label's name as a user typed it: lowercased and
// trimmed, 1 to 32 of a-z, 0-9, ".", "-" and "_", starting with a letter
// or digit, so that it reads the same in a URL, a shell and a YAML file.
// msg says what is wrong, "" when nothing is.
func LabelName(s string) (name, msg string) {
	name = strings.ToLower(strings.TrimSpace(s))
	if !labelPattern.MatchString(name) {
		return name, "A label is 1 to 32 of a-z, 0-9, \".\", \"-\" and \"_\", starting with a letter or digit, such as production or staging."
	}
	return name, ""
}
