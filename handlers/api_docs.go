package handlers

import (
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"

	"knobs/views"
)

// ShowAPIDocsPage answers GET /api: the REST API's documentation, made
// from doc, the same document GET /api/v1/openapi.json serves, so that
// the page tells what the server does. Anyone may read it; a signed-in
// user also gets a Try it form on every operation.
func (h *Handler) ShowAPIDocsPage(doc *huma.OpenAPI, documentURL string) fiber.Handler {
	var once sync.Once
	var docs views.APIDocs
	return func(c *fiber.Ctx) error {
		// Made on first use: every operation is registered by then.
		once.Do(func() { docs = apiDocsOf(doc, documentURL) })
		p := h.page(c, "API", "api")
		return Render(c, fiber.StatusOK, views.APIDocsPage(views.APIDocsView{
			Page: p, Origin: c.BaseURL(), TryIt: p.User != nil, Docs: docs,
		}))
	}
}

// methodOrder is the order a path's operations are listed in.
var methodOrder = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions, http.MethodTrace}

// apiDocsOf is what the docs page shows of doc: its operations grouped
// by their first tag, the tags in the document's order and then by name,
// each tag's operations by path and method.
func apiDocsOf(doc *huma.OpenAPI, documentURL string) views.APIDocs {
	out := views.APIDocs{DocumentURL: documentURL}
	if doc.Info != nil {
		out.Title, out.Version, out.Description = doc.Info.Title, doc.Info.Version, doc.Info.Description
	}
	if doc.Components != nil {
		names := make([]string, 0, len(doc.Components.SecuritySchemes))
		for name := range doc.Components.SecuritySchemes {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			sc := doc.Components.SecuritySchemes[name]
			kind := sc.Type
			switch {
			case sc.Scheme != "":
				kind += " " + sc.Scheme
			case sc.In != "":
				kind += " in " + sc.In + " " + sc.Name
			}
			out.Auth = append(out.Auth, views.APIAuth{Name: name, Kind: kind, Description: sc.Description})
		}
	}
	prefix := ""
	if len(doc.Servers) > 0 {
		prefix = strings.TrimSuffix(doc.Servers[0].URL, "/")
	}
	out.Prefix = prefix
	s := newSchemaDocs(doc)

	paths := make([]string, 0, len(doc.Paths))
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	byTag := map[string][]views.APIOperation{}
	for _, path := range paths {
		item := doc.Paths[path]
		for _, method := range methodOrder {
			op := operationOf(item, method)
			if op == nil || op.Hidden {
				continue
			}
			tag := "Other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			byTag[tag] = append(byTag[tag], s.operation(method, serverOf(op, prefix)+path, op))
		}
	}

	var tags []string
	for _, t := range doc.Tags {
		if _, ok := byTag[t.Name]; ok && !slices.Contains(tags, t.Name) {
			tags = append(tags, t.Name)
		}
	}
	var rest []string
	for t := range byTag {
		if !slices.Contains(tags, t) {
			rest = append(rest, t)
		}
	}
	sort.Strings(rest)
	for _, t := range append(tags, rest...) {
		out.Groups = append(out.Groups, views.APIGroup{Tag: t, Anchor: "tag-" + anchorOf(t), Operations: byTag[t]})
	}
	return out
}

// serverOf is where op's path starts: its own server when it has one
// (a voting link's calls are at the site's root), else the document's
// (prefix). A server's closing slash is not doubled before the path.
func serverOf(op *huma.Operation, prefix string) string {
	if len(op.Servers) > 0 {
		return strings.TrimSuffix(op.Servers[0].URL, "/")
	}
	return prefix
}

// operationOf is item's operation for method, nil when it has none.
func operationOf(item *huma.PathItem, method string) *huma.Operation {
	switch method {
	case http.MethodGet:
		return item.Get
	case http.MethodPost:
		return item.Post
	case http.MethodPut:
		return item.Put
	case http.MethodPatch:
		return item.Patch
	case http.MethodDelete:
		return item.Delete
	case http.MethodHead:
		return item.Head
	case http.MethodOptions:
		return item.Options
	case http.MethodTrace:
		return item.Trace
	}
	return nil
}

// anchorOf makes a tag's name a fragment: letters and digits, the rest
// dashes.
func anchorOf(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}
