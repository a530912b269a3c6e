// Package linediff is the one line diff of kimi-lsp: Myers' O(ND) greedy
// shortest edit script between two sequences of lines. The prompt cache's
// edit log (cache) and the edit applier's minimal edits, rebasing and
// unified output (assist/patch) both use it. It is a leaf: it imports
// nothing of the project, so any package may use it. It also holds what
// every reader of diffs shares: the one line splitter (SplitLines) and the
// one reader of unified hunk headers (ParseHunkHeader).
package linediff

import (
	"strconv"
	"strings"
)

// Op is one step of an edit script.
type Op uint8

const (
	// Equal keeps a line of both sequences.
	Equal Op = iota
	// Delete removes a line of the first sequence.
	Delete
	// Insert adds a line of the second sequence.
	Insert
)

// Diff returns a shortest edit script turning a into b, each run of
// changes ordered deletions first, then insertions. Lines are compared as
// whole strings. When the script would need more than maxCost deleted plus
// inserted lines, Diff gives up searching and returns a script that
// deletes all of a and inserts all of b (the caller's common prefix and
// suffix, if it trimmed them, stay equal). A maxCost of 0 or less means no
// bound.
func Diff(a, b []string, maxCost int) []Op {
	x, y := intern(a, b)
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return whole(n, m)
	}
	maxD := n + m
	if maxCost > 0 {
		maxD = min(maxD, maxCost)
	}
	// v[k+off] is the furthest x on diagonal k; trace keeps the live part
	// of v after every round d.
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		for k := -d; k <= d; k += 2 {
			var px int
			if k == -d || (k != d && v[k-1+off] < v[k+1+off]) {
				px = v[k+1+off] // down: insertion
			} else {
				px = v[k-1+off] + 1 // right: deletion
			}
			py := px - k
			for px < n && py < m && x[px] == y[py] {
				px++
				py++
			}
			v[k+off] = px
			if px >= n && py >= m {
				found = d
			}
		}
		snap := make([]int, 2*d+1)
		copy(snap, v[off-d:off+d+1])
		trace = append(trace, snap)
	}
	if found < 0 {
		return whole(n, m)
	}
	// Walk back from (n, m), collecting the steps in reverse.
	var rev []Op
	px, py := n, m
	for d := found; d > 0; d-- {
		prev := trace[d-1] // v after round d-1, diagonals -(d-1)..d-1
		get := func(k int) int { return prev[k+d-1] }
		k := px - py
		var pk int
		if k == -d || (k != d && get(k-1) < get(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		sx := get(pk)
		sy := sx - pk
		mx, my := sx+1, sy // after a deletion
		if pk == k+1 {
			mx, my = sx, sy+1 // after an insertion
		}
		for px > mx && py > my {
			rev = append(rev, Equal)
			px--
			py--
		}
		if pk == k+1 {
			rev = append(rev, Insert)
			py--
		} else {
			rev = append(rev, Delete)
			px--
		}
	}
	for px > 0 && py > 0 {
		rev = append(rev, Equal)
		px--
		py--
	}
	ops := make([]Op, len(rev))
	for i, o := range rev {
		ops[len(rev)-1-i] = o
	}
	return normalize(ops)
}

// intern maps the lines of a and b to small integers, equal lines to equal
// numbers, so that the search compares ints.
func intern(a, b []string) ([]int, []int) {
	ids := make(map[string]int, len(a))
	conv := func(ls []string) []int {
		out := make([]int, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	return conv(a), conv(b)
}

// whole deletes n lines and inserts m.
func whole(n, m int) []Op {
	ops := make([]Op, 0, n+m)
	for range n {
		ops = append(ops, Delete)
	}
	for range m {
		ops = append(ops, Insert)
	}
	return ops
}

// normalize orders each run of changes as deletions then insertions.
func normalize(ops []Op) []Op {
	out := make([]Op, 0, len(ops))
	for i := 0; i < len(ops); {
		if ops[i] == Equal {
			out = append(out, Equal)
			i++
			continue
		}
		d, ins := 0, 0
		for ; i < len(ops) && ops[i] != Equal; i++ {
			if ops[i] == Delete {
				d++
			} else {
				ins++
			}
		}
		out = append(out, whole(d, ins)...)
	}
	return out
}

// Change is one run of changes of an edit script: the lines
// [OldStart, OldStart+OldCount) of the first sequence are replaced by the
// lines [NewStart, NewStart+NewCount) of the second (0-based).
type Change struct {
	OldStart, OldCount int
	NewStart, NewCount int
}

// Changes groups an edit script into its runs of changes, in order.
func Changes(ops []Op) []Change {
	var out []Change
	i, j := 0, 0 // positions in the first and second sequence
	for k := 0; k < len(ops); {
		if ops[k] == Equal {
			i++
			j++
			k++
			continue
		}
		c := Change{OldStart: i, NewStart: j}
		for ; k < len(ops) && ops[k] != Equal; k++ {
			if ops[k] == Delete {
				c.OldCount++
				i++
			} else {
				c.NewCount++
				j++
			}
		}
		out = append(out, c)
	}
	return out
}

// SplitLines splits s into its lines, each keeping its "\n"; the last line
// lacks it when s does not end with one, and an empty s has no lines. It
// is the module's one line splitter: joined again, the lines are s byte
// for byte, which is what a line diff of texts needs. A reader that wants
// the lines without terminators trims each ("\r" too, where it reads
// text a model or an editor wrote).
func SplitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// HunkHeader is what a unified diff's hunk header says:
// "@@ -OldStart,OldCount +NewStart,NewCount @@".
type HunkHeader struct {
	OldStart, OldCount int
	NewStart, NewCount int
	// HasCounts is set when both counts are written; a range written
	// without its count ("-5") has the count 1, as in diff's output.
	HasCounts bool
}

// ParseHunkHeader reads a hunk header. It is the one reader of hunk
// headers (the edit applier's, the prompt cache's tests', the review of
// changes'), and as tolerant as the most tolerant of them, the applier
// reading model-written diffs: two or more "@", blanks optional after them
// and before the closing "@@", the counts optional, anything after the
// closing "@@" ignored, and the line may end right after the new range
// (with or without its "\n"). Blanks are ASCII spaces, tabs, CR, LF and
// FF. A number too large for an int reads as the largest int. ok is false
// when the line is not such a header (a bare "@@", "@@ ... @@"); callers
// that want more (both counts, say) check the fields.
func ParseHunkHeader(line string) (h HunkHeader, ok bool) {
	s := line
	if !strings.HasPrefix(s, "@@") {
		return HunkHeader{}, false
	}
	s = strings.TrimLeft(s, "@")
	s = trimBlanks(s)
	var oldCounted, newCounted bool
	if h.OldStart, h.OldCount, oldCounted, s, ok = readRange(s, '-'); !ok {
		return HunkHeader{}, false
	}
	t := trimBlanks(s)
	if len(t) == len(s) {
		return HunkHeader{}, false // the ranges need a blank between them
	}
	s = t
	if h.NewStart, h.NewCount, newCounted, s, ok = readRange(s, '+'); !ok {
		return HunkHeader{}, false
	}
	s = trimBlanks(s)
	if s != "" && !strings.HasPrefix(s, "@@") {
		return HunkHeader{}, false
	}
	h.HasCounts = oldCounted && newCounted
	return h, true
}

// readRange reads sign, a start and an optional ",count" at the start of
// s, and returns the rest.
func readRange(s string, sign byte) (start, count int, counted bool, rest string, ok bool) {
	if s == "" || s[0] != sign {
		return 0, 0, false, s, false
	}
	if start, s, ok = readNumber(s[1:]); !ok {
		return 0, 0, false, s, false
	}
	count = 1
	if strings.HasPrefix(s, ",") {
		if count, s, ok = readNumber(s[1:]); !ok {
			return 0, 0, false, s, false
		}
		counted = true
	}
	return start, count, counted, s, true
}

// readNumber reads the decimal digits at the start of s.
func readNumber(s string) (n int, rest string, ok bool) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, s, false
	}
	n, _ = strconv.Atoi(s[:i]) // out of range: the largest int
	return n, s[i:], true
}

// trimBlanks drops the leading blanks of s.
func trimBlanks(s string) string {
	return strings.TrimLeft(s, " \t\r\n\f")
}
