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
		{"script is dropped", "hello <script>alert(1)</script>", []string{"hello"}, []string{"<script", "alert(1)</script>"}},
		{"event handler is dropped", `<img src=x onerror="alert(1)">`, nil, []string{"onerror"}},
		{"javascript link is dropped", "[x](javascript:alert(1))", nil, []string{"javascript:"}},
		{"code is highlighted with classes", "```go\nfunc main() {}\n```", []string{`class="hl-`, "main"}, []string{"style="}},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", []string{"<table>", "<td>1</td>"}, nil},
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

func TestCSSHasLightAndDark(t *testing.T) {
	css := CSS()
	if !strings.Contains(css, ".md .hl-") || !strings.Contains(css, "prefers-color-scheme: dark") {
		t.Fatalf("CSS() lacks scoped rules or the dark variant:\n%.400s", css)
	}
}
