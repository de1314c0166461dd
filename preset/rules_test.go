package preset

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"knobs/db"
)

func TestNormalizeChecksEveryField(t *testing.T) {
	ok := db.Preset{Name: "ok", Spec: `{"provider":"sim","endpoint":"chat","body":{"model":"sim-fast","messages":[]}}`}
	for _, tt := range []struct {
		name  string
		edit  func(*db.Preset)
		field string // "" = valid
	}{
		{"valid", func(p *db.Preset) {}, ""},
		{"empty name", func(p *db.Preset) { p.Name = "   " }, "name"},
		{"name of 101", func(p *db.Preset) { p.Name = strings.Repeat("a", 101) }, "name"},
		{"name of 100 runes", func(p *db.Preset) { p.Name = strings.Repeat("é", 100) }, ""},
		{"tag with a space inside", func(p *db.Preset) { p.Tags = []string{"bad tag"} }, "tags"},
		{"tag with punctuation", func(p *db.Preset) { p.Tags = ParseTags("go, tag!") }, "tags"},
		{"tag of 33", func(p *db.Preset) { p.Tags = []string{strings.Repeat("t", 33)} }, "tags"},
		{"21 tags", func(p *db.Preset) {
			for i := range 21 {
				p.Tags = append(p.Tags, fmt.Sprint("t", i))
			}
		}, "tags"},
		{"visibility", func(p *db.Preset) { p.Visibility = "public" }, "visibility"},
		{"spec not JSON", func(p *db.Preset) { p.Spec = "{" }, "spec"},
		{"spec endpoint", func(p *db.Preset) { p.Spec = `{"provider":"sim","endpoint":"embeddings","body":{}}` }, "spec"},
		{"spec body", func(p *db.Preset) { p.Spec = `{"provider":"sim","endpoint":"chat","body":[1]}` }, "spec"},
		{"variable name", func(p *db.Preset) { p.Variables = map[string]string{"1st": "x"} }, "variables"},
		{"description", func(p *db.Preset) { p.Description = strings.Repeat("d", DescriptionMax+1) }, "description"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := ok
			tt.edit(&p)
			got, errs := Normalize(p)
			if tt.field == "" {
				if !errs.Empty() {
					t.Fatalf("Normalize: %v", errs)
				}
				if got.Visibility != db.PresetPrivate || got.Variables == nil {
					t.Errorf("a valid preset normalised to %+v, want private with empty variables", got)
				}
				return
			}
			if errs[tt.field] == "" || len(errs) != 1 {
				t.Fatalf("Normalize: %v, want a message on %s alone", errs, tt.field)
			}
		})
	}
	tags, msg := NormalizeTags(ParseTags(" Go,llm  go,\tA-b_1 ,,"))
	if msg != "" || !slices.Equal(tags, []string{"a-b_1", "go", "llm"}) {
		t.Errorf("NormalizeTags = %q %q", tags, msg)
	}
}
