package corpus

import (
	"fmt"
	"path"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// dhunk is a hunk being perturbed; lines carry their marker, no newline.
type dhunk struct {
	oldStart, oldN, newStart, newN int
	lines                          []string
}

type ddiff struct {
	head  string // everything before the first hunk
	hunks []*dhunk
}

// parseUnified reads the well-formed output of patch.Unified.
func parseUnified(u string) *ddiff {
	d := &ddiff{}
	lines := strings.Split(strings.TrimSuffix(u, "\n"), "\n")
	var h *dhunk
	for _, l := range lines {
		if strings.HasPrefix(l, "@@ ") {
			h = &dhunk{}
			var a, b, c, e int
			fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &a, &b, &c, &e)
			h.oldStart, h.oldN, h.newStart, h.newN = a, b, c, e
			d.hunks = append(d.hunks, h)
			continue
		}
		if h == nil {
			d.head += l + "\n"
			continue
		}
		h.lines = append(h.lines, l)
	}
	return d
}

// headerStyle says how hunk headers are written.
type headerStyle int

const (
	numbered headerStyle = iota
	dots                 // "@@ ... @@"
	bare                 // "@@"
)

func (d *ddiff) render(style headerStyle) string {
	var b strings.Builder
	b.WriteString(d.head)
	for _, h := range d.hunks {
		switch style {
		case numbered:
			fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", h.oldStart, h.oldN, h.newStart, h.newN)
		case dots:
			b.WriteString("@@ ... @@\n")
		default:
			b.WriteString("@@\n")
		}
		for _, l := range h.lines {
			b.WriteString(l)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// recount sets a hunk's counts from its lines.
func (h *dhunk) recount() {
	h.oldN, h.newN = 0, 0
	for _, l := range h.lines {
		switch {
		case strings.HasPrefix(l, "-"):
			h.oldN++
		case strings.HasPrefix(l, "+"):
			h.newN++
		default:
			h.oldN++
			h.newN++
		}
	}
}

// oldBlock returns the hunk's context and removed lines.
func (h *dhunk) oldBlock() []string {
	var out []string
	for _, l := range h.lines {
		if !strings.HasPrefix(l, "+") {
			out = append(out, l[1:])
		}
	}
	return out
}

// occurrences counts where block occurs as consecutive lines of text.
func occurrences(text string, block []string) int {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	n := 0
	for s := 0; s+len(block) <= len(lines); s++ {
		ok := true
		for i, b := range block {
			if lines[s+i] != b {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// wrap puts a diff into a reply as a model writes it.
func (g *gen) wrap(diff string, fenced bool) string {
	if !fenced {
		if g.r.IntN(2) == 0 {
			return diff
		}
		return "Here is the change.\n\n" + diff + "\nThis keeps the behaviour otherwise unchanged.\n"
	}
	return "Here is the change:\n\n```diff\n" + diff + "```\n\nLet me know if you want tests too.\n"
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

func names(rel string, prefix bool) (string, string, int) {
	if prefix {
		return "a/" + rel, "b/" + rel, 1
	}
	return rel, rel, 0
}

// make builds one case of a perturbation.
func (g *gen) make(name string, expect Outcome) (Case, error) {
	for attempt := 0; attempt < 200; attempt++ {
		c, ok, err := g.try(name, expect)
		if err != nil {
			return Case{}, err
		}
		if ok {
			c.Perturbation, c.Expect = name, expect
			return c, nil
		}
	}
	return Case{}, fmt.Errorf("could not build a case")
}

func (g *gen) try(name string, expect Outcome) (Case, bool, error) {
	rel, text, err := g.pick()
	if err != nil {
		return Case{}, false, err
	}
	prefix := g.r.IntN(3) != 0
	fenced := g.r.IntN(2) == 0
	oldName, newName, strip := names(rel, prefix)
	c := Case{Strip: strip}
	switch name {
	case "new file":
		if len(text) > 8000 {
			return c, false, nil
		}
		np := path.Join(path.Dir(rel), fmt.Sprintf("zz_generated_%d.go", g.r.IntN(1000)))
		// The content: another real, small file.
		_, content, err := g.pick()
		if err != nil {
			return c, false, err
		}
		if len(content) > 5000 {
			return c, false, nil
		}
		ls := splitLines(content)
		var b strings.Builder
		_, nn, _ := names(np, prefix)
		if prefix && g.r.IntN(2) == 0 {
			fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\n", np, np)
		}
		fmt.Fprintf(&b, "--- /dev/null\n+++ %s\n@@ -0,0 +1,%d @@\n", nn, len(ls))
		for _, l := range ls {
			b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
		}
		c.Before = []File{{rel, text}}
		c.After = []File{{rel, text}, {np, content}}
		c.Diff = g.wrap(b.String(), fenced)
		return c, true, nil
	case "deleted file":
		if len(text) > 12000 {
			return c, false, nil
		}
		ls := splitLines(text)
		var b strings.Builder
		if prefix && g.r.IntN(2) == 0 {
			fmt.Fprintf(&b, "diff --git a/%s b/%s\ndeleted file mode 100644\n", rel, rel)
		}
		fmt.Fprintf(&b, "--- %s\n+++ /dev/null\n@@ -1,%d +0,0 @@\n", oldName, len(ls))
		for _, l := range ls {
			b.WriteString("-" + strings.TrimSuffix(l, "\n") + "\n")
		}
		c.Before = []File{{rel, text}}
		c.After = nil
		c.Diff = g.wrap(b.String(), fenced)
		return c, true, nil
	}

	n := 1 + g.r.IntN(3)
	if name == "shuffled hunks" {
		n = 2 + g.r.IntN(2)
	}
	ops, after, ok := g.edit(text, n, name == "target region changed since")
	if !ok {
		return c, false, nil
	}
	target := rel
	if name == "renamed file" {
		target = path.Join(path.Dir(rel), "renamed_"+path.Base(rel))
		oldName, newName, strip = "a/"+rel, "b/"+target, 1
		c.Strip = 1
	}
	d := parseUnified(patch.Unified(oldName, newName, text, after, 3))
	if len(d.hunks) != n {
		return c, false, nil
	}
	for _, h := range d.hunks {
		if occurrences(text, h.oldBlock()) != 1 {
			return c, false, nil
		}
	}
	before, want := text, after
	style := numbered
	if name == "renamed file" {
		d.head = fmt.Sprintf("diff --git a/%s b/%s\nsimilarity index 95%%\nrename from %s\nrename to %s\n", rel, target, rel, target) + d.head
		fenced = false
	}
	lines := splitLines(text)
	far := func(i, dist int) bool {
		for _, o := range ops {
			if i > o.at-dist && i < o.at+o.del+dist {
				return false
			}
		}
		return i > 0 && i < len(lines)
	}
	switch name {
	case "clean", "renamed file":
	case "shifted line numbers":
		delta := 3 + g.r.IntN(38)
		if g.r.IntN(2) == 0 {
			delta = -delta
		}
		for _, h := range d.hunks {
			h.oldStart = max(1, h.oldStart+delta)
			h.newStart = max(1, h.newStart+delta)
		}
	case "missing line numbers":
		style = dots + headerStyle(g.r.IntN(2))
	case "wrong counts":
		for _, h := range d.hunks {
			h.oldN = max(0, h.oldN+[]int{-2, -1, 1, 2}[g.r.IntN(4)])
			h.newN = max(0, h.newN+[]int{-2, -1, 0, 1, 2}[g.r.IntN(5)])
		}
	case "dropped context":
		for _, h := range d.hunks {
			lead := g.r.IntN(3)
			trail := g.r.IntN(3)
			if lead+trail == 0 {
				lead = 1
			}
			for k := 0; k < lead && len(h.lines) > 1 && strings.HasPrefix(h.lines[0], " ") && strings.HasPrefix(h.lines[1], " "); k++ {
				h.lines = h.lines[1:]
				h.oldStart++
				h.newStart++
			}
			for k := 0; k < trail && len(h.lines) > 1 && strings.HasPrefix(h.lines[len(h.lines)-1], " ") && strings.HasPrefix(h.lines[len(h.lines)-2], " "); k++ {
				h.lines = h.lines[:len(h.lines)-1]
			}
			h.recount()
		}
	case "added context (partly invented)":
		for _, h := range d.hunks {
			top := h.oldStart - 1 // 0-based index of the first old line
			bottom := top + h.oldN
			var pre, post []string
			for k := 1; k <= 2 && top-k >= 0; k++ {
				pre = append([]string{" " + strings.TrimSuffix(lines[top-k], "\n")}, pre...)
			}
			for k := 0; k < 2 && bottom+k < len(lines); k++ {
				post = append(post, " "+strings.TrimSuffix(lines[bottom+k], "\n"))
			}
			if g.r.IntN(2) == 0 && len(pre) > 0 {
				pre[0] = " " + indentOf(pre[0][1:]) + "// (context the model remembered wrongly)"
			} else if len(post) > 0 && g.r.IntN(2) == 0 {
				post[len(post)-1] = " " + indentOf(post[len(post)-1][1:]) + "// (context the model remembered wrongly)"
			}
			h.lines = append(append(pre, h.lines...), post...)
			h.oldStart -= len(pre)
			h.newStart -= len(pre)
			h.recount()
		}
	case "blank-line drift":
		blanks := 0
		for _, h := range d.hunks {
			var out []string
			dropped := false
			for k, l := range h.lines {
				if l == " " {
					blanks++
					interior := k > 0 && k < len(h.lines)-1 && strings.HasPrefix(h.lines[k-1], " ") && strings.HasPrefix(h.lines[k+1], " ")
					if interior && !dropped && g.r.IntN(2) == 0 {
						dropped = true
						continue
					}
					l = ""
				}
				out = append(out, l)
			}
			h.lines = out
		}
		if blanks == 0 {
			return c, false, nil
		}
	case "trailing whitespace":
		for _, h := range d.hunks {
			for k, l := range h.lines {
				if !strings.HasPrefix(l, "+") && g.r.IntN(2) == 0 {
					h.lines[k] = l + []string{" ", "  ", "\t"}[g.r.IntN(3)]
				}
			}
		}
	case "indentation shift":
		shifted := 0
		for _, h := range d.hunks {
			all := true
			for _, l := range h.lines {
				if strings.TrimSpace(l[min(1, len(l)):]) != "" && !strings.HasPrefix(l[1:], "\t") {
					all = false
				}
			}
			if !all {
				continue
			}
			shifted++
			for k, l := range h.lines {
				if len(l) > 1 && l[1] == '\t' {
					h.lines[k] = l[:1] + l[2:]
				}
			}
		}
		if shifted == 0 {
			return c, false, nil
		}
	case "tabs to spaces":
		for _, h := range d.hunks {
			for k, l := range h.lines {
				if len(l) == 0 {
					continue
				}
				body := l[1:]
				t := len(body) - len(strings.TrimLeft(body, "\t"))
				h.lines[k] = l[:1] + strings.Repeat("    ", t) + body[t:]
			}
		}
	case "CRLF file, LF diff":
		before, want = crlf(text), crlf(after)
	case "shuffled hunks":
		hs := d.hunks
		for {
			g.r.Shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
			if hs[0].oldStart > hs[1].oldStart {
				break
			}
		}
	case "missing + markers":
		var cands []*dhunk
		for _, h := range d.hunks {
			for _, l := range h.lines {
				if strings.HasPrefix(l, "+") && strings.TrimSpace(l[1:]) != "" {
					cands = append(cands, h)
					break
				}
			}
		}
		if len(cands) == 0 {
			return c, false, nil
		}
		h := cands[g.r.IntN(len(cands))]
		removed := 0
		for k, l := range h.lines {
			if strings.HasPrefix(l, "+") && strings.TrimSpace(l[1:]) != "" && (removed == 0 || g.r.IntN(3) != 0) {
				h.lines[k] = l[1:]
				removed++
			}
		}
	case "unrelated region changed since":
		var at int
		found := false
		for range 50 {
			at = 1 + g.r.IntN(len(lines)-1)
			if far(at, 15) {
				found = true
				break
			}
		}
		if !found {
			return c, false, nil
		}
		user := op{at: at, add: []string{"// Added by the user while the model was thinking.\n", "\n"}}
		before = join(applyOps(lines, []op{user}))
		want = join(applyOps(lines, append(append([]op(nil), ops...), user)))
	case "... elision":
		h := d.hunks[g.r.IntN(len(d.hunks))]
		ind := "\t"
		for _, l := range h.lines {
			if len(l) > 1 {
				ind = indentOf(l[1:])
				break
			}
		}
		ph := []string{"// ... existing code ...", "// ... rest of the function unchanged", "// ..."}[g.r.IntN(3)]
		// The model skipped two inner context lines with an elision
		// comment, or replaced code by one.
		var inner []int
		for k := 2; k+2 < len(h.lines)-2; k++ {
			if strings.HasPrefix(h.lines[k], " ") && strings.HasPrefix(h.lines[k+1], " ") {
				inner = append(inner, k)
			}
		}
		if g.r.IntN(2) == 0 && len(inner) > 0 {
			k := inner[g.r.IntN(len(inner))]
			h.lines = append(h.lines[:k:k], append([]string{" " + ind + ph}, h.lines[k+2:]...)...)
		} else {
			// The model replaced code by an elision comment.
			var out []string
			done := false
			for _, l := range h.lines {
				if !done && strings.HasPrefix(l, "+") {
					out = append(out, "+"+ind+ph)
					done = true
				}
				out = append(out, l)
			}
			if !done {
				out = append(out, "+"+ind+ph)
			}
			h.lines = out
		}
	case "truncated last hunk":
		h := d.hunks[len(d.hunks)-1]
		last := -1
		for k, l := range h.lines {
			if strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-") {
				last = k
			}
		}
		if last < 1 {
			return c, false, nil
		}
		cut := 1 + g.r.IntN(last)
		h.lines = h.lines[:cut]
		text := d.render(numbered)
		if g.r.IntN(3) == 0 {
			// Cut in the middle of the last line.
			l := h.lines[cut-1]
			text = strings.TrimSuffix(text, "\n")
			text = text[:len(text)-len(l)/2]
		}
		if fenced {
			c.Diff = "Here is the change:\n\n```diff\n" + text
		} else {
			c.Diff = text
		}
		c.Before = []File{{rel, before}}
		return c, true, nil
	case "duplicated target block":
		block := d.hunks[0].oldBlock()
		var at int
		found := false
		for range 50 {
			at = 1 + g.r.IntN(len(lines)-1)
			if far(at, 30) {
				found = true
				break
			}
		}
		if !found {
			return c, false, nil
		}
		var add []string
		for _, b := range block {
			add = append(add, b+"\n")
		}
		before = join(applyOps(lines, []op{{at: at, add: add}}))
		style = dots + headerStyle(g.r.IntN(2))
	case "target region changed since":
		o := ops[0]
		if o.del == 0 {
			return c, false, nil
		}
		k := o.at + g.r.IntN(o.del)
		changed := append([]string(nil), lines...)
		changed[k] = strings.TrimSuffix(changed[k], "\n") + " // edited by the user\n"
		before = join(changed)
	default:
		return c, false, fmt.Errorf("unknown perturbation %q", name)
	}
	c.Diff = g.wrap(d.render(style), fenced)
	if name == "renamed file" {
		c.Diff = d.render(style)
	}
	c.Before = []File{{rel, before}}
	if expect == Apply {
		c.After = []File{{target, want}}
	}
	return c, true, nil
}
