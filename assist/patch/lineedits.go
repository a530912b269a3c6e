package patch

import "strings"

// Edit replaces the bytes [Start, End) of a text with NewText. Offsets are
// byte offsets into the text the edit was computed against.
type Edit struct {
	Start, End int
	NewText    string
}

// maxEditDistance bounds the line diff's work: past this many inserted and
// deleted lines the changed middle is replaced as one edit.
const maxEditDistance = 2000

// splitKeep splits text into lines that keep their terminators.
func splitKeep(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// LineEdits returns minimal line-level edits turning before into after:
// each edit starts and ends at line boundaries of before (or at its end),
// edits are sorted and do not overlap, and unchanged lines are never part
// of an edit. Applying them to before yields after.
func LineEdits(before, after string) []Edit {
	if before == after {
		return nil
	}
	a, b := splitKeep(before), splitKeep(after)
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
	ops := diffLines(am, bm)
	var edits []Edit
	i, j := 0, 0 // positions in am, bm
	for k := 0; k < len(ops); {
		if ops[k] == opEqual {
			i++
			j++
			k++
			continue
		}
		start := i
		var nb strings.Builder
		for k < len(ops) && ops[k] != opEqual {
			if ops[k] == opDelete {
				i++
			} else {
				nb.WriteString(bm[j])
				j++
			}
			k++
		}
		edits = append(edits, Edit{Start: offs[pre+start], End: offs[pre+i], NewText: nb.String()})
	}
	return edits
}

type diffOp uint8

const (
	opEqual diffOp = iota
	opDelete
	opInsert
)

// diffLines returns an edit script from a to b (Myers' greedy algorithm,
// deletions before insertions within a change).
func diffLines(a, b []string) []diffOp {
	ids := map[string]int{}
	intern := func(ls []string) []int {
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
	x, y := intern(a), intern(b)
	n, m := len(x), len(y)
	whole := func() []diffOp {
		ops := make([]diffOp, 0, n+m)
		for range n {
			ops = append(ops, opDelete)
		}
		for range m {
			ops = append(ops, opInsert)
		}
		return ops
	}
	if n == 0 || m == 0 {
		return whole()
	}
	maxD := min(n+m, maxEditDistance)
	// v[k+off] is the furthest x on diagonal k; trace keeps a copy of the
	// live part of v for every d.
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		snap := make([]int, 2*d+1)
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
		for k := -d; k <= d; k++ {
			snap[k+d] = v[k+off]
		}
		trace = append(trace, snap)
	}
	if found < 0 {
		return whole()
	}
	// Backtrack.
	var rev []diffOp
	px, py := n, m
	for d := found; d > 0; d-- {
		prev := trace[d-1]
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
			rev = append(rev, opEqual)
			px--
			py--
		}
		if pk == k+1 {
			rev = append(rev, opInsert)
			py--
		} else {
			rev = append(rev, opDelete)
			px--
		}
	}
	for px > 0 && py > 0 {
		rev = append(rev, opEqual)
		px--
		py--
	}
	ops := make([]diffOp, len(rev))
	for i, o := range rev {
		ops[len(rev)-1-i] = o
	}
	return normalize(ops)
}

// normalize orders each run of changes as deletions then insertions.
func normalize(ops []diffOp) []diffOp {
	out := make([]diffOp, 0, len(ops))
	for i := 0; i < len(ops); {
		if ops[i] == opEqual {
			out = append(out, opEqual)
			i++
			continue
		}
		d, ins := 0, 0
		for i < len(ops) && ops[i] != opEqual {
			if ops[i] == opDelete {
				d++
			} else {
				ins++
			}
			i++
		}
		for range d {
			out = append(out, opDelete)
		}
		for range ins {
			out = append(out, opInsert)
		}
	}
	return out
}
