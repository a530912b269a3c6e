package verify

import (
	"path/filepath"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/workspace"

	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// maxDiffCost bounds the line diff between a file's text before and after
// an edit; past it the changed middle counts as replaced whole, and an
// error anywhere in it matches an old error of the same message anywhere
// in the replaced lines.
const maxDiffCost = 4000

// lineMap maps the lines of a text before an edit to the lines of the
// text after it.
type lineMap struct {
	// span[i] is the half-open range of after-lines that before-line i
	// became: one line for an unchanged line, the replacement lines for a
	// changed one (the line where they were for a deleted run).
	span [][2]int
}

// mapLines builds the lineMap of an edit from before to after.
func mapLines(before, after string) lineMap {
	// The editor's lines, not linediff.SplitLines: a text ending in "\n"
	// has one more, empty, line, where a diagnostic at the end sits.
	a, b := strings.SplitAfter(before, "\n"), strings.SplitAfter(after, "\n")
	// Trim the common prefix and suffix: the diff sees only the middle.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	m := lineMap{span: make([][2]int, len(a))}
	for i := range pre {
		m.span[i] = [2]int{i, i + 1}
	}
	ops := linediff.Diff(a[pre:len(a)-suf], b[pre:len(b)-suf], maxDiffCost)
	i, j := pre, pre
	for k := 0; k < len(ops); {
		if ops[k] == linediff.Equal {
			m.span[i] = [2]int{j, j + 1}
			i, j, k = i+1, j+1, k+1
			continue
		}
		i0, j0 := i, j
		for ; k < len(ops) && ops[k] != linediff.Equal; k++ {
			if ops[k] == linediff.Delete {
				i++
			} else {
				j++
			}
		}
		lo, hi := j0, j
		if lo == hi { // deleted lines: where they were, and the line before
			lo, hi = max(j0-1, 0), j0+1
		}
		for x := i0; x < i; x++ {
			m.span[x] = [2]int{lo, hi}
		}
	}
	for x := range suf {
		m.span[len(a)-suf+x] = [2]int{len(b) - suf + x, len(b) - suf + x + 1}
	}
	return m
}

// at returns the after-lines of before-line i; a line past the end maps
// past the end of the after text by the same distance.
func (m lineMap) at(i int) (lo, hi int) {
	if i >= 0 && i < len(m.span) {
		return m.span[i][0], m.span[i][1]
	}
	if len(m.span) == 0 {
		return i, i + 1
	}
	last := m.span[len(m.span)-1][1]
	d := i - len(m.span)
	return last + d, last + d + 1
}

// severityError is LSP's DiagnosticSeverity.Error.
const severityError = 1

// isError reports whether a diagnostic counts as an error: severity Error,
// or no severity at all (LSP leaves an absent one to the client; a
// helper that omits it means its diagnostics to count).
func isError(d wireDiagnostic) bool {
	return d.Severity == severityError || d.Severity == 0
}

// newErrors returns the errors of after that were not in before: an
// error of after is old when an unused error of before has the same
// message and its line, mapped through the edit, is the error's line.
func newErrors(beforeText, afterText string, before, after []wireDiagnostic) []wireDiagnostic {
	m := mapLines(beforeText, afterText)
	used := make([]bool, len(before))
	var out []wireDiagnostic
next:
	for _, d := range after {
		if !isError(d) {
			continue
		}
		for k, o := range before {
			if used[k] || !isError(o) || o.Message != d.Message {
				continue
			}
			line := int(d.Range.Start.Line)
			if lo, hi := m.at(int(o.Range.Start.Line)); line >= lo && line < hi {
				used[k] = true
				continue next
			}
		}
		out = append(out, d)
	}
	return out
}

// importOfCreated reports whether msg is a helper's failure to resolve an
// import (pyright: Import "pkg.mod" could not be resolved) of a module
// that a file the edit creates provides: a helper that resolves imports
// from the disk only cannot see a module that exists in the candidate
// alone, and the error is not the edit's. The module is looked up as
// Python does: a relative one (leading dots) from the importing file's
// directory, an absolute one from that directory, each workspace folder
// and its src/; as mod.py, mod.pyi or mod/__init__.py.
func importOfCreated(msg string, from workspace.URI, created, roots []string) bool {
	if len(created) == 0 {
		return false
	}
	rest, ok := strings.CutPrefix(msg, `Import "`)
	if !ok {
		return false
	}
	mod, ok := strings.CutSuffix(rest, `" could not be resolved`)
	if !ok || strings.ContainsAny(mod, `"/\ `) {
		return false
	}
	fromPath, err := from.Path()
	if err != nil {
		return false
	}
	dir := filepath.Dir(fromPath)
	var bases []string
	if trimmed := strings.TrimLeft(mod, "."); len(trimmed) < len(mod) {
		up := len(mod) - len(trimmed) - 1
		for range up {
			dir = filepath.Dir(dir)
		}
		mod, bases = trimmed, []string{dir}
	} else {
		bases = append([]string{dir}, roots...)
		for _, r := range roots {
			bases = append(bases, filepath.Join(r, "src"))
		}
	}
	if mod == "" {
		return false
	}
	rel := filepath.FromSlash(strings.ReplaceAll(mod, ".", "/"))
	for _, b := range bases {
		for _, cand := range []string{rel + ".py", rel + ".pyi", filepath.Join(rel, "__init__.py")} {
			p := filepath.Join(b, cand)
			for _, c := range created {
				if filepath.Clean(c) == p {
					return true
				}
			}
		}
	}
	return false
}
