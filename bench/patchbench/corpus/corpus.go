// Package corpus builds the edit-applier benchmark corpus: realistic edits
// of real Go files from GOROOT, written as a model would write them (with
// the perturbations models produce), each with the outcome a trustworthy
// applier must reach: APPLY with the exact resulting files, or REFUSE.
//
// Generation is deterministic for a given GOROOT and seed: files are walked
// in sorted order and every choice comes from one seeded PCG generator.
package corpus

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Outcome is what a case expects.
type Outcome string

const (
	// Apply: the edit must be applied and give exactly the After files.
	Apply Outcome = "APPLY"
	// Refuse: nothing may change.
	Refuse Outcome = "REFUSE"
)

// File is a file of a case's workspace, by slash-separated relative path.
type File struct {
	Path string
	Text string
}

// Case is one benchmark case.
type Case struct {
	Name         string
	Perturbation string
	Before       []File
	Diff         string // the model's reply
	Expect       Outcome
	After        []File // the whole workspace after, for Apply
	// Strip is the -p level GNU patch and git apply need (1 with a/ b/
	// prefixes, 0 without).
	Strip int
}

// Perturbations lists the perturbation names in table order, with the
// outcome each expects.
var Perturbations = []struct {
	Name   string
	Expect Outcome
}{
	{"clean", Apply},
	{"shifted line numbers", Apply},
	{"missing line numbers", Apply},
	{"wrong counts", Apply},
	{"dropped context", Apply},
	{"added context (partly invented)", Apply},
	{"blank-line drift", Apply},
	{"trailing whitespace", Apply},
	{"indentation shift", Apply},
	{"tabs to spaces", Apply},
	{"CRLF file, LF diff", Apply},
	{"shuffled hunks", Apply},
	{"missing + markers", Apply},
	{"unrelated region changed since", Apply},
	{"new file", Apply},
	{"deleted file", Apply},
	{"renamed file", Apply},
	{"... elision", Refuse},
	{"truncated last hunk", Refuse},
	{"duplicated target block", Refuse},
	{"target region changed since", Refuse},
}

// PerPerturbation is the number of cases generated per perturbation.
const PerPerturbation = 12

// DefaultSeed is the seed the benchmark and the test use.
const DefaultSeed = 20260601

// Generate builds the corpus from the Go files under goroot/src.
func Generate(goroot string, seed uint64) ([]Case, error) {
	srcs, err := candidates(filepath.Join(goroot, "src"))
	if err != nil {
		return nil, err
	}
	if len(srcs) < 50 {
		return nil, fmt.Errorf("only %d candidate Go files under %s", len(srcs), goroot)
	}
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), srcs: srcs, root: filepath.Join(goroot, "src")}
	var cases []Case
	for _, p := range Perturbations {
		for i := 0; i < PerPerturbation; i++ {
			c, err := g.make(p.Name, p.Expect)
			if err != nil {
				return nil, fmt.Errorf("%s case %d: %w", p.Name, i+1, err)
			}
			c.Name = fmt.Sprintf("%s/%02d", p.Name, i+1)
			cases = append(cases, c)
		}
	}
	return cases, nil
}

// candidates lists Go files of moderate size, sorted.
func candidates(src string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == "vendor" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() < 2000 || info.Size() > 40000 {
			return nil
		}
		rel, _ := filepath.Rel(src, path)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(out)
	return out, err
}

type gen struct {
	r    *rand.Rand
	srcs []string
	root string
}

func (g *gen) pick() (string, string, error) {
	for range 100 {
		rel := g.srcs[g.r.IntN(len(g.srcs))]
		b, err := os.ReadFile(filepath.Join(g.root, filepath.FromSlash(rel)))
		if err != nil {
			return "", "", err
		}
		text := string(b)
		if strings.Contains(text, "\r") || !strings.HasSuffix(text, "\n") || parses(rel, text) != nil {
			continue
		}
		return rel, text, nil
	}
	return "", "", fmt.Errorf("no usable file found")
}

func parses(name, src string) error {
	_, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution)
	return err
}

// op is an edit of the original lines: replace lines [at, at+del) with add.
type op struct {
	at, del int
	add     []string // with "\n"
}

func applyOps(lines []string, ops []op) []string {
	sort.Slice(ops, func(i, j int) bool { return ops[i].at < ops[j].at })
	var out []string
	cur := 0
	for _, o := range ops {
		out = append(out, lines[cur:o.at]...)
		out = append(out, o.add...)
		cur = o.at + o.del
	}
	return append(out, lines[cur:]...)
}

func splitLines(s string) []string { return strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n") }

func join(ls []string) string {
	s := strings.Join(ls, "")
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

func indentOf(s string) string { return s[:len(s)-len(strings.TrimLeft(s, "\t "))] }

var keywords = map[string]bool{"break": true, "case": true, "chan": true, "const": true, "continue": true,
	"default": true, "defer": true, "else": true, "fallthrough": true, "for": true, "func": true, "go": true,
	"goto": true, "if": true, "import": true, "interface": true, "map": true, "package": true, "range": true,
	"return": true, "select": true, "struct": true, "switch": true, "type": true, "var": true}

// editOp makes one realistic edit at or near line i (0-based) of lines.
func (g *gen) editOp(lines []string, i int, needDelete bool) (op, bool) {
	l := lines[i]
	ind := indentOf(l)
	if !strings.HasPrefix(l, "\t") || strings.TrimSpace(l) == "" {
		return op{}, false
	}
	kind := g.r.IntN(4)
	if needDelete && kind == 1 {
		kind = 0
	}
	switch kind {
	case 0: // rename an identifier in the line
		body := strings.TrimRight(l, "\n")
		var idents [][2]int
		for j := 0; j < len(body); {
			c := body[j]
			if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				k := j
				for k < len(body) && (body[k] == '_' || body[k] >= 'a' && body[k] <= 'z' || body[k] >= 'A' && body[k] <= 'Z' || body[k] >= '0' && body[k] <= '9') {
					k++
				}
				if !keywords[body[j:k]] && k-j > 1 {
					idents = append(idents, [2]int{j, k})
				}
				j = k
				continue
			}
			if c == '"' || c == '`' || c == '/' {
				break // stop before strings and comments
			}
			j++
		}
		if len(idents) == 0 {
			return op{}, false
		}
		id := idents[g.r.IntN(len(idents))]
		nl := body[:id[0]] + body[id[0]:id[1]] + "Alt" + body[id[1]:] + "\n"
		return op{at: i, del: 1, add: []string{nl}}, true
	case 1: // insert lines after line i
		in := ind
		if strings.HasSuffix(strings.TrimRight(l, "\n"), "{") {
			in += "\t"
		}
		templates := [][]string{
			{"// Checked by the caller; see the comment above.\n"},
			{"if debugPatch {\n", "\tprintln(\"reached\")\n", "}\n"},
			{"// TODO: handle the error case explicitly.\n", "_ = 0\n"},
		}
		t := templates[g.r.IntN(len(templates))]
		var add []string
		for _, s := range t {
			add = append(add, in+s)
		}
		return op{at: i + 1, del: 0, add: add}, true
	case 2: // delete one or two lines
		n := 1 + g.r.IntN(2)
		if i+n > len(lines) {
			return op{}, false
		}
		for _, d := range lines[i : i+n] {
			if strings.TrimSpace(d) == "" || strings.HasSuffix(strings.TrimSpace(d), "{") || strings.HasPrefix(strings.TrimSpace(d), "}") {
				return op{}, false
			}
		}
		return op{at: i, del: n}, true
	default: // rewrite a line and add a comment above it
		body := strings.TrimRight(l, "\n")
		if strings.Contains(body, "//") || strings.HasSuffix(body, "`") || strings.Count(body, "`")%2 == 1 {
			return op{}, false
		}
		return op{at: i, del: 1, add: []string{ind + "// Keep this in sync with the fast path.\n", body + " // reviewed\n"}}, true
	}
}

// edit makes n edits spaced well apart and checks the result.
func (g *gen) edit(text string, n int, needDelete bool) ([]op, string, bool) {
	lines := splitLines(text)
	if len(lines) < 40*n {
		return nil, "", false
	}
	var ops []op
	used := func(i int) bool {
		for _, o := range ops {
			if i > o.at-12 && i < o.at+o.del+12 {
				return true
			}
		}
		return false
	}
	for tries := 0; len(ops) < n && tries < 200; tries++ {
		i := 5 + g.r.IntN(len(lines)-10)
		if used(i) {
			continue
		}
		o, ok := g.editOp(lines, i, needDelete && len(ops) == 0)
		if !ok || (needDelete && len(ops) == 0 && o.del == 0) {
			continue
		}
		ops = append(ops, o)
	}
	if len(ops) < n {
		return nil, "", false
	}
	after := join(applyOps(lines, append([]op(nil), ops...)))
	if after == text || parses("x.go", after) != nil {
		return nil, "", false
	}
	return ops, after, true
}
