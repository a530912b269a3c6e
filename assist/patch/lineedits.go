package patch

import (
	"strings"

	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// Edit replaces the bytes [Start, End) of a text with NewText. Offsets are
// byte offsets into the text the edit was computed against.
type Edit struct {
	Start, End int
	NewText    string
}

// maxEditDistance bounds the line diff's work: past this many inserted and
// deleted lines the changed middle is replaced as one edit.
const maxEditDistance = 2000

// LineEdits returns minimal line-level edits turning before into after:
// each edit starts and ends at line boundaries of before (or at its end),
// edits are sorted and do not overlap, and unchanged lines are never part
// of an edit. Applying them to before yields after.
func LineEdits(before, after string) []Edit {
	if before == after {
		return nil
	}
	a, b := linediff.SplitLines(before), linediff.SplitLines(after)
	// Common prefix and suffix.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	offs := make([]int, len(a)+1)
	for i, l := range a {
		offs[i+1] = offs[i] + len(l)
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	var edits []Edit
	for _, c := range linediff.Changes(linediff.Diff(am, bm, maxEditDistance)) {
		edits = append(edits, Edit{Start: offs[pre+c.OldStart], End: offs[pre+c.OldStart+c.OldCount],
			NewText: strings.Join(bm[c.NewStart:c.NewStart+c.NewCount], "")})
	}
	return edits
}

// HunkGap is the most unchanged lines between two changes of one hunk
// (Hunks): changes this close share context lines in any unified diff with
// three lines of context, so a model's diff has them in one hunk.
const HunkGap = 3

// Hunks groups base's sorted, non-overlapping edits into hunks as a user
// reads them: edits with at most HunkGap unchanged lines between them are
// one hunk, one Edit spanning from its first edit's start to its last's
// end (the unchanged lines between kept in its NewText). LineEdits splits
// a model's hunk at every unchanged line; the hunks put it together again,
// so that a confirmation never offers half of one and counts say what the
// model changed.
func Hunks(base string, edits []Edit) []Edit {
	var out []Edit
	for _, e := range edits {
		if n := len(out); n > 0 && e.Start >= out[n-1].End && strings.Count(base[out[n-1].End:e.Start], "\n") <= HunkGap {
			last := &out[n-1]
			last.NewText += base[last.End:e.Start] + e.NewText
			last.End = e.End
			continue
		}
		out = append(out, e)
	}
	return out
}
