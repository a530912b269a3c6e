package patch_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

func TestLineEdits(t *testing.T) {
	tests := []struct {
		name, before, after string
		want                []patch.Edit
	}{
		{"equal", "a\nb\n", "a\nb\n", nil},
		{"replace middle", "a\nb\nc\n", "a\nB\nc\n", []patch.Edit{{2, 4, "B\n"}}},
		{"insert", "a\nc\n", "a\nb\nc\n", []patch.Edit{{2, 2, "b\n"}}},
		{"delete", "a\nb\nc\n", "a\nc\n", []patch.Edit{{2, 4, ""}}},
		{"two changes", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\nE\n", []patch.Edit{{0, 2, "A\n"}, {8, 10, "E\n"}}},
		{"append without newline", "a\nb", "a\nb\nc", []patch.Edit{{2, 3, "b\nc"}}},
		{"from empty", "", "x\n", []patch.Edit{{0, 0, "x\n"}}},
		{"to empty", "x\ny\n", "", []patch.Edit{{0, 4, ""}}},
		{"crlf", "a\r\nb\r\n", "a\r\nc\r\n", []patch.Edit{{3, 6, "c\r\n"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := patch.LineEdits(tc.before, tc.after)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("edit %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
			out, err := patch.ApplyEdits(tc.before, got)
			if err != nil || out != tc.after {
				t.Errorf("applying edits: got %q (%v), want %q", out, err, tc.after)
			}
		})
	}
}

// randomText builds texts from a small alphabet of lines so that random
// pairs share many lines.
func randomText(r *rand.Rand, n int) string {
	words := []string{"a", "b", "c", "func x() {", "}", "", "\treturn", "// c"}
	var b strings.Builder
	for range n {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteString("\n")
	}
	s := b.String()
	if r.IntN(4) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

func TestLineEditsRoundTripAndUnified(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		a, b := randomText(r, r.IntN(30)), randomText(r, r.IntN(30))
		edits := patch.LineEdits(a, b)
		got, err := patch.ApplyEdits(a, edits)
		if err != nil || got != b {
			t.Fatalf("case %d: edits %v turn %q into %q (%v), want %q", i, edits, a, got, err, b)
		}
		// Minimal: no edit keeps a line unchanged at its start or end.
		for _, e := range edits {
			old := a[e.Start:e.End]
			if old != "" && e.NewText != "" {
				ol, nl := strings.SplitAfter(old, "\n"), strings.SplitAfter(e.NewText, "\n")
				if ol[0] == nl[0] && strings.HasSuffix(ol[0], "\n") {
					t.Fatalf("case %d: edit %+v keeps its first line", i, e)
				}
			}
		}
		// The unified diff round-trips through Parse and the applier.
		u := patch.Unified("a/f.txt", "b/f.txt", a, b, 3)
		if a == b {
			continue
		}
		d := workspace(t, map[string]string{"f.txt": a})
		changes, err := patch.Apply(d, u, patch.Options{})
		if err != nil {
			// Small texts from a tiny alphabet are often ambiguous;
			// refusing is allowed, applying wrongly is not.
			continue
		}
		// The applier keeps the file's final-newline state.
		want := b
		switch {
		case b == "":
		case a == "" || strings.HasSuffix(a, "\n"):
			if !strings.HasSuffix(b, "\n") {
				want = b + "\n"
			}
		default:
			want = strings.TrimSuffix(b, "\n")
		}
		if changes[0].After != want {
			t.Fatalf("case %d: unified diff applied wrongly:\n%s\ngot %q want %q", i, u, changes[0].After, want)
		}
	}
}

func TestRebase(t *testing.T) {
	base := "one\ntwo\nthree\nfour\nfive\n"
	edits := patch.LineEdits(base, "one\ntwo\nTHREE\nfour\nfive\n")
	tests := []struct {
		name, current, want string
		err                 error
	}{
		{"unchanged", base, "one\ntwo\nTHREE\nfour\nfive\n", nil},
		{"typing above", "zero\none\ntwo\nthree\nfour\nfive\n", "zero\none\nTHREE\nfour\nfive\n", nil},
		{"typing below", "one\ntwo\nthree\nfour\nfive!\n", "one\ntwo\nTHREE\nfour\nfive!\n", nil},
		{"line above edited", "one\ntwo 2\nthree\nfour\nfive\n", "one\ntwo 2\nTHREE\nfour\nfive\n", nil},
		{"edited line changed", "one\ntwo\nthree 3\nfour\nfive\n", "", patch.ErrStale},
		{"edited line deleted", "one\ntwo\nfour\nfive\n", "", patch.ErrStale},
	}
	tests[1].want = "zero\none\ntwo\nTHREE\nfour\nfive\n"
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := patch.Rebase(base, tc.current, edits)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out, err := patch.ApplyEdits(tc.current, got)
			if err != nil || out != tc.want {
				t.Errorf("got %q (%v), want %q", out, err, tc.want)
			}
		})
	}
	// An insertion next to a user's change is stale: where it goes is unclear.
	ins := patch.LineEdits(base, "one\ntwo\nnew\nthree\nfour\nfive\n")
	if _, err := patch.Rebase(base, "one\ntwo!\nthree\nfour\nfive\n", ins); !errors.Is(err, patch.ErrStale) {
		t.Errorf("insertion after a changed line: got %v, want ErrStale", err)
	}
}

// TestHunks: line edits at most HunkGap unchanged lines apart are one
// hunk, farther ones are not, and applying the hunks gives the same text
// as applying the edits.
func TestHunks(t *testing.T) {
	base := "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\nl12\n"
	for _, tc := range []struct {
		name, after string
		want        int
	}{
		{"one change", strings.Replace(base, "l2\n", "L2\n", 1), 1},
		{"two changes one line apart", strings.NewReplacer("l2\n", "L2\n", "l4\n", "L4\n").Replace(base), 1},
		{"three unchanged lines apart", strings.NewReplacer("l2\n", "L2\n", "l6\n", "L6\n").Replace(base), 1},
		{"four unchanged lines apart", strings.NewReplacer("l2\n", "L2\n", "l7\n", "L7\n").Replace(base), 2},
		{"an insertion and a far deletion", strings.NewReplacer("l1\n", "l1\nnew\n", "l11\n", "").Replace(base), 2},
		{"nothing", base, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edits := patch.LineEdits(base, tc.after)
			hunks := patch.Hunks(base, edits)
			if len(hunks) != tc.want {
				t.Errorf("%d hunks from %d edits, want %d: %+v", len(hunks), len(edits), tc.want, hunks)
			}
			got, err := patch.ApplyEdits(base, hunks)
			if err != nil || got != tc.after {
				t.Errorf("the hunks give %q (%v), want %q", got, err, tc.after)
			}
		})
	}
}
