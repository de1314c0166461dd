package handlers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A line a handler logs while serving a request carries the request's
// id only when it is logged with the request's context (InfoContext and
// the like; see logs.New). This reads the handlers' sources and names
// every h.log.Info/Warn/Error/Debug call in a function that has a request
// (a *fiber.Ctx or a context.Context among its parameters), so that a new
// one is caught here rather than by someone grepping a log for an id.
// Work with no request (prepareArena, started in the background) takes
// neither and may log without a context.
func TestHandlersLogWithTheRequestsContext(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range logsWithoutContext(t, name, string(src)) {
			t.Errorf("%s logs without the request's context: use %sContext(ctx(c), …) or %sContext(ctx, …)", bad.at, bad.call, bad.call)
		}
		checked++
	}
	if checked < 50 {
		t.Fatalf("read %d source files of the handlers, want all of them", checked)
	}
}

// The check itself: what it names and what it lets through.
func TestLogsWithoutContextFindsTheCalls(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"a page's handler", `package handlers
func (h *Handler) A(c *fiber.Ctx) error {
	h.log.Info("signed in", "user", 1)
	h.log.InfoContext(ctx(c), "fine")
	return nil
}`, []string{"h.log.Info"}},
		{"an API operation", `package handlers
func (h *Handler) B(ctx context.Context, in *Input) error {
	h.log.Warn("price set")
	return nil
}`, []string{"h.log.Warn"}},
		{"a goroutine of a request", `package handlers
func (h *Handler) C(c *fiber.Ctx) error {
	go func() { h.log.Error("late") }()
	return nil
}`, []string{"h.log.Error"}},
		{"a copied logger in a stream writer", `package handlers
func (h *Handler) D(c *fiber.Ctx) error {
	log := h.log
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) { log.Error("ended early") })
	return nil
}`, []string{"log.Error"}},
		{"background work", `package handlers
func (h *Handler) prepare(a db.Arena) {
	h.log.Error("preparing")
}`, nil},
		{"other Info methods", `package handlers
func (h *Handler) E(c *fiber.Ctx) error {
	h.runner.Info("not a logger")
	return nil
}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, bad := range logsWithoutContext(t, "x.go", tc.src) {
				got = append(got, bad.call)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("found %q, want %q", got, tc.want)
			}
		})
	}
}

type logCall struct{ at, call string }

// logsWithoutContext returns the calls of Info, Warn, Error or Debug on
// h.log (or a local copy named log) made in a function of src that has a
// request.
func logsWithoutContext(t *testing.T, name, src string) []logCall {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []logCall
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil || !hasRequest(fn.Type) {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			switch sel.Sel.Name {
			case "Info", "Warn", "Error", "Debug":
			default:
				return true
			}
			var recv string
			switch x := sel.X.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && x.Sel.Name == "log" {
					recv = id.Name + ".log"
				}
			case *ast.Ident:
				if x.Name == "log" {
					recv = "log"
				}
			}
			if recv != "" {
				out = append(out, logCall{fset.Position(call.Pos()).String(), recv + "." + sel.Sel.Name})
			}
			return true
		})
	}
	return out
}

// hasRequest reports whether a function takes a *fiber.Ctx or a
// context.Context.
func hasRequest(ft *ast.FuncType) bool {
	for _, p := range ft.Params.List {
		typ := p.Type
		if star, ok := typ.(*ast.StarExpr); ok {
			typ = star.X
		}
		sel, ok := typ.(*ast.SelectorExpr)
		if !ok {
			continue
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "fiber" && sel.Sel.Name == "Ctx" || pkg.Name == "context" && sel.Sel.Name == "Context") {
			return true
		}
	}
	return false
}
