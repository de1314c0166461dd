package markdown

import (
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	r := New()
	tests := []struct {
		name, src string
		want      []string // substrings that must appear
		never     []string // substrings that must not
	}{
		{"heading and list", "# Title\n\n- one\n- two", []string{"<h1", "Title</h1>", "<li>one</li>"}, nil},
		{"script is shown as text", "hello <script>alert(1)</script>", []string{"hello", "&lt;script&gt;"}, []string{"<script"}},
		{"an image with a handler is shown as text", `<img src=x onerror="alert(1)">`, []string{"&lt;img"}, []string{"<img"}},
		{"javascript link is dropped", "[x](javascript:alert(1))", nil, []string{`href="javascript:`}},
		{"code is highlighted with classes", "```go\nfunc main() {}\n```", []string{`class="hl-`, "main"}, []string{"style="}},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", []string{"<table>", "<td>1</td>"}, nil},
		{"inline HTML is shown as text", "Wrap it in a <div> element.", []string{"Wrap it in a &lt;div&gt; element."}, []string{"<div>"}},
		{"an HTML block is shown as text", "<table onclick=\"x()\">\n<tr><td>1</td></tr>\n</table>", []string{"&lt;table"}, []string{"<table", "onclick=\""}},
		{"external links do not follow", "[k](https://example.com)", []string{`rel="nofollow`, `href="https://example.com"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Render(tt.src)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Render(%q) = %q, want it to contain %q", tt.src, got, w)
				}
			}
			for _, n := range tt.never {
				if strings.Contains(got, n) {
					t.Errorf("Render(%q) = %q, must not contain %q", tt.src, got, n)
				}
			}
		})
	}
}

// TestSanitizerStopsWhatGoldmarkLetsThrough feeds the policy HTML that a
// renderer bug could emit, so the test fails if the sanitizer is dropped.
func TestSanitizerStopsWhatGoldmarkLetsThrough(t *testing.T) {
	r := New()
	for _, in := range []string{
		`<p onclick="steal()">x</p>`,
		`<a href="javascript:steal()">x</a>`,
		`<script>steal()</script>`,
		`<img src=x onerror=steal()>`,
		`<span style="position:fixed">x</span>`,
	} {
		out := r.policy.Sanitize(in)
		for _, bad := range []string{"onclick", "javascript:", "<script", "onerror", "style="} {
			if strings.Contains(out, bad) {
				t.Errorf("Sanitize(%q) = %q keeps %q", in, out, bad)
			}
		}
	}
	if got := r.policy.Sanitize(`<span class="hl-k">func</span>`); !strings.Contains(got, `class="hl-k"`) {
		t.Errorf("highlighting classes are stripped: %q", got)
	}
}

func TestCSSHasLightAndDark(t *testing.T) {
	css := CSS()
	if !strings.Contains(css, ".md .hl-") || !strings.Contains(css, "prefers-color-scheme: dark") {
		t.Fatalf("CSS() lacks scoped rules or the dark variant:\n%.400s", css)
	}
}
