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
