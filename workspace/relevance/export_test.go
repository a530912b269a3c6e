package relevance

import (
	"go/parser"
	"go/token"
	"strconv"
)

// goImports returns the import paths of a Go file, parsing only its import
// block. A file that does not parse yields what was parsed before the error.
func goImports(src string) []string {
	f, _ := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly|parser.SkipObjectResolution)
	if f == nil {
		return nil
	}
	var out []string
	for _, imp := range f.Imports {
		if imp.Path == nil {
			continue
		}
		if p, err := strconv.Unquote(imp.Path.Value); err == nil {
			out = append(out, p)
		}
	}
	return out
}
