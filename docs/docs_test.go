// Package docs holds no code: its test keeps the repository's documents
// standing alone. No file may refer to a document kept outside the
// repository, and every relative link in a Markdown file must lead to a
// file or directory that exists.
package docs

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// outside lists what names a document outside the repository. The strings
// are built from parts so that this file does not match itself.
var outside = regexp.MustCompile(strings.Join([]string{
	`DESIGN` + `\.md`,
	`PIT` + `FALLS`,
	`STYLE` + `\.md`,
	`STYLE` + ` #[0-9]`,
	`\.\./` + `shared`,
	`/work/` + `shared`,
	`shared/` + `seeds`,
}, "|"))

// repoFiles returns the repository's files, relative to its root, slash
// separated: the files git tracks when this is a git checkout, else every
// file but those under .git and the directories that hold installed or
// built outputs (node_modules, dist, out, bin).
func repoFiles(t *testing.T, root string) []string {
	t.Helper()
	if out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output(); err == nil && len(out) > 0 {
		var files []string
		for _, f := range bytes.Split(out, []byte{0}) {
			if len(f) > 0 && !strings.Contains("/"+string(f), "/node_modules/") {
				files = append(files, string(f))
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "dist", "out", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestNoOutsideDocuments(t *testing.T) {
	root := ".."
	files := repoFiles(t, root)
	if len(files) < 50 {
		t.Fatalf("found %d files under %s; is this the repository?", len(files), root)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) {
				continue // tracked but deleted in this work tree
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(data, 0) >= 0 {
			continue // binary
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d refers to %q, a document outside the repository: say what it says, or point into docs/", f, i+1, m)
			}
		}
	}
}

// mdLink matches an inline Markdown link or image, [text](target), and a
// reference definition, [label]: target.
var (
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	mdRef  = regexp.MustCompile(`^\s*\[[^\]]+\]:\s+(\S+)`)
	inCode = regexp.MustCompile("`[^`]*`")
)

func TestMarkdownLinks(t *testing.T) {
	root := ".."
	checked := 0
	for _, f := range repoFiles(t, root) {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			t.Fatal(err)
		}
		fenced := false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			if fenced {
				continue
			}
			line = inCode.ReplaceAllString(line, "")
			var targets []string
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				targets = append(targets, m[1])
			}
			if m := mdRef.FindStringSubmatch(line); m != nil {
				targets = append(targets, m[1])
			}
			for _, target := range targets {
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "#") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				p := filepath.Join(root, filepath.FromSlash(filepath.Dir(f)), filepath.FromSlash(target))
				if strings.HasPrefix(target, "/") {
					p = filepath.Join(root, filepath.FromSlash(target))
				}
				checked++
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s:%d links to %s, which does not exist", f, i+1, target)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d links; the link pattern is probably broken", checked)
	}
}

// sectionRef matches a citation of a section of a document in docs/, as
// comments write it: docs/NAME.md, "Heading" (and "Heading"…), once
// comment markers between lines are removed.
var (
	sectionRef   = regexp.MustCompile(`docs/([A-Za-z0-9_-]+\.md),? "([^"]+)"((?:,? and "[^"]+")*)`)
	moreSections = regexp.MustCompile(`"([^"]+)"`)
	commentBreak = regexp.MustCompile(`\s*\n\s*(//|#|--)\s*`)
	heading      = regexp.MustCompile(`(?m)^#+\s+(.+?)\s*$`)
)

// TestSectionReferences: a comment that names a section of a document in
// docs/ names one that exists, so renaming a heading cannot leave the code
// pointing nowhere.
func TestSectionReferences(t *testing.T) {
	root := ".."
	headings := map[string]map[string]bool{}
	checked := 0
	for _, f := range repoFiles(t, root) {
		if strings.HasPrefix(f, "docs/") && strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			t.Fatal(err)
		}
		text := commentBreak.ReplaceAllString(string(data), " ")
		for _, m := range sectionRef.FindAllStringSubmatch(text, -1) {
			doc := m[1]
			if headings[doc] == nil {
				b, err := os.ReadFile(filepath.Join(root, "docs", doc))
				if err != nil {
					t.Errorf("%s cites docs/%s, which does not exist", f, doc)
					headings[doc] = map[string]bool{}
					continue
				}
				headings[doc] = map[string]bool{}
				for _, h := range heading.FindAllStringSubmatch(string(b), -1) {
					headings[doc][strings.ReplaceAll(h[1], "`", "")] = true
				}
			}
			names := []string{m[2]}
			for _, more := range moreSections.FindAllStringSubmatch(m[3], -1) {
				names = append(names, more[1])
			}
			for _, name := range names {
				checked++
				if !headings[doc][name] {
					t.Errorf("%s cites docs/%s, %q: no such heading", f, doc, name)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d section references; the pattern is probably broken", checked)
	}
}

// packageImports returns, for every directory of the module holding
// non-test Go files, the import paths those files name. Directories are
// slash-separated and relative to root.
func packageImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	imports := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "editors":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		dir := filepath.ToSlash(rel)
		if _, seen := imports[dir]; !seen {
			imports[dir] = []string{}
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			imports[dir] = append(imports[dir], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return imports
}

// TestLayering holds the import rules docs/ARCHITECTURE.md states under
// "Layering": its table of allowed imports is the one list (every package
// of the module but bench/ and docs/ has a row, every row a package, and
// no package imports what its row does not allow), and only lsp knows the
// protocol libraries.
func TestLayering(t *testing.T) {
	const mod = "github.com/kimi-lsp/kimi-lsp/"
	imports := packageImports(t, "..")
	if len(imports) < 20 {
		t.Fatalf("found %d packages; is this the module root?", len(imports))
	}
	under := func(dir, tree string) bool { return dir == tree || strings.HasPrefix(dir, tree+"/") }
	allowed := allowedImports(t)
	if len(allowed) < 20 {
		t.Fatalf("docs/ARCHITECTURE.md's table of allowed imports has %d rows; was it moved?", len(allowed))
	}
	for dir, paths := range imports {
		if dir == "." || under(dir, "bench") || under(dir, "docs") {
			continue
		}
		ok, listed := allowed[dir]
		if !listed {
			t.Errorf("%s has no row in docs/ARCHITECTURE.md's table of allowed imports", dir)
		}
		for _, p := range paths {
			if strings.HasPrefix(p, "go.lsp.dev/") && !under(dir, "lsp") {
				t.Errorf("%s imports %s: only lsp knows the protocol libraries", dir, p)
			}
			if strings.HasPrefix(p, "github.com/coder/acp-go-sdk") && dir != "lsp/acp" {
				t.Errorf("%s imports %s: only lsp/acp knows the Agent Client Protocol", dir, p)
			}
			rel, ours := strings.CutPrefix(p, mod)
			if ours && listed && !slices.Contains(ok, rel) {
				t.Errorf("%s imports %s, which its row of docs/ARCHITECTURE.md's table of allowed imports does not allow (it allows %q)", dir, rel, ok)
			}
		}
	}
	for dir := range allowed {
		if _, ok := imports[dir]; !ok {
			t.Errorf("docs/ARCHITECTURE.md's table of allowed imports has a row for %s, which is no package", dir)
		}
	}
	// The direction: nothing lower imports a higher layer.
	rank := func(dir string) int {
		for i, top := range []string{"workspace", "cache", "assist", "lsp", "cmd"} {
			if under(dir, top) {
				return i
			}
		}
		return -1
	}
	for dir, ok := range allowed {
		for _, rel := range ok {
			if rank(rel) > rank(dir) {
				t.Errorf("docs/ARCHITECTURE.md allows %s to import %s, a higher layer", dir, rel)
			}
		}
	}
}

// allowedImports reads the table of allowed imports of
// docs/ARCHITECTURE.md: package → the packages of the module it may
// import.
func allowedImports(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "| package | may import |\n|---|---|\n")
	if !ok {
		t.Fatal("docs/ARCHITECTURE.md has no table of allowed imports (| package | may import |)")
	}
	out := map[string][]string{}
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 2 {
			t.Fatalf("a row of the table of allowed imports has %d cells: %q", len(cells), line)
		}
		names := func(cell string) []string {
			var l []string
			for _, f := range strings.Split(cell, ",") {
				if f = strings.Trim(strings.TrimSpace(f), "`"); f != "" && f != "—" {
					l = append(l, f)
				}
			}
			return l
		}
		may := names(cells[1])
		if may == nil {
			may = []string{}
		}
		for _, pkg := range names(cells[0]) {
			out[pkg] = may
		}
	}
	return out
}

// maxFuncLines is the most lines a production function of assist/,
// workspace/, cache/ and lsp/ may span, from its func line to its closing
// brace (issue 31 item 6: functions a reader can hold).
const maxFuncLines = 120

// longFuncExempt lists the functions over maxFuncLines that another change
// will split, by package directory and name (Recv.Method for a method). An
// entry whose function is no longer over the limit, or is gone, fails
// TestFunctionLength: delete it then.
var longFuncExempt = map[string]bool{
	// None: NextEdits.fire was split with the surface unit (#31.1), and
	// lsp/ has none over the limit. Add an entry only for a function
	// another change is about to split, by name.
}

// TestFunctionLength fails naming each function of a non-test Go file under
// assist/, workspace/, cache/ or lsp/ that spans more than maxFuncLines
// lines and is not in longFuncExempt.
func TestFunctionLength(t *testing.T) {
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, tree := range []string{"assist", "workspace", "cache", "lsp"} {
		err := filepath.WalkDir(filepath.Join("..", tree), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel("..", filepath.Dir(p))
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
				if lines <= maxFuncLines {
					continue
				}
				key := filepath.ToSlash(rel) + " " + funcName(fd)
				if longFuncExempt[key] {
					seen[key] = true
					continue
				}
				file, _ := filepath.Rel("..", p)
				t.Errorf("%s:%d: %s is %d lines, over %d: split it along its steps",
					filepath.ToSlash(file), fset.Position(fd.Pos()).Line, key, lines, maxFuncLines)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for key := range longFuncExempt {
		if !seen[key] {
			t.Errorf("longFuncExempt lists %s, which is no longer over %d lines (or is gone): delete the entry", key, maxFuncLines)
		}
	}
}

// funcName names a function declaration as Go does in a stack trace:
// Name, or Recv.Name for a method (without its pointer or type parameters).
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fmt.Sprint(typ) + "." + fd.Name.Name
}

// TestNoReexports holds "no alias re-exports" (docs/ARCHITECTURE.md,
// "Allowed imports"): no exported type alias, variable or constant of a
// production file is merely another package of the module's name
// (type X = pkg.X, var ErrX = pkg.ErrX), so a name is used through the
// package that owns it.
func TestNoReexports(t *testing.T) {
	const mod = "github.com/kimi-lsp/kimi-lsp/"
	files := 0
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "editors", "bench":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		ours := map[string]bool{}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if rel, ok := strings.CutPrefix(path, mod); ok {
				name := filepath.Base(rel)
				if imp.Name != nil {
					name = imp.Name.Name
				}
				ours[name] = true
			}
		}
		// reexport reports whether e is pkg.Name of a package of ours.
		reexport := func(e ast.Expr) bool {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok {
				return false
			}
			x, ok := sel.X.(*ast.Ident)
			return ok && ours[x.Name]
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					if sp.Assign.IsValid() && sp.Name.IsExported() && reexport(sp.Type) {
						t.Errorf("%s: type %s re-exports %s: use it through its own package", p, sp.Name.Name, types.ExprString(sp.Type))
					}
				case *ast.ValueSpec:
					for i, name := range sp.Names {
						if name.IsExported() && i < len(sp.Values) && reexport(sp.Values[i]) {
							t.Errorf("%s: %s re-exports %s: use it through its own package", p, name.Name, types.ExprString(sp.Values[i]))
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files; is this the module root?", files)
	}
}
