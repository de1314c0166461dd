// Package markdown turns model output into safe HTML: CommonMark and GFM
// with goldmark, code highlighted by chroma into CSS classes, and the
// result sanitized by bluemonday, since model output is untrusted text.
package markdown

import (
	"bytes"
	"regexp"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// Renderer renders Markdown to sanitized HTML; it is safe for concurrent use.
type Renderer struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

// New builds a Renderer.
func New() *Renderer {
	md := goldmark.New(
		goldmark.WithExtensions(
			extension.GFM,
			highlighting.NewHighlighting(
				highlighting.WithFormatOptions(chromahtml.WithClasses(true), chromahtml.ClassPrefix("hl-")),
				highlighting.WithGuessLanguage(false),
			),
		),
		// Raw HTML in model output is shown as text, never as markup.
		goldmark.WithRendererOptions(
			html.WithHardWraps(),
			renderer.WithNodeRenderers(util.Prioritized(htmlAsText{}, 100), util.Prioritized(imageAsLink{}, 100)),
		),
	)
	policy := bluemonday.UGCPolicy()
	policy.AllowAttrs("class").Matching(regexp.MustCompile(`^[a-zA-Z0-9 _-]+$`)).OnElements("span", "code", "pre", "div", "a")
	policy.RequireNoFollowOnLinks(true)
	policy.AddTargetBlankToFullyQualifiedLinks(true)
	return &Renderer{md: md, policy: policy}
}

// Render returns src as sanitized HTML. Malformed Markdown still renders:
// goldmark never fails on input, only on a broken writer.
func (r *Renderer) Render(src string) string {
	var buf bytes.Buffer
	if err := r.md.Convert([]byte(src), &buf); err != nil {
		return "<pre>" + r.policy.Sanitize(src) + "</pre>"
	}
	return r.policy.Sanitize(buf.String())
}

var (
	cssOnce sync.Once
	css     string
)

// CSS is the stylesheet for highlighted code: a light style, and a dark
// one under prefers-color-scheme.
func CSS() string {
	cssOnce.Do(func() {
		var b strings.Builder
		f := chromahtml.New(chromahtml.WithClasses(true), chromahtml.ClassPrefix("hl-"))
		writeStyle(&b, f, styles.Get("github"))
		b.WriteString("@media (prefers-color-scheme: dark) {\n")
		writeStyle(&b, f, styles.Get("github-dark"))
		b.WriteString("}\n")
		css = b.String()
	})
	return css
}

func writeStyle(b *strings.Builder, f *chromahtml.Formatter, s *chroma.Style) {
	var buf bytes.Buffer
	if err := f.WriteCSS(&buf, s); err != nil {
		return
	}
	// Scope to rendered output so the chroma background does not fight ours.
	for _, line := range strings.Split(buf.String(), "\n") {
		if i := strings.Index(line, "*/ "); strings.HasPrefix(line, "/*") && i > 0 {
			line = line[i+3:]
		}
		if strings.HasPrefix(line, ".hl-") {
			b.WriteString(".md " + line + "\n")
		}
	}
}
