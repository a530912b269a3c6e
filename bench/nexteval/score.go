package main

import (
	"fmt"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// This file is the scoring, as edit-prediction evaluations score: on a
// case where something follows, whether the suggestion is exactly the
// next hunk (the text after it is the text after the true next hunk),
// whether it is at the right place, and the F1 of the lines it changes
// against the lines the next hunk changes, where they are;
// on every case, whether it reverses the user's edit; on a quiet case,
// whether it stays quiet.

// changedLines are the lines the change from before to after removes
// ("-" and the line) and writes ("+" and the line), without their "\n",
// as a multiset: each line once per time it is changed.
func changedLines(before, after string) map[string]int {
	out := map[string]int{}
	for _, e := range patch.LineEdits(before, after) {
		for _, l := range splitAdd(before[e.Start:e.End]) {
			out["-"+l]++
		}
		for _, l := range splitAdd(e.NewText) {
			out["+"+l]++
		}
	}
	return out
}

// placedLines are changedLines tied to where they are: a removed line
// with its line number in before, a written one with the line of before
// it is written at (its edit's first line). The same line changed in the
// wrong place is not the right change.
func placedLines(before, after string) map[string]int {
	out := map[string]int{}
	for _, e := range patch.LineEdits(before, after) {
		at := strings.Count(before[:e.Start], "\n")
		for i, l := range splitAdd(before[e.Start:e.End]) {
			out[fmt.Sprintf("-%d:%s", at+i, l)]++
		}
		for _, l := range splitAdd(e.NewText) {
			out[fmt.Sprintf("+%d:%s", at, l)]++
		}
	}
	return out
}

// lineF1 is the F1 of the changed lines got against the changed lines
// want (multisets): 1 when both are empty, 0 when one is.
func lineF1(got, want map[string]int) float64 {
	ng, nw, both := 0, 0, 0
	for l, n := range got {
		ng += n
		both += min(n, want[l])
	}
	for _, n := range want {
		nw += n
	}
	if ng == 0 && nw == 0 {
		return 1
	}
	if both == 0 {
		return 0
	}
	p, r := float64(both)/float64(ng), float64(both)/float64(nw)
	return 2 * p * r / (p + r)
}

// reverses reports whether the suggestion taking doc to pred undoes part
// of the user's edit from base to doc: it removes a line the user wrote or
// writes again a line the user removed (blank lines aside).
func reverses(base, doc, pred string) bool {
	user := changedLines(base, doc)
	for l := range changedLines(doc, pred) {
		if strings.TrimSpace(l[1:]) == "" {
			continue
		}
		undo := "+" + l[1:]
		if l[0] == '+' {
			undo = "-" + l[1:]
		}
		if user[undo] > 0 {
			return true
		}
	}
	return false
}

// score is one case's result: pred is the text after the suggestion
// shown ("" and shown false for none).
type score struct {
	shown, exact, reversed bool
	// placed: the suggestion changes lines where the next hunk does (its
	// changed lines, or the line an insertion goes before, overlap).
	placed bool
	f1     float64
}

// scoreCase scores a suggestion (shown, leaving pred) on a case's texts.
func scoreCase(t texts, shown bool, pred string) score {
	s := score{shown: shown}
	if !shown {
		pred = t.doc
	}
	if t.follows {
		s.exact = shown && pred == t.want
		s.placed = shown && overlaps(changedRanges(t.doc, pred), changedRanges(t.doc, t.want))
		s.f1 = lineF1(placedLines(t.doc, pred), placedLines(t.doc, t.want))
		if !shown {
			s.f1 = 0
		}
	}
	s.reversed = shown && reverses(t.base, t.doc, pred)
	return s
}

// changedRanges are the line ranges [from, to] (0-based, of before) the
// change from before to after replaces; an insertion is the line it goes
// before.
func changedRanges(before, after string) [][2]int {
	var out [][2]int
	for _, e := range patch.LineEdits(before, after) {
		from := strings.Count(before[:e.Start], "\n")
		to := from + max(strings.Count(before[e.Start:e.End], "\n")-1, 0)
		out = append(out, [2]int{from, to})
	}
	return out
}

// overlaps reports whether a range of a meets one of b.
func overlaps(a, b [][2]int) bool {
	for _, x := range a {
		for _, y := range b {
			if x[0] <= y[1] && y[0] <= x[1] {
				return true
			}
		}
	}
	return false
}
