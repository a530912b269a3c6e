package corpus

import (
	"fmt"
	"path"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// dhunk is a hunk being perturbed; lines carry their marker, no newline.
type dhunk struct {
	oldStart, oldN, newStart, newN int
	lines                          []string
	header                         string // written as is when set
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
			hh, _ := linediff.ParseHunkHeader(l) // Unified writes both counts
			h.oldStart, h.oldN, h.newStart, h.newN = hh.OldStart, hh.OldCount, hh.NewStart, hh.NewCount
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
		switch {
		case h.header != "":
			b.WriteString(h.header + "\n")
		case style == numbered:
			fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", h.oldStart, h.oldN, h.newStart, h.newN)
		case style == dots:
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
	return runs(strings.Split(strings.TrimSuffix(text, "\n"), "\n"), block)
}

// runs counts the places where block occurs as consecutive lines of lines.
func runs(lines, block []string) int {
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

// make builds one case of a perturbation in the current language, or in
// the next one that allows it (a perturbation like "missing + markers" has
// no clear reading in a file indented with spaces).
func (g *gen) make(name string, expect Outcome) (Case, error) {
	for range g.langs {
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
		g.lang = (g.lang + 1) % len(g.langs)
	}
	return Case{}, fmt.Errorf("could not build a case")
}

func (g *gen) try(name string, expect Outcome) (Case, bool, error) {
	rel, text, err := g.pick()
	if err != nil {
		return Case{}, false, err
	}
	u, su := unit(text), swapUnit(text)
	prefix := g.r.IntN(3) != 0
	fenced := g.r.IntN(2) == 0
	oldName, newName, strip := names(rel, prefix)
	c := Case{Strip: strip}
	switch name {
	case "new file":
		if len(text) > 8000 {
			return c, false, nil
		}
		np := path.Join(path.Dir(rel), fmt.Sprintf("zz_generated_%d%s", g.r.IntN(1000), path.Ext(rel)))
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

	if strings.HasPrefix(name, "21.23 ") {
		return g.try21(name, rel, text, prefix, fenced)
	}
	n := 1 + g.r.IntN(3)
	if name == "shuffled hunks" {
		n = 2 + g.r.IntN(2)
	}
	targetChanged := name == "target region changed since" || name == "target changed, mixed shapes"
	ops, after, ok := g.edit(text, n, targetChanged)
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
	intended := "" // for REFUSE cases a correct second answer can reach
	style := numbered
	checkReading := true
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
	farLine := func(dist int) (int, bool) {
		for range 50 {
			at := 1 + g.r.IntN(len(lines)-1)
			if far(at, dist) {
				return at, true
			}
		}
		return 0, false
	}
	// plant copies block far from the edits: the file as it is then, and
	// as the intended edit leaves it.
	plant := func(block []string) (before, intended string, at int, ok bool) {
		if at, ok = farLine(30); !ok {
			return "", "", 0, false
		}
		var add []string
		for _, b := range block {
			add = append(add, b+"\n")
		}
		p := op{at: at, add: add}
		return join(applyOps(lines, []op{p})), join(applyOps(lines, append(append([]op(nil), ops...), p))), at, true
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
		checkReading = false
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
			comment := g.cur().comment + " (context the model remembered wrongly)"
			if g.r.IntN(2) == 0 && len(pre) > 0 {
				pre[0] = " " + indentOf(pre[0][1:]) + comment
			} else if len(post) > 0 && g.r.IntN(2) == 0 {
				post[len(post)-1] = " " + indentOf(post[len(post)-1][1:]) + comment
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
				if strings.TrimSpace(l[min(1, len(l)):]) != "" && !strings.HasPrefix(l[1:], u) {
					all = false
				}
			}
			if !all {
				continue
			}
			shifted++
			for k, l := range h.lines {
				if len(l) > 1 && strings.HasPrefix(l[1:], u) {
					h.lines[k] = l[:1] + l[1+len(u):]
				}
			}
		}
		if shifted == 0 {
			return c, false, nil
		}
	case "tabs ↔ spaces":
		changed := false
		for _, h := range d.hunks {
			changed = g.swapIndent(h, su, false) || changed
		}
		if !changed {
			return c, false, nil
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
		// Only lines that cannot be read as context once their "+" is
		// gone (not starting with a space) have one clear reading.
		var cands []*dhunk
		for _, h := range d.hunks {
			for _, l := range h.lines {
				if strings.HasPrefix(l, "+") && strings.TrimSpace(l[1:]) != "" && !strings.HasPrefix(l, "+ ") {
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
			if strings.HasPrefix(l, "+") && strings.TrimSpace(l[1:]) != "" && !strings.HasPrefix(l, "+ ") && (removed == 0 || g.r.IntN(3) != 0) {
				h.lines[k] = l[1:]
				removed++
			}
		}
	case "unrelated region changed since":
		at, ok := farLine(15)
		if !ok {
			return c, false, nil
		}
		cm := g.cur().comment
		user := op{at: at, add: []string{cm + " Added by the user while the model was thinking.\n", "\n"}}
		before = join(applyOps(lines, []op{user}))
		want = join(applyOps(lines, append(append([]op(nil), ops...), user)))
	case "16.1 counts far off":
		for _, h := range d.hunks {
			g.countsOff(h)
		}
	case "16.2 leading context dropped, header kept":
		for _, h := range d.hunks {
			g.dropLead(h)
		}
	case "16.3 numberless headers":
		for _, h := range d.hunks {
			g.numberless(h)
		}
	case "16.4 whitespace drift on context":
		for _, h := range d.hunks {
			g.trailingWS(h)
			if g.r.IntN(2) == 0 {
				g.swapIndent(h, su, true)
			}
		}
	case "mix: 2–4 shapes per hunk":
		for _, h := range d.hunks {
			g.mixShapes(h, su)
		}
	case "mix: all four 16.x shapes":
		for _, h := range d.hunks {
			g.dropLead(h)
			g.countsOff(h)
			if g.r.IntN(2) == 0 {
				g.numberless(h)
			}
			g.trailingWS(h)
		}
	case "... elision":
		intended = after
		h := d.hunks[g.r.IntN(len(d.hunks))]
		ind := u
		for _, l := range h.lines {
			if len(l) > 1 {
				ind = indentOf(l[1:])
				break
			}
		}
		cm := g.cur().comment
		ph := []string{cm + " ... existing code ...", cm + " ... rest of the function unchanged", cm + " ..."}[g.r.IntN(3)]
		// The model replaced code by an elision comment. (An elision
		// line standing for context lines has one reading: see the
		// 21.23 elided-gap rows.)
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
	case "truncated reply (fence never closed)":
		// The stream stopped inside the code block: the fence is never
		// closed. (A bare reply cut at a line boundary reads as complete;
		// the tool loop refuses replies the provider reports as cut off.)
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
		c.Diff = "Here is the change:\n\n```diff\n" + text
		c.Before = []File{{rel, before}}
		c.Intended = []File{{rel, after}}
		return c, true, nil
	case "duplicated target block":
		var ok bool
		if before, intended, _, ok = plant(d.hunks[0].oldBlock()); !ok {
			return c, false, nil
		}
		style = dots + headerStyle(g.r.IntN(2))
	case pThinFar:
		// The model trims a hunk's leading context; what is left occurs
		// twice in the file, 30 lines or more apart, and the header's
		// numbers (every hunk's, as the model read the file) name the
		// place the model meant: the header settles it (D84).
		k := g.r.IntN(len(d.hunks))
		h := d.hunks[k]
		lead := h.leadCtx()
		h.lines = h.lines[lead:]
		if !h.hasDelete() && h.leadCtx() == 0 && h.trailCtx() == 0 {
			return c, false, nil
		}
		var at int
		var ok bool
		if before, intended, at, ok = plant(h.oldBlock()); !ok {
			return c, false, nil
		}
		h.oldStart += lead
		h.newStart += lead
		d.shiftFrom(at, len(h.oldBlock()))
		h.recount()
		if g.r.IntN(2) == 0 {
			g.trailingWS(h)
		}
		if clearReading(before, h) < 2 {
			return c, false, nil
		}
		want, intended, checkReading = intended, "", false
	case pThinNear, pThinBetween:
		var ok bool
		if before, intended, ok = g.thinTwice(name, d, lines, ops); !ok {
			return c, false, nil
		}
	case "target region changed since", "target changed, mixed shapes":
		o := ops[0]
		if o.del == 0 {
			return c, false, nil
		}
		k := o.at + g.r.IntN(o.del)
		changed := append([]string(nil), lines...)
		changed[k] = strings.TrimSuffix(changed[k], "\n") + " " + g.cur().comment + " edited by the user\n"
		before = join(changed)
		if name == "target changed, mixed shapes" {
			for _, h := range d.hunks {
				g.mixShapes(h, su)
			}
		}
	default:
		return c, false, fmt.Errorf("unknown perturbation %q", name)
	}
	if expect == Apply && checkReading {
		// One clear reading: every hunk's old lines, whitespace set
		// aside, occur once in the file the diff is applied to.
		for _, h := range d.hunks {
			if clearReading(before, h) != 1 {
				return c, false, nil
			}
		}
	}
	c.Diff = g.wrap(d.render(style), fenced)
	if name == "renamed file" {
		c.Diff = d.render(style)
	}
	c.Before = []File{{rel, before}}
	if expect == Apply {
		c.After = []File{{target, want}}
	}
	if intended != "" {
		c.Intended = []File{{rel, intended}}
	}
	return c, true, nil
}
