package corpus

import (
	"fmt"

	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// The shapes of issue 21.23, seen in diffs made from real one-file
// commits: a header path relative to another root, two hunks merged with
// an elision line for the lines between them, and a file that mixes tab
// and space indentation.

const (
	pHeaderRoot  = "21.23 header path from another root"
	pGapMerged   = "21.23 elided gap between two hunks"
	pMixedIndent = "21.23 mixed tab/space indentation"
	pHeaderTwice = "21.23 two files end like the header path"
	pGapTwice    = "21.23 elided gap, next part matches twice"
)

// gapLine is an elision line in the current language.
func (g *gen) gapLine(ind string) string {
	cm := g.cur().comment
	forms := []string{"...", cm + " ...", cm + " ... existing code ...", "/* ... */"}
	if g.cur().Name == "Python" {
		forms = []string{"...", "# ...", "# ... existing code ..."}
	}
	f := forms[g.r.IntN(len(forms))]
	if f == "..." {
		return f // a bare line, as models write it
	}
	return ind + f
}

// merge joins hunks a and b into one hunk with an elision line between.
func (g *gen) merge(d *ddiff, i int, ind string) {
	a, b := d.hunks[i], d.hunks[i+1]
	gl := g.gapLine(ind)
	if gl != "..." || g.r.IntN(2) == 0 {
		gl = " " + gl
	}
	a.lines = append(append(append([]string(nil), a.lines...), gl), b.lines...)
	a.recount()
	d.hunks = append(d.hunks[:i+1], d.hunks[i+2:]...)
}

// afterBlock reports how often block occurs in text after the line index
// from (0-based), comparing lines with whitespace set aside.
func afterBlock(text string, from int, block []string) int {
	var file []string
	for i, l := range strings.Split(text, "\n") {
		if i < from {
			continue
		}
		file = append(file, strings.TrimSpace(l))
	}
	var b []string
	for _, l := range block {
		b = append(b, strings.TrimSpace(l))
	}
	return runs(file, b)
}

// mixedBlock returns lines indented in the other style than unit u, held
// in a string or comment of the current language, opened at ind.
func (g *gen) mixedBlock(ind string) (open string, body []string, close string) {
	switch g.cur().Name {
	case "Go":
		return ind + "const zzConfig = `", []string{"server:", "    host: localhost", "    port: 8080", "    tls:", "        cert: server.pem", "    limits:", "        body: 1MB"}, "`"
	case "Python":
		return ind + "MAKEFILE = \"\"\"", []string{"all: build", "build:", "\tgo build ./...", "\tgo vet ./...", "test:", "\tgo test ./...", "clean:", "\trm -rf bin"}, "\"\"\""
	case "JavaScript":
		return ind + "const makefile = `", []string{"all: build", "build:", "\tgo build ./...", "\tgo vet ./...", "test:", "\tgo test ./...", "clean:", "\trm -rf bin"}, "`"
	}
	return ind + "/*", []string{" * layout:", "    host: localhost", "    port: 8080", "    tls:", "        cert: server.pem", " */"}, ""
}

func (g *gen) try21(name, rel, text string, prefix, fenced bool) (Case, bool, error) {
	c := Case{}
	oldName, newName, strip := names(rel, prefix)
	c.Strip = strip
	switch name {
	case pHeaderRoot, pHeaderTwice:
		_, after, ok := g.edit(text, 1+g.r.IntN(2), false)
		if !ok {
			return c, false, nil
		}

		// Where the file lives in the workspace and how the header names it.
		fileAt, header := rel, rel
		switch v := g.r.IntN(3); {
		case v == 0 || name == pHeaderTwice:
			header = "myrepo/" + rel // extra leading directory
		case v == 1:
			fileAt = "tools/" + rel // the header is relative to a deeper root
		default:
			if !strings.Contains(rel, "/") {
				return c, false, nil
			}
			fileAt, header = "src/"+rel, "myrepo/"+rel // different leading directories
		}
		oh, nh, st := names(header, prefix)
		d := parseUnified(patch.Unified(oh, nh, text, after, 3))
		for _, h := range d.hunks {
			if clearReading(text, h) != 1 {
				return c, false, nil
			}
		}
		c.Strip = st
		c.Diff = g.wrap(d.render(numbered), fenced)
		if name == pHeaderTwice {
			// The same file twice (a vendored copy): both end like the
			// header's path.
			if !strings.Contains(rel, "/") {
				return c, false, nil
			}
			c.Before = []File{{"a/" + rel, text}, {"vendor/b/" + rel, text}}
			c.Intended = []File{{"a/" + rel, after}, {"vendor/b/" + rel, text}}
			return c, true, nil
		}
		c.Before = []File{{fileAt, text}}
		c.After = []File{{fileAt, after}}
		return c, true, nil
	case pGapMerged, pGapTwice:
		ops, after, ok := g.edit(text, 2+g.r.IntN(2), false)
		if !ok {
			return c, false, nil
		}

		d := parseUnified(patch.Unified(oldName, newName, text, after, 3))
		if len(d.hunks) < 2 {
			return c, false, nil
		}
		i := g.r.IntN(len(d.hunks) - 1)
		a, b := d.hunks[i], d.hunks[i+1]
		ind := ""
		for _, l := range b.lines {
			if len(l) > 1 && strings.TrimSpace(l[1:]) != "" {
				ind = indentOf(l[1:])
				break
			}
		}
		aEnd := a.oldStart - 1 + a.oldN
		before := text
		intended := ""
		if name == pGapTwice {
			// A copy of the second hunk's old lines inside the gap: after
			// the first part, the next one matches twice.
			lines := splitLines(text)
			at := aEnd + (b.oldStart-1-aEnd)/2
			if b.oldStart-1-aEnd < 2 {
				return c, false, nil
			}
			var add []string
			for _, l := range b.oldBlock() {
				add = append(add, l+"\n")
			}
			before = join(applyOps(lines, []op{{at: at, add: add}}))
			intended = join(applyOps(lines, append(append([]op(nil), ops...), op{at: at, add: add})))
			if afterBlock(before, aEnd, b.oldBlock()) < 2 {
				return c, false, nil
			}
		} else if afterBlock(text, aEnd, b.oldBlock()) != 1 || clearReading(text, a) != 1 {
			return c, false, nil
		}
		g.merge(d, i, ind)
		for _, h := range d.hunks {
			if h != a && clearReading(before, h) != 1 {
				return c, false, nil
			}
		}
		style := numbered
		if g.r.IntN(2) == 0 {
			style = dots + headerStyle(g.r.IntN(2))
		}
		c.Diff = g.wrap(d.render(style), fenced)
		c.Before = []File{{rel, before}}
		if name == pGapTwice {
			c.Intended = []File{{rel, intended}}
			return c, true, nil
		}
		c.After = []File{{rel, after}}
		return c, true, nil
	case pMixedIndent:
		u, su := unit(text), swapUnit(text)
		if su == "" {
			return c, false, nil
		}
		lines := splitLines(text)
		// A line of code indented one unit or more, away from the ends.
		var at int
		found := false
		for range 50 {
			at = 5 + g.r.IntN(len(lines)-10)
			l := strings.TrimRight(lines[at], "\n")
			t := strings.TrimSpace(l)
			if indentOf(l) != "" && strings.HasPrefix(l, u) && t != "" && !strings.HasSuffix(t, "\\") && !strings.ContainsAny(t, "`\"'") &&
				!strings.HasPrefix(t, "*") && !strings.HasPrefix(t, "/*") && !strings.HasPrefix(t, "#") && !strings.HasSuffix(t, ",") {
				found = true
				break
			}
		}
		if !found {
			return c, false, nil
		}
		ind := indentOf(lines[at])
		open, body, closing := g.mixedBlock(ind)
		block := []string{open + "\n"}
		for _, l := range body {
			block = append(block, l+"\n")
		}
		if closing != "" {
			block = append(block, closing+"\n")
		}
		// The block goes before the code line; the edit changes a line of
		// the block, adds one after it, and changes the code line.
		withBlock := append(append(append([]string(nil), lines[:at]...), block...), lines[at:]...)
		before := join(withBlock)
		if p := g.cur().parses; p != nil && p("x.go", before) != nil {
			return c, false, nil
		}
		k := at + 2 + g.r.IntN(len(body)-2) // a body line, not the first
		bl := strings.TrimSuffix(withBlock[k], "\n")
		edited := []op{{at: k, del: 1, add: []string{bl + " # changed\n", indentOf(bl) + "extra: 1\n"}}}
		code := at + len(block)
		cl := strings.TrimSuffix(withBlock[code], "\n")
		if g.r.IntN(2) == 0 {
			edited = append(edited, op{at: code + 1, add: []string{indentOf(cl) + g.cur().comment + " Keep this in sync with the fast path.\n"}})
		}
		after := join(applyOps(withBlock, edited))
		if p := g.cur().parses; p != nil && p("x.go", after) != nil {
			return c, false, nil
		}
		d := parseUnified(patch.Unified(oldName, newName, before, after, 3))
		changed := false
		for _, h := range d.hunks {
			if clearReading(before, h) != 1 {
				return c, false, nil
			}
			changed = g.swapIndent(h, su, false) || changed
		}
		if !changed {
			return c, false, nil
		}
		c.Diff = g.wrap(d.render(numbered), fenced)
		c.Before = []File{{rel, before}}
		c.After = []File{{rel, after}}
		return c, true, nil
	}
	return c, false, fmt.Errorf("unknown perturbation %q", name)
}
