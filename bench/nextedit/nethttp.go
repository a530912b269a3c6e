package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// nethttpNames are the -nethttp session's files: net/http sources of the
// Go tree that runs the benchmark, 371 to 1,116 lines.
var nethttpNames = []string{"cookie.go", "response.go", "client.go", "fs.go"}

// maxUseLines bounds the lines of a rename's uses (a suggestion changes
// at most nextEdit.maxLines lines).
const maxUseLines = 8

// nethttpFiles returns the -nethttp session's files. Each task renames a
// parameter of a function in the signature (the burst) and its uses in
// the body (the next edit); round i takes the i-th function of the file,
// top to bottom, whose parameter is used on 1 to maxUseLines lines, none
// of them the signature's — as a user who works down a file.
func nethttpFiles() ([]file, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOROOT: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "src", "net", "http")
	var files []file
	for _, name := range nethttpNames {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		funcs := renamable(string(b))
		if len(funcs) == 0 {
			return nil, fmt.Errorf("%s: no function to rename a parameter of", name)
		}
		files = append(files, file{name: name, base: string(b), step: renameIn(funcs)})
	}
	return files, nil
}

// renamed is one rename task: the function and its parameter.
type renamed struct{ fn, param string }

// renamable returns the functions of src, in order, with the parameter a
// task renames.
func renamable(src string) []renamed {
	var out []renamed
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, 0)
	if err != nil {
		return nil
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		if p, ok := renamedParam(fset, fd); ok {
			out = append(out, renamed{fn: funcName(fd), param: p})
		}
	}
	return out
}

// funcName names fd uniquely in its file ("Client.Do", "readCookies").
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// renamedParam returns fd's first parameter used on 1 to maxUseLines lines of
// its body, none of them the signature's.
func renamedParam(fset *token.FileSet, fd *ast.FuncDecl) (string, bool) {
	for _, fl := range fd.Type.Params.List {
		for _, n := range fl.Names {
			if n.Name == "_" || n.Obj == nil {
				continue
			}
			lines := map[int]bool{}
			ast.Inspect(fd.Body, func(x ast.Node) bool {
				if id, ok := x.(*ast.Ident); ok && id.Obj == n.Obj {
					lines[fset.Position(id.Pos()).Line] = true
				}
				return true
			})
			if len(lines) > 0 && len(lines) <= maxUseLines && !lines[fset.Position(n.Pos()).Line] {
				return n.Name, true
			}
		}
	}
	return "", false
}

// renameIn is the step of a file whose tasks are funcs: round i renames
// the parameter of funcs[i mod len] to a new name, in the signature (the
// burst) and in the body (the next edit), on the text as it is then (a
// second round of a task renames the name its first gave).
func renameIn(funcs []renamed) func(string, int) (string, string) {
	funcs = slices.Clone(funcs) // each task's parameter, as its last round named it
	return func(text string, i int) (string, string) {
		task := &funcs[i%len(funcs)]
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "", text, 0)
		if err != nil {
			return text, text
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || funcName(fd) != task.fn {
				continue
			}
			for _, fl := range fd.Type.Params.List {
				for _, n := range fl.Names {
					if n.Name != task.param || n.Obj == nil {
						continue
					}
					neu := newName(text[fset.Position(fd.Pos()).Offset:fset.Position(fd.End()).Offset], task.param)
					at := fset.Position(n.Pos()).Offset
					burst := text[:at] + neu + text[at+len(n.Name):]
					// The uses, last first, in the burst's text (after the
					// signature: their offsets moved by the rename).
					var uses []int
					ast.Inspect(fd.Body, func(x ast.Node) bool {
						if id, ok := x.(*ast.Ident); ok && id.Obj == n.Obj {
							uses = append(uses, fset.Position(id.Pos()).Offset+len(neu)-len(n.Name))
						}
						return true
					})
					next := burst
					for j := len(uses) - 1; j >= 0; j-- {
						next = next[:uses[j]] + neu + next[uses[j]+len(n.Name):]
					}
					task.param = neu
					return burst, next
				}
			}
		}
		return text, text
	}
}

// newName returns a name for a parameter old that fn's text does not
// use: old with a suffix.
func newName(fn, old string) string {
	for _, suf := range []string{"1", "Arg", "Val", "2", "X", "3"} {
		if n := old + suf; !strings.Contains(fn, n) {
			return n
		}
	}
	return old + "Renamed"
}
