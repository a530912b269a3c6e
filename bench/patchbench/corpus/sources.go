package corpus

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Lang is a source language of the corpus: where its files come from and
// how a model would write an edit in it.
type Lang struct {
	// Name is the language ("Go", "Python", …).
	Name string
	// roots are directories searched for files; globs filter base names.
	roots []string
	ext   []string
	// comment starts a line comment.
	comment string
	// opener is the suffix of a line that opens a block.
	opener string
	// inserts are line templates an edit inserts (indent unit "\x01").
	inserts [][]string
	// parses, when set, checks that an edited text is still valid.
	parses func(name, src string) error
}

// Source is one candidate file: its language, its root directory and its
// slash-separated path under that root.
type Source struct {
	Lang *Lang
	Root string
	Rel  string
}

// Languages returns the languages whose files exist on this machine, Go
// first (from goroot/src, always there). The others come from what Debian
// and Node install: the Python 3 standard library, npm's JavaScript and
// the C headers and sources under /usr/include and GOROOT.
func Languages(goroot string) []*Lang {
	all := []*Lang{
		{Name: "Go", roots: []string{filepath.Join(goroot, "src")}, ext: []string{".go"}, comment: "//", opener: "{",
			inserts: [][]string{
				{"// Checked by the caller; see the comment above."},
				{"if debugPatch {", "\x01println(\"reached\")", "}"},
				{"// TODO: handle the error case explicitly.", "_ = 0"},
			}, parses: parses},
		{Name: "Python", roots: globDirs("/usr/lib/python3*"), ext: []string{".py"}, comment: "#", opener: ":",
			inserts: [][]string{
				{"# Checked by the caller; see the comment above."},
				{"if DEBUG_PATCH:", "\x01print(\"reached\")"},
				{"# TODO: handle the error case explicitly.", "_ = 0"},
			}},
		{Name: "JavaScript", roots: []string{"/usr/lib/node_modules/npm", filepath.Join(goroot, "lib"), filepath.Join(goroot, "misc")}, ext: []string{".js"}, comment: "//", opener: "{",
			inserts: [][]string{
				{"// Checked by the caller; see the comment above."},
				{"if (debugPatch) {", "\x01console.log('reached')", "}"},
				{"// TODO: handle the error case explicitly.", "void 0"},
			}},
		{Name: "C", roots: []string{filepath.Join(goroot, "src"), filepath.Join(goroot, "misc"), "/usr/include"}, ext: []string{".c", ".h"}, comment: "//", opener: "{",
			inserts: [][]string{
				{"/* Checked by the caller; see the comment above. */"},
				{"if (debug_patch) {", "\x01fputs(\"reached\\n\", stderr);", "}"},
				{"/* TODO: handle the error case explicitly. */", "(void)0;"},
			}},
	}
	var out []*Lang
	for _, l := range all {
		var roots []string
		for _, r := range l.roots {
			if st, err := os.Stat(r); err == nil && st.IsDir() {
				roots = append(roots, r)
			}
		}
		if len(roots) > 0 {
			l.roots = roots
			out = append(out, l)
		}
	}
	return out
}

func globDirs(pattern string) []string {
	ms, _ := filepath.Glob(pattern)
	sort.Strings(ms)
	return ms
}

// candidates lists a language's files of moderate size with source-like
// lines (no minified code), sorted.
func (l *Lang) candidates() ([]Source, error) {
	var out []Source
	for _, root := range l.roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable parts of system directories are skipped
			}
			if d.IsDir() {
				switch d.Name() {
				case "testdata", "vendor", "test", "tests", "__pycache__", "site-packages", "dist-packages":
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || !l.hasExt(d.Name()) {
				return nil
			}
			info, err := d.Info()
			if err != nil || info.Size() < 2000 || info.Size() > 40000 {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			out = append(out, Source{Lang: l, Root: root, Rel: filepath.ToSlash(rel)})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Root != out[j].Root {
			return out[i].Root < out[j].Root
		}
		return out[i].Rel < out[j].Rel
	})
	return out, nil
}

func (l *Lang) hasExt(name string) bool {
	for _, e := range l.ext {
		if strings.HasSuffix(name, e) {
			return true
		}
	}
	return false
}

// usable reports whether a file's text suits the corpus: LF line ends, a
// final newline, no minified lines, indented code, and (for Go) it parses.
func (l *Lang) usable(rel, text string) bool {
	if strings.Contains(text, "\r") || !strings.HasSuffix(text, "\n") || strings.ContainsRune(text, 0) {
		return false
	}
	indented := 0
	for _, line := range strings.Split(text, "\n") {
		if len(line) > 200 {
			return false
		}
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "  ") {
			indented++
		}
	}
	if indented < 20 {
		return false
	}
	return l.parses == nil || l.parses(rel, text) == nil
}

// unit returns a file's indentation unit: "\t" when it indents with tabs,
// else the run of spaces most of its indentation is a multiple of.
func unit(text string) string {
	tabs, spaces, widths := indents(text)
	if tabs >= spaces {
		return "\t"
	}
	for _, u := range []int{8, 4, 2} {
		n := 0
		for _, w := range widths {
			if w%u == 0 {
				n++
			}
		}
		if n*10 >= len(widths)*9 {
			return strings.Repeat(" ", u)
		}
	}
	return " "
}

// swapUnit returns the unit a model could re-indent the file's lines
// from: "\t" for a file indented with tabs only, the run of spaces of a
// file indented with a clear unit of 2, 4 or 8 spaces only, and "" for a
// file that mixes tabs and spaces or has no clear unit (there is no one
// "other style" to write it in).
func swapUnit(text string) string {
	tabs, spaces, _ := indents(text)
	if min(tabs, spaces)*20 > tabs+spaces {
		return ""
	}
	u := unit(text)
	if u == " " {
		return ""
	}
	return u
}

// indents counts the non-blank lines indented with a tab and with spaces,
// and gives the width of each space indentation.
func indents(text string) (tabs, spaces int, widths []int) {
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.TrimSpace(l) == "":
		case l[0] == '\t':
			tabs++
		case l[0] == ' ':
			spaces++
			widths = append(widths, len(l)-len(strings.TrimLeft(l, " ")))
		}
	}
	return tabs, spaces, widths
}
