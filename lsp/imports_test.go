package lsp

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportRule: lsp speaks assist and workspace types only. Its
// non-test files import neither the prompt cache nor assist's inner
// machinery (the model client, the diff applier, the tool loop): what it
// needs of them comes through assist (and its feature packages such as
// assist/jobs) and workspace.
func TestImportRule(t *testing.T) {
	const mod = "github.com/kimi-lsp/kimi-lsp/"
	denied := []string{"cache", "assist/model", "assist/patch", "assist/tools"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			rel, ours := strings.CutPrefix(p, mod)
			if !ours {
				continue
			}
			for _, d := range denied {
				if rel == d || strings.HasPrefix(rel, d+"/") {
					t.Errorf("%s imports %s; lsp reaches it only through assist or workspace", name, p)
				}
			}
			if !strings.HasPrefix(rel, "assist") && !strings.HasPrefix(rel, "workspace") {
				t.Errorf("%s imports %s; lsp may import only assist and workspace packages of this module", name, p)
			}
		}
	}
}
