package patch

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// Rebase moves edits computed against base onto current, the same buffer
// after the user's later changes. It succeeds when the user's changes (a
// line-level diff of base and current) do not touch the lines the edits
// change: the edits come back with offsets into current. Otherwise it
// returns an error wrapping ErrStale that names the lines. Edits must be
// sorted, non-overlapping and inside base.
func Rebase(base, current string, edits []Edit) ([]Edit, error) {
	for i, e := range edits {
		if e.Start < 0 || e.End < e.Start || e.End > len(base) || (i > 0 && e.Start < edits[i-1].End) {
			return nil, fmt.Errorf("rebase: edit %d [%d,%d) is out of order or outside the text", i+1, e.Start, e.End)
		}
	}
	if base == current {
		return append([]Edit(nil), edits...), nil
	}
	user := LineEdits(base, current)
	lineOf := func(off int) int { return strings.Count(base[:off], "\n") + 1 }
	out := make([]Edit, 0, len(edits))
	for _, e := range edits {
		shift := 0
		for _, u := range user {
			if conflicts(e, u) {
				lastLine := lineOf(max(e.End-1, e.Start))
				return nil, fmt.Errorf("%w: the buffer's lines %d-%d changed since the edit was computed and the edit changes lines %d-%d; ask again",
					ErrStale, lineOf(u.Start), lineOf(max(u.End-1, u.Start)), lineOf(e.Start), lastLine)
			}
			if u.End <= e.Start {
				shift += len(u.NewText) - (u.End - u.Start)
			}
		}
		out = append(out, Edit{Start: e.Start + shift, End: e.End + shift, NewText: e.NewText})
	}
	return out, nil
}

// conflicts reports whether the user's change u touches the edit e. An
// insertion touches a change that begins or ends where it inserts.
func conflicts(e, u Edit) bool {
	eEmpty, uEmpty := e.Start == e.End, u.Start == u.End
	switch {
	case eEmpty && uEmpty:
		return e.Start == u.Start
	case eEmpty:
		return u.Start <= e.Start && e.Start <= u.End
	case uEmpty:
		return e.Start < u.Start && u.Start < e.End
	}
	return u.Start < e.End && e.Start < u.End
}

// ApplyEdits applies sorted, non-overlapping edits to text.
func ApplyEdits(text string, edits []Edit) (string, error) {
	sorted := sort.SliceIsSorted(edits, func(i, j int) bool { return edits[i].Start < edits[j].Start })
	if !sorted {
		return "", fmt.Errorf("edits are not sorted")
	}
	var b strings.Builder
	last := 0
	for i, e := range edits {
		if e.Start < last || e.End < e.Start || e.End > len(text) {
			return "", fmt.Errorf("edit %d [%d,%d) overlaps another or lies outside the text", i+1, e.Start, e.End)
		}
		b.WriteString(text[last:e.Start])
		b.WriteString(e.NewText)
		last = e.End
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// Unified renders the change from before to after as a unified diff with
// the given number of context lines, headed "--- oldName" and
// "+++ newName". Equal texts give "".
func Unified(oldName, newName, before, after string, context int) string {
	if before == after {
		return ""
	}
	a, b := linediff.SplitLines(before), linediff.SplitLines(after)
	ops := linediff.Diff(a, b, maxEditDistance)
	type rec struct {
		op     linediff.Op
		ai, bi int
	}
	recs := make([]rec, 0, len(ops))
	ai, bi := 0, 0
	for _, o := range ops {
		recs = append(recs, rec{o, ai, bi})
		switch o {
		case linediff.Equal:
			ai++
			bi++
		case linediff.Delete:
			ai++
		case linediff.Insert:
			bi++
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	for i := 0; i < len(recs); {
		if recs[i].op == linediff.Equal {
			i++
			continue
		}
		// A hunk: from context before the change to context after the
		// last change closer than 2*context lines.
		start := max(i-context, 0)
		end := i
		for end < len(recs) {
			if recs[end].op != linediff.Equal {
				end++
				continue
			}
			run := end
			for run < len(recs) && recs[run].op == linediff.Equal {
				run++
			}
			if run == len(recs) || run-end > 2*context {
				end = min(end+context, len(recs))
				break
			}
			end = run
		}
		oldN, newN := 0, 0
		for _, r := range recs[start:end] {
			if r.op != linediff.Insert {
				oldN++
			}
			if r.op != linediff.Delete {
				newN++
			}
		}
		oldS, newS := recs[start].ai+1, recs[start].bi+1
		if oldN == 0 {
			oldS--
		}
		if newN == 0 {
			newS--
		}
		fmt.Fprintf(&sb, "@@ -%d,%d +%d,%d @@\n", oldS, oldN, newS, newN)
		for _, r := range recs[start:end] {
			var mark, line string
			switch r.op {
			case linediff.Equal:
				mark, line = " ", a[r.ai]
			case linediff.Delete:
				mark, line = "-", a[r.ai]
			case linediff.Insert:
				mark, line = "+", b[r.bi]
			}
			sb.WriteString(mark)
			if strings.HasSuffix(line, "\n") {
				sb.WriteString(line)
			} else {
				sb.WriteString(line)
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return sb.String()
}

// Diff renders the change as a git-style unified diff (3 lines of
// context), its paths relative to root (a/ and b/, /dev/null for a created
// or deleted file): what kimi-lsp edit prints, and what patchbench's
// cross-check reads.
func (c FileChange) Diff(root string) string {
	rel := func(p string) string {
		if r, err := filepath.Rel(root, p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	oldName, newName := "a/"+rel(c.Path), "b/"+rel(c.Path)
	switch c.Kind {
	case CreateFile:
		oldName = "/dev/null"
	case DeleteFile:
		newName = "/dev/null"
	case RenameFile:
		oldName = "a/" + rel(c.OldPath)
	}
	d := Unified(oldName, newName, c.Before, c.After, 3)
	if d == "" && c.Kind == RenameFile {
		d = "--- " + oldName + "\n+++ " + newName + "\n"
	}
	return d
}
