package lsp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// serverParts are the Server's fields that are parts (server.go, Server),
// by the name of their type.
var serverParts = map[string]string{
	"life":     "lifecycle",
	"client":   "clientSession",
	"settings": "settings",
	"inflight": "inflightRequests",
	"logs":     "logForwarding",
	"secrets":  "secretFiles",
	"views":    "docViews",
	"recent":   "recentFiles",
	"gos":      "goroutines",
}

// TestServerParts: outside its own methods, the production code of the
// package reaches a part of the Server through its methods only, never
// through its fields (s.settings.cfg, s.life.exit, …): each part owns its
// state and its lock.
func TestServerParts(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var parsed []*ast.File
	fields := map[string]map[string]bool{} // part type → its fields
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, sp := range g.Specs {
				ts := sp.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				m := map[string]bool{}
				for _, fl := range st.Fields.List {
					for _, n := range fl.Names {
						m[n.Name] = true
					}
				}
				fields[ts.Name.Name] = m
			}
		}
	}
	for field, typ := range serverParts {
		if fields[typ] == nil {
			t.Errorf("Server part %s: no struct type %s in the package", field, typ)
		}
	}
	serverFields := fields["Server"]
	for field := range serverParts {
		if !serverFields[field] {
			t.Errorf("Server has no field %s (serverParts is out of date)", field)
		}
	}
	for _, f := range parsed {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				outer, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				inner, ok := outer.X.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				typ, ok := serverParts[inner.Sel.Name]
				if ok && fields[typ][outer.Sel.Name] {
					t.Errorf("%s: %s reaches into the Server's part %s (field %s of %s); use its methods",
						fset.Position(outer.Pos()), fn.Name.Name, inner.Sel.Name, outer.Sel.Name, typ)
				}
				return true
			})
		}
	}
}
