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
// packages (the model client, the diff applier, the tool loop): what it
// needs of them comes through assist, assist/jobs and workspace.
func TestImportRule(t *testing.T) {
	const mod = "github.com/kimi-lsp/kimi-lsp/"
	allowed := map[string]bool{
		mod + "assist": true, mod + "assist/config": true, mod + "assist/jobs": true, mod + "workspace": true,
	}
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
			if strings.HasPrefix(p, mod) && !allowed[p] {
				t.Errorf("%s imports %s; lsp may import only assist, assist/config, assist/jobs and workspace of this module", name, p)
			}
		}
	}
}
