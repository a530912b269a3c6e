package stackstart

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportsNothing: the package is initialized among the first only
// while it imports nothing (see the package comment).
func TestImportsNothing(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			t.Errorf("%s imports %s: the package must import nothing to be initialized first", name, imp.Path.Value)
		}
	}
}

// TestLargeFrame: the frame that grows the stack is read, not optimized
// away into a constant of another value.
func TestLargeFrame(t *testing.T) {
	if b := largeFrame(); b != 0 {
		t.Fatalf("largeFrame() = %d, want 0", b)
	}
}
