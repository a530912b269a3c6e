package linediff_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// lcs is the length of a longest common subsequence, the naive way.
func lcs(a, b []string) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

// apply runs an edit script over a, taking inserted lines from b.
func apply(t *testing.T, a, b []string, ops []linediff.Op) []string {
	t.Helper()
	var out []string
	i, j := 0, 0
	for _, o := range ops {
		switch o {
		case linediff.Equal:
			if a[i] != b[j] {
				t.Fatalf("equal step pairs %q with %q", a[i], b[j])
			}
			out = append(out, a[i])
			i++
			j++
		case linediff.Delete:
			i++
		case linediff.Insert:
			out = append(out, b[j])
			j++
		}
	}
	if i != len(a) || j != len(b) {
		t.Fatalf("script stops at %d/%d of %d/%d", i, j, len(a), len(b))
	}
	return out
}

func random(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(rune('a' + r.IntN(4)))
	}
	return out
}

// The script is valid, shortest (its equal steps are a longest common
// subsequence), and each run of changes lists deletions first.
func TestDiffRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		a, b := random(r, r.IntN(12)), random(r, r.IntN(12))
		ops := linediff.Diff(a, b, 0)
		if got := apply(t, a, b, ops); !slices.Equal(got, b) {
			t.Fatalf("%q -> %q: script gives %q", a, b, got)
		}
		if eq := countOps(ops, linediff.Equal); eq != lcs(a, b) {
			t.Fatalf("%q -> %q: %d equal lines, want %d", a, b, eq, lcs(a, b))
		}
		for k := 1; k < len(ops); k++ {
			if ops[k-1] == linediff.Insert && ops[k] == linediff.Delete {
				t.Fatalf("insertion before deletion in %v", ops)
			}
		}
		var oldN, newN int
		for _, c := range linediff.Changes(ops) {
			oldN += c.OldCount
			newN += c.NewCount
		}
		if oldN != countOps(ops, linediff.Delete) || newN != countOps(ops, linediff.Insert) {
			t.Fatalf("changes do not add up for %v", ops)
		}
	}
}

func countOps(ops []linediff.Op, o linediff.Op) int {
	n := 0
	for _, x := range ops {
		if x == o {
			n++
		}
	}
	return n
}

// Past maxCost the script replaces everything.
func TestDiffBound(t *testing.T) {
	a := []string{"a", "b", "c", "d"}
	b := []string{"w", "x", "y", "z"}
	ops := linediff.Diff(a, b, 3)
	want := []linediff.Op{linediff.Delete, linediff.Delete, linediff.Delete, linediff.Delete,
		linediff.Insert, linediff.Insert, linediff.Insert, linediff.Insert}
	if !slices.Equal(ops, want) {
		t.Fatalf("got %v, want %v", ops, want)
	}
	got := linediff.Changes(linediff.Diff([]string{"k", "a", "k"}, []string{"k", "b", "c", "k"}, 0))
	if len(got) != 1 || got[0] != (linediff.Change{OldStart: 1, OldCount: 1, NewStart: 1, NewCount: 2}) {
		t.Fatalf("changes %+v", got)
	}
}
