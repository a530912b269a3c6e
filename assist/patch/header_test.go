package patch_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// tieFile is a text of n numbered lines with block copied in after each
// of the 1-based lines of at.
func tieFile(n int, block string, at ...int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
		for _, a := range at {
			if a == i {
				b.WriteString(block)
			}
		}
	}
	return b.String()
}

// TestHeaderSettlesFarApartPlaces: a hunk whose lines occur at two places
// is placed where its header's line (corrected by the offset the earlier
// hunks showed) names one of them, only when the other lies 20 lines or
// more away; a header naming a line between two places, or two places
// nearer than that, leaves it refused as ambiguous (issue 33 item 22).
func TestHeaderSettlesFarApartPlaces(t *testing.T) {
	const block = "\tx := compute()\n\tif x > 0 {\n\t\treturn x\n\t}\n"
	hunk := func(start int) string {
		return fmt.Sprintf("@@ -%d,4 +%d,4 @@\n \tx := compute()\n \tif x > 0 {\n-\t\treturn x\n+\t\treturn x + 1\n \t}\n", start, start)
	}
	one := func(start int) string { return "--- a/t.go\n+++ b/t.go\n" + hunk(start) }
	// The block after line 10 starts at line 11; after line 40, at line 45
	// (the first copy's 4 lines come before it).
	far := tieFile(60, block, 10, 40)
	near := tieFile(60, block, 10, 22)         // starts 11 and 27: 16 lines apart
	edit := func(text string, at int) string { // the copy starting at 0-based line at edited
		ls := strings.SplitAfter(text, "\n")
		ls[at+2] = "\t\treturn x + 1\n"
		return strings.Join(ls, "")
	}
	tests := []struct {
		name, text, diff string
		want             string // "" when refused as ambiguous
	}{
		{"names the first, the other 34 lines away", far, one(11), edit(far, 10)},
		{"names the second", far, one(45), edit(far, 44)},
		{"names it two lines off", far, one(13), edit(far, 10)},
		{"names a line between the two", far, one(28), ""},
		{"names a line 4 off the first", far, one(15), ""},
		{"two places 16 lines apart", near, one(11), ""},
		{"no line number", far, "--- a/t.go\n+++ b/t.go\n@@\n \tx := compute()\n \tif x > 0 {\n-\t\treturn x\n+\t\treturn x + 1\n \t}\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := patch.NewEditSet(workspace(t, map[string]string{"t.go": tc.text}), patch.Options{AllowBrokenGo: true})
			err := set.ApplyDiff(tc.diff)
			if tc.want == "" {
				if !errors.Is(err, patch.ErrAmbiguous) {
					t.Fatalf("got %v, want ErrAmbiguous", err)
				}
				return
			}
			if err != nil {
				t.Fatal(patch.Feedback(err))
			}
			ch, err := set.Changes()
			if err != nil || len(ch) != 1 || ch[0].After != tc.want {
				t.Fatalf("got %v %v, want the named copy edited", ch, err)
			}
			if m := set.Matches(); len(m) != 1 || !m[0].ByHeader {
				t.Errorf("matches %+v, want one chosen by its header", m)
			}
		})
	}

	// The offset of the hunk before: the model's numbers are 30 too low
	// throughout ("line 30" is file line 34, its header says 4). The
	// second hunk's 12 names the first copy (at 11) as written, the second
	// (at 45) corrected: the corrected line decides.
	diff := "--- a/t.go\n+++ b/t.go\n@@ -4,2 +4,2 @@\n-line 30\n+line thirty\n line 31\n" + hunk(12)
	set := patch.NewEditSet(workspace(t, map[string]string{"t.go": far}), patch.Options{AllowBrokenGo: true})
	if err := set.ApplyDiff(diff); err != nil {
		t.Fatalf("with the earlier hunk's offset: %s", patch.Feedback(err))
	}
	if m := set.Matches(); len(m) != 2 || m[1].Line != 45 || !m[1].ByHeader {
		t.Errorf("matches %+v, want hunk 2 at line 45, chosen by its corrected header", m)
	}
}
