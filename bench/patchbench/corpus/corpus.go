// Package corpus builds the edit-applier benchmark corpus: realistic edits
// of real source files (Go from GOROOT; Python, JavaScript and C from what
// the machine has installed, see Languages), written as a model would write
// them (with the perturbations models produce, alone or several mixed in
// one diff), each with the outcome a trustworthy applier must reach: APPLY
// with the exact resulting files, or REFUSE.
//
// An APPLY case has one clear reading: every hunk's old lines, whitespace
// set aside, occur once in the file. A REFUSE case has none: its context
// does not match, it names two places, it elides code or it was cut off.
//
// Generation is deterministic for a given machine and seed: files are walked
// in sorted order and every choice comes from one seeded PCG generator.
package corpus

import (
	"fmt"
	"go/parser"
	"go/token"
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
	// Lang is the language of the edited file.
	Lang   string
	Before []File
	Diff   string // the model's reply
	Expect Outcome
	After  []File // the whole workspace after, for Apply
	// Strip is the -p level GNU patch and git apply need (1 with a/ b/
	// prefixes, 0 without).
	Strip int
	// Intended, for a REFUSE case whose edit has one right reading once
	// corrected (two places, elision, truncation), is the workspace a
	// correct second answer leaves; see Repair.
	Intended []File
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
	{"tabs ↔ spaces", Apply},
	{"CRLF file, LF diff", Apply},
	{"shuffled hunks", Apply},
	{"missing + markers", Apply},
	{"unrelated region changed since", Apply},
	{"new file", Apply},
	{"deleted file", Apply},
	{"renamed file", Apply},
	{"16.1 counts far off", Apply},
	{"16.2 leading context dropped, header kept", Apply},
	{"16.3 numberless headers", Apply},
	{"16.4 whitespace drift on context", Apply},
	{"mix: 2–4 shapes per hunk", Apply},
	{"mix: all four 16.x shapes", Apply},
	{pHeaderRoot, Apply},
	{pGapMerged, Apply},
	{pMixedIndent, Apply},
	{"... elision", Refuse},
	{"truncated reply (fence never closed)", Refuse},
	{"duplicated target block", Refuse},
	{pThinFar, Apply},
	{"target region changed since", Refuse},
	{"target changed, mixed shapes", Refuse},
	{pHeaderTwice, Refuse},
	{pGapTwice, Refuse},
	{pThinNear, Refuse},
	{pThinBetween, Refuse},
}

// PerPerturbation is the number of cases generated per perturbation.
const PerPerturbation = 12

// DefaultSeed is the seed the applier was tuned on; the test asserts the
// targets on it.
const DefaultSeed = 20260601

// FreshSeed is the seed the figures in bench/README.md are reported on: a
// corpus the applier was not tuned on.
const FreshSeed = 20261201

// Generate builds the corpus from the files of Languages(goroot); the
// cases of each perturbation take the languages in turn.
func Generate(goroot string, seed uint64) ([]Case, error) {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for _, l := range Languages(goroot) {
		srcs, err := l.candidates()
		if err != nil {
			return nil, err
		}
		if len(srcs) < 10 {
			continue
		}
		g.langs = append(g.langs, l)
		g.srcs = append(g.srcs, srcs)
	}
	if len(g.langs) == 0 || g.langs[0].Name != "Go" {
		return nil, fmt.Errorf("no usable Go files under %s", goroot)
	}
	var cases []Case
	for _, p := range Perturbations {
		for i := 0; i < PerPerturbation; i++ {
			g.lang = i % len(g.langs)
			c, err := g.make(p.Name, p.Expect)
			if err != nil {
				return nil, fmt.Errorf("%s case %d (%s): %w", p.Name, i+1, g.langs[g.lang].Name, err)
			}
			c.Name = fmt.Sprintf("%s/%02d", p.Name, i+1)
			c.Lang = g.cur().Name
			cases = append(cases, c)
		}
	}
	return cases, nil
}

type gen struct {
	r     *rand.Rand
	langs []*Lang
	srcs  [][]Source
	lang  int // index of the language of the case being made
}

// cur returns the language of the case being made.
func (g *gen) cur() *Lang { return g.langs[g.lang] }

// pick returns a usable file of the current language.
func (g *gen) pick() (string, string, error) {
	srcs := g.srcs[g.lang]
	for range 200 {
		s := srcs[g.r.IntN(len(srcs))]
		b, err := os.ReadFile(filepath.Join(s.Root, filepath.FromSlash(s.Rel)))
		if err != nil {
			continue
		}
		text := string(b)
		if !s.Lang.usable(s.Rel, text) {
			continue
		}
		return s.Rel, text, nil
	}
	return "", "", fmt.Errorf("no usable %s file found", g.cur().Name)
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

// editOp makes one realistic edit at or near line i (0-based) of lines, in
// the current language; u is the file's indentation unit.
func (g *gen) editOp(lines []string, i int, needDelete bool, u string) (op, bool) {
	lang := g.cur()
	l := lines[i]
	ind := indentOf(l)
	if ind == "" || strings.TrimSpace(l) == "" {
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
			if strings.ContainsRune("\"`'/#*", rune(c)) {
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
		if strings.HasSuffix(strings.TrimRight(l, " \n"), lang.opener) {
			in += u
		}
		t := lang.inserts[g.r.IntN(len(lang.inserts))]
		var add []string
		for _, s := range t {
			add = append(add, in+strings.ReplaceAll(s, "\x01", u)+"\n")
		}
		return op{at: i + 1, del: 0, add: add}, true
	case 2: // delete one or two lines
		n := 1 + g.r.IntN(2)
		if i+n > len(lines) {
			return op{}, false
		}
		for _, d := range lines[i : i+n] {
			t := strings.TrimSpace(d)
			if t == "" || strings.HasSuffix(t, "{") || strings.HasSuffix(t, ":") || strings.HasPrefix(t, "}") {
				return op{}, false
			}
		}
		return op{at: i, del: n}, true
	default: // rewrite a line and add a comment above it
		body := strings.TrimRight(l, "\n")
		if strings.Contains(body, lang.comment) || strings.Contains(body, "/*") || strings.HasSuffix(body, "`") ||
			strings.HasSuffix(body, "\\") || strings.Count(body, "`")%2 == 1 || strings.Count(body, `"""`) > 0 {
			return op{}, false
		}
		return op{at: i, del: 1, add: []string{ind + lang.comment + " Keep this in sync with the fast path.\n", body + " " + lang.comment + " reviewed\n"}}, true
	}
}

// edit makes n edits spaced well apart and checks the result.
func (g *gen) edit(text string, n int, needDelete bool) ([]op, string, bool) {
	lines := splitLines(text)
	if len(lines) < 40*n {
		return nil, "", false
	}
	u := unit(text)
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
		o, ok := g.editOp(lines, i, needDelete && len(ops) == 0, u)
		if !ok || (needDelete && len(ops) == 0 && o.del == 0) {
			continue
		}
		ops = append(ops, o)
	}
	if len(ops) < n {
		return nil, "", false
	}
	after := join(applyOps(lines, append([]op(nil), ops...)))
	if after == text {
		return nil, "", false
	}
	if p := g.cur().parses; p != nil && p("x.go", after) != nil {
		return nil, "", false
	}
	return ops, after, true
}
