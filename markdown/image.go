package markdown

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// imageAsLink renders a Markdown image as a link to it ("image: alt —
// url") instead of an <img>. Model output is untrusted, and an <img> is
// fetched by every viewer's browser, with their cookies when it points at
// Knobs itself: a crafted answer could make each viewer download
// /history/export. A link is fetched only by a viewer who clicks it.
type imageAsLink struct{}

func (imageAsLink) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindImage, renderImage)
}

func renderImage(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	img := n.(*ast.Image)
	label := "image"
	if alt := plainText(img, source); alt != "" {
		label += ": " + alt
	}
	label += " — " + string(img.Destination)
	// A link inside a link is not HTML, and a dangerous URL is no link:
	// both are shown as text only.
	if insideLink(img) || html.IsDangerousURL(img.Destination) {
		_, _ = w.WriteString(`<span class="md-image">`)
		_, _ = w.Write(util.EscapeHTML([]byte(label)))
		_, _ = w.WriteString(`</span>`)
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.WriteString(`<a class="md-image" href="`)
	_, _ = w.Write(util.EscapeHTML(util.URLEscape(img.Destination, true)))
	_, _ = w.WriteString(`">`)
	_, _ = w.Write(util.EscapeHTML([]byte(label)))
	_, _ = w.WriteString(`</a>`)
	return ast.WalkSkipChildren, nil
}

// insideLink reports whether n is within a link or an autolink.
func insideLink(n ast.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Kind() == ast.KindLink || p.Kind() == ast.KindAutoLink {
			return true
		}
	}
	return false
}

// plainText is the text of n's descendants, as an image's alt text is.
func plainText(n ast.Node, source []byte) string {
	var b []byte
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b = append(b, t.Segment.Value(source)...)
			if t.SoftLineBreak() || t.HardLineBreak() {
				b = append(b, ' ')
			}
		case *ast.String:
			b = append(b, t.Value...)
		}
		return ast.WalkContinue, nil
	})
	return string(b)
}
