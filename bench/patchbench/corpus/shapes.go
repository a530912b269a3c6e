package corpus

import (
	"strings"
)

// The shapes below are the habits of model-written diffs (issue 16). Each
// changes one hunk; the structural ones (dropping context) run before the
// clear-reading check, the cosmetic ones after it.

// isCtx reports whether a hunk line is context (a blank context line may
// have lost its space).
func isCtx(l string) bool { return l == "" || l[0] == ' ' }

// leadCtx and trailCtx count a hunk's leading and trailing context lines.
func (h *dhunk) leadCtx() int {
	n := 0
	for n < len(h.lines) && isCtx(h.lines[n]) {
		n++
	}
	return n
}

func (h *dhunk) trailCtx() int {
	n := 0
	for n < len(h.lines) && isCtx(h.lines[len(h.lines)-1-n]) {
		n++
	}
	return n
}

// hasDelete reports whether the hunk removes lines.
func (h *dhunk) hasDelete() bool {
	for _, l := range h.lines {
		if strings.HasPrefix(l, "-") {
			return true
		}
	}
	return false
}

// dropLead drops 1 to all leading context lines (all half of the time).
// The header is kept as it was: numbers and counts of the full hunk.
func (g *gen) dropLead(h *dhunk) {
	lead := h.leadCtx()
	if lead == 0 {
		return
	}
	k := lead
	if g.r.IntN(2) == 0 {
		k = 1 + g.r.IntN(lead)
	}
	// A pure insertion keeps at least one old line to anchor it.
	if !h.hasDelete() && k == lead && h.trailCtx() == 0 {
		k--
	}
	h.lines = h.lines[k:]
}

// dropTrail drops 1 to all trailing context lines, keeping an anchor.
func (g *gen) dropTrail(h *dhunk) {
	trail := h.trailCtx()
	if trail == 0 {
		return
	}
	k := 1 + g.r.IntN(trail)
	if !h.hasDelete() && k == trail && h.leadCtx() == 0 {
		k--
	}
	h.lines = h.lines[:len(h.lines)-k]
}

// countsOff sets header counts that do not fit the body: off by 2 to 6 on
// either side, as in "@@ -120,7 +120,9 @@" over a 4-line hunk.
func (g *gen) countsOff(h *dhunk) {
	old, nw := h.bodyCounts()
	deltas := []int{-3, -2, 2, 3, 4, 5, 6}
	h.oldN = max(0, old+deltas[g.r.IntN(len(deltas))])
	h.newN = max(0, nw+deltas[g.r.IntN(len(deltas))])
	if h.oldN == old && h.newN == nw {
		h.newN = nw + 2
	}
}

// bodyCounts counts the hunk's old and new lines.
func (h *dhunk) bodyCounts() (old, nw int) {
	for _, l := range h.lines {
		switch {
		case strings.HasPrefix(l, "-"):
			old++
		case strings.HasPrefix(l, "+"):
			nw++
		default:
			old++
			nw++
		}
	}
	return old, nw
}

// numberless gives the hunk a header without numbers.
func (g *gen) numberless(h *dhunk) {
	h.header = []string{"@@", "@@ ... @@", "@@ @@"}[g.r.IntN(3)]
}

// shift moves the header's line numbers by 3 to 40 lines.
func (g *gen) shift(h *dhunk) {
	delta := 3 + g.r.IntN(38)
	if g.r.IntN(2) == 0 {
		delta = -delta
	}
	h.oldStart = max(1, h.oldStart+delta)
	h.newStart = max(1, h.newStart+delta)
}

// trailingWS adds trailing blanks to some context lines (at least one).
func (g *gen) trailingWS(h *dhunk) {
	var ctx []int
	for k, l := range h.lines {
		if isCtx(l) {
			ctx = append(ctx, k)
		}
	}
	for n, k := range ctx {
		if n == 0 || g.r.IntN(2) == 0 {
			l := h.lines[k]
			if l == "" {
				l = " "
			}
			h.lines[k] = l + []string{" ", "  ", "\t"}[g.r.IntN(3)]
		}
	}
}

// swapIndent writes leading indentation in the other style: a tab file's
// tabs as runs of spaces, a space file's units as tabs. With ctxOnly only
// context lines drift; the model's removed and added lines keep the file's
// style.
func (g *gen) swapIndent(h *dhunk, u string, ctxOnly bool) bool {
	if u == "" {
		return false
	}
	width := []int{4, 8, 2}[g.r.IntN(3)]
	changed := false
	for k, l := range h.lines {
		if len(l) < 2 || (ctxOnly && !isCtx(l)) {
			continue
		}
		mark, body := l[:1], l[1:]
		var nb string
		if u == "\t" {
			t := len(body) - len(strings.TrimLeft(body, "\t"))
			nb = strings.Repeat(" ", width*t) + body[t:]
		} else {
			n := 0
			for strings.HasPrefix(body[n*len(u):], u) {
				n++
			}
			nb = strings.Repeat("\t", n) + body[n*len(u):]
		}
		if nb != body {
			changed = true
		}
		h.lines[k] = mark + nb
	}
	return changed
}

// blanksUnmarked writes blank context lines without their space.
func (g *gen) blanksUnmarked(h *dhunk) {
	for k, l := range h.lines {
		if l == " " {
			h.lines[k] = ""
		}
	}
}

// clearReading counts where a hunk's old lines occur in text, comparing
// lines with leading and trailing whitespace set aside and blank lines
// skipped on both sides. One is a clear reading.
func clearReading(text string, h *dhunk) int {
	var block []string
	for _, l := range h.lines {
		if l != "" && l[0] != ' ' && l[0] != '-' {
			continue // added, with or without its marker
		}
		if l != "" {
			l = l[1:]
		}
		if t := strings.TrimSpace(l); t != "" {
			block = append(block, t)
		}
	}
	if len(block) == 0 {
		return 0
	}
	var file []string
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			file = append(file, t)
		}
	}
	return runs(file, block)
}

// mixShapes applies 2 to 4 habits to a hunk, chosen at random: the
// structural ones (dropping context) first. su is the file's swapUnit.
func (g *gen) mixShapes(h *dhunk, su string) {
	type shape func()
	structural := []shape{func() { g.dropLead(h) }, func() { g.dropTrail(h) }}
	cosmetic := []shape{
		func() { g.countsOff(h) },
		func() { g.numberless(h) },
		func() { g.shift(h) },
		func() { g.trailingWS(h) },
		func() { g.swapIndent(h, su, false) },
		func() { g.swapIndent(h, su, true) },
		func() { g.blanksUnmarked(h) },
	}
	n := 2 + g.r.IntN(3)
	picked := map[int]bool{}
	all := len(structural) + len(cosmetic)
	for len(picked) < n {
		picked[g.r.IntN(all)] = true
	}
	for i := range structural {
		if picked[i] {
			structural[i]()
		}
	}
	// Whole-hunk and context-only indentation swaps exclude each other.
	if picked[len(structural)+4] && picked[len(structural)+5] {
		delete(picked, len(structural)+5)
	}
	for i := range cosmetic {
		if picked[len(structural)+i] {
			cosmetic[i]()
		}
	}
}
