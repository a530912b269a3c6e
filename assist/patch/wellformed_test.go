package patch_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/patch/patchtest"
)

// TestUnifiedIsWellFormed: what Unified writes, go-diff reads with counts
// that match the bodies, and applying it back gives the new text.
func TestUnifiedIsWellFormed(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	words := []string{"alpha", "beta", "", "gamma()", "\tdelta", "return x", "}"}
	text := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(words[rnd.IntN(len(words))])
			b.WriteString("\n")
		}
		return b.String()
	}
	for i := 0; i < 200; i++ {
		before := text(5 + rnd.IntN(40))
		lines := strings.SplitAfter(before, "\n")
		for k := 0; k < 1+rnd.IntN(4); k++ {
			j := rnd.IntN(len(lines))
			lines[j] = words[rnd.IntN(len(words))] + "\n"
		}
		after := strings.Join(lines, "")
		if rnd.IntN(5) == 0 {
			after = strings.TrimSuffix(after, "\n") // no final newline
		}
		d := patch.Unified("a/f.go", "b/f.go", before, after, 3)
		if _, _, err := patchtest.WellFormed(d); err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, d)
		}
	}
}

func TestCheckWellFormedRejects(t *testing.T) {
	for _, bad := range []string{
		"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n",    // counts say 3, body has 2
		"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\nb\n-c\n+d\n", // a line without a marker
	} {
		if _, _, err := patchtest.WellFormed(bad); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}
