package complete

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// TestSurfacesApart holds the surface contract (surface.go): a surface's
// file names none of another surface's types — so reads none of its
// fields and takes none of its lock — and gets what they share through
// Services only.
func TestSurfacesApart(t *testing.T) {
	own := map[string][]string{
		"complete.go": {"Completer", "docState", "flight", "memo"},
		"nextedit.go": {"NextEdits", "nextDoc", "NextSuggestion"},
	}
	for file := range own {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for other, names := range own {
			if other == file {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					for _, name := range names {
						if id.Name == name {
							t.Errorf("%s names %s's %s: surfaces share only Services", fset.Position(id.Pos()), other, name)
						}
					}
				}
				return true
			})
		}
	}
}
