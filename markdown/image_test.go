package markdown

import (
	"strings"
	"testing"
)

// A model's answer is untrusted: an image in it must not make every
// viewer's browser fetch a URL, Knobs' own heavy endpoints included. It
// is shown as a link the viewer may choose to open.
func TestImagesAreLinksNotLoads(t *testing.T) {
	r := New()
	tests := []struct {
		name, src string
		want      []string
	}{
		{"own endpoint", "![x](/history/export)", []string{`href="/history/export"`, "image: x — /history/export"}},
		{"other host", `![a cat](https://example.com/cat.png "title")`, []string{`href="https://example.com/cat.png"`, "image: a cat — https://example.com/cat.png", `rel="nofollow`}},
		{"reference image", "![r][1]\n\n[1]: /runs/1/events.txt", []string{`href="/runs/1/events.txt"`, "image: r — /runs/1/events.txt"}},
		{"inside a link", "[![b](/x.png)](/target)", []string{`href="/target"`, "image: b — /x.png"}},
		{"no alt", "![](/y.png)", []string{"image — /y.png"}},
		{"javascript url stays text", "![j](javascript:alert(1))", []string{"image: j"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Render(tt.src)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Render(%q) = %q, want it to contain %q", tt.src, got, w)
				}
			}
			for _, never := range []string{"<img", "src=", `href="javascript`} {
				if strings.Contains(got, never) {
					t.Errorf("Render(%q) = %q, must not contain %q", tt.src, got, never)
				}
			}
		})
	}
}
