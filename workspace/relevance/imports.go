package relevance

import (
	"bufio"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/symbols"
)

// goModulePath returns the module path declared by go.mod contents, or "".
func goModulePath(gomod string) string {
	sc := bufio.NewScanner(strings.NewReader(gomod))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		rest, ok := strings.CutPrefix(line, "module")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t' && rest[0] != '"' && rest[0] != '`') {
			continue
		}
		rest = strings.TrimSpace(rest)
		if p, err := strconv.Unquote(rest); err == nil {
			return p
		}
		if rest != "" && !strings.ContainsAny(rest, " \t\"`(") {
			return rest
		}
		return ""
	}
	return ""
}

// importREs are the import patterns, compiled on first use (not when the
// program starts).
var importREs = sync.OnceValue(func() (r struct{ jsFrom, jsBare, jsCall, pyImport, pyFrom, pyIdent *regexp.Regexp }) {
	r.jsFrom = regexp.MustCompile(`(?m)(?:^|[;\s}])(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"\n]+)['"]`)
	r.jsBare = regexp.MustCompile(`(?m)(?:^|[;\s])import\s*['"]([^'"\n]+)['"]`)
	r.jsCall = regexp.MustCompile(`\b(?:require|import)\s*\(\s*['"]([^'"\n]+)['"]\s*\)`)
	r.pyImport = regexp.MustCompile(`^\s*import\s+(.+)$`)
	r.pyFrom = regexp.MustCompile(`^\s*from\s+(\.*)([A-Za-z_][\w.]*)?\s+import\s+(.+)$`)
	r.pyIdent = regexp.MustCompile(`^[A-Za-z_][\w.]*$`)
	return r
})

var (
	jsExts    = []string{".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"}
	jsToTSExt = map[string][]string{".js": {".ts", ".tsx"}, ".jsx": {".tsx"}, ".mjs": {".mts"}, ".cjs": {".cts"}}
)

// jsImports returns the module specifiers of a TypeScript or JavaScript
// file (import … from, export … from, bare import, require(), import()),
// in order of appearance, without duplicates. Comments are not stripped: a
// commented-out import may be found, which only adds a related file.
func jsImports(src string) []string {
	type hit struct {
		at   int
		spec string
	}
	var hits []hit
	res := importREs()
	for _, re := range []*regexp.Regexp{res.jsFrom, res.jsBare, res.jsCall} {
		for _, m := range re.FindAllStringSubmatchIndex(src, -1) {
			hits = append(hits, hit{m[2], src[m[2]:m[3]]})
		}
	}
	// Order of appearance, stable.
	for i := 1; i < len(hits); i++ {
		for j := i; j > 0 && hits[j].at < hits[j-1].at; j-- {
			hits[j], hits[j-1] = hits[j-1], hits[j]
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, h := range hits {
		if !seen[h.spec] {
			seen[h.spec] = true
			out = append(out, h.spec)
		}
	}
	return out
}

// jsCandidates returns the folder-relative files a relative specifier may
// name, from the importing file's directory dir, most likely first.
func jsCandidates(dir, spec string) []string {
	if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") && spec != "." && spec != ".." {
		return nil // a package, not a file of the workspace
	}
	base := path.Join(dir, spec)
	if strings.HasPrefix(base, "../") || base == ".." {
		return nil
	}
	var out []string
	ext := path.Ext(base)
	if ext != "" {
		// TypeScript's ESM style names the output: ./x.js is ./x.ts.
		for _, e := range jsToTSExt[ext] {
			out = append(out, strings.TrimSuffix(base, ext)+e)
		}
		out = append(out, base)
	}
	for _, e := range jsExts {
		out = append(out, base+e)
	}
	for _, e := range jsExts {
		out = append(out, path.Join(base, "index"+e))
	}
	return out
}

// pyImport is one Python import: a module (dots resolved against the
// importing package for relative imports) and the names taken from it.
type pyImp struct {
	level  int    // leading dots: 0 absolute, 1 same package, 2 parent…
	module string // dotted, may be empty for "from . import x"
	names  []string
}

// pyImports returns the imports of a Python file, line by line (statements
// split over lines with parentheses contribute their first line's names).
func pyImports(src string) []pyImp {
	res := importREs()
	var out []pyImp
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if m := res.pyFrom.FindStringSubmatch(line); m != nil {
			imp := pyImp{level: len(m[1]), module: m[2]}
			for _, n := range strings.Split(strings.Trim(m[3], "() \t\\"), ",") {
				n = strings.TrimSpace(n)
				if name, _, _ := strings.Cut(n, " "); res.pyIdent.MatchString(name) && !strings.Contains(name, ".") {
					imp.names = append(imp.names, name)
				}
			}
			out = append(out, imp)
			continue
		}
		if m := res.pyImport.FindStringSubmatch(line); m != nil {
			for _, n := range strings.Split(m[1], ",") {
				n = strings.TrimSpace(n)
				if name, _, _ := strings.Cut(n, " "); res.pyIdent.MatchString(name) {
					out = append(out, pyImp{module: name})
				}
			}
		}
	}
	return out
}

// pyCandidates returns the folder-relative files an import may name, from
// the importing file's directory dir; absolute imports are looked up from
// the folder root and from src/.
func pyCandidates(dir string, imp pyImp) []string {
	var bases []string
	if imp.level > 0 {
		d := dir
		for i := 1; i < imp.level; i++ {
			if d == "" || d == "." {
				return nil
			}
			d = path.Dir(d)
			if d == "." {
				d = ""
			}
		}
		bases = []string{d}
	} else {
		bases = []string{"", "src"}
	}
	mod := strings.ReplaceAll(imp.module, ".", "/")
	var out []string
	for _, b := range bases {
		m := path.Join(b, mod)
		if mod != "" {
			out = append(out, m+".py", path.Join(m, "__init__.py"))
		}
		for _, n := range imp.names {
			out = append(out, path.Join(m, n+".py"), path.Join(m, n, "__init__.py"))
		}
	}
	return out
}

// relCandidate is a file related to the active one.
type relCandidate struct {
	uri    workspace.URI
	reason Reason
}

// related lists the files of v related to the folder-relative file rel
// with text: the files it imports (TypeScript/JavaScript relative
// specifiers, Python modules; in import order), or with sameDir, the files
// of its directory in its language family (tests last, by name, at most
// maxSameDir). Go packages are not listed here: see goScope.
func related(v Folder, rel, text string, sameDir bool) []relCandidate {
	dir := dirOf(rel)
	lang := workspace.LanguageOf(rel)
	exists := func(r string) bool { _, ok := v.Stat(r); return ok }
	var out []relCandidate
	addRel := func(r string, reason Reason) {
		out = append(out, relCandidate{uri: workspace.FileURI(v.Abs(r)), reason: reason})
	}
	if !sameDir {
		switch symbols.Family(lang) {
		case "js":
			for _, spec := range jsImports(text) {
				for _, c := range jsCandidates(dir, spec) {
					if exists(c) {
						addRel(c, ReasonImport)
						break
					}
				}
			}
		case "python":
			for _, imp := range pyImports(text) {
				for _, c := range pyCandidates(dir, imp) {
					if exists(c) {
						addRel(c, ReasonImport)
					}
				}
			}
		}
		return out
	}
	type sib struct {
		rel  string
		rank int
	}
	var sibs []sib
	for _, fi := range v.Dir(dir) {
		name := path.Base(fi.Path)
		r := joinRel(dir, name)
		if r == rel {
			continue
		}
		l := workspace.LanguageOf(name)
		if l == "" || symbols.Family(l) != symbols.Family(lang) {
			continue
		}
		rank := 0
		if isTestFile(name) {
			rank = 1
		}
		sibs = append(sibs, sib{r, rank})
	}
	sort.SliceStable(sibs, func(i, j int) bool {
		if sibs[i].rank != sibs[j].rank {
			return sibs[i].rank < sibs[j].rank
		}
		return sibs[i].rel < sibs[j].rel
	})
	if len(sibs) > maxSameDir {
		sibs = sibs[:maxSameDir]
	}
	for _, s := range sibs {
		addRel(s.rel, ReasonSameDir)
	}
	return out
}

// goModule finds the go.mod governing dir (looking upward inside the
// folder) and returns its directory and module path.
func goModule(v Folder, dir string) (modDir, modPath string) {
	for d := dir; ; d = path.Dir(d) {
		if d == "." {
			d = ""
		}
		gm := joinRel(d, "go.mod")
		if _, ok := v.Stat(gm); ok {
			text, err := v.ReadDisk(gm)
			if err != nil {
				return "", ""
			}
			return d, goModulePath(text)
		}
		if d == "" {
			return "", ""
		}
	}
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func isTestFile(name string) bool {
	base := strings.ToLower(name)
	return strings.HasSuffix(base, "_test.go") || strings.HasPrefix(base, "test_") ||
		strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") || strings.HasSuffix(base, "_test.py")
}

func looksBinaryString(s string) bool {
	n := min(len(s), 8000)
	return strings.IndexByte(s[:n], 0) >= 0
}
