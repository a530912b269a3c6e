package patch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sourcegraph/go-diff/diff"
)

// CheckWellFormed parses text, a diff this package wrote (Unified), with
// github.com/sourcegraph/go-diff — an independent parser that git-based
// tools share — and checks every hunk's header counts against its body:
// a strict reader must accept the diffs kimi-lsp hands to other tools
// (kimi-lsp edit's output, meant for git apply or patch) as they are.
// (For reading model-written diffs this package has its own parser,
// because go-diff accepts wrong counts and truncated hunks silently —
// exactly what CheckWellFormed checks after it.)
//
// It is a test oracle only. kimi-lsp edit ran it on every diff it printed
// until issue 31, when it had caught nothing: not one of the 622 diffs of
// the cases bench/patchbench applies on its two seeds (go run
// ./bench/patchbench -crosscheck; bench/README.md), nor of the inputs
// FuzzUnifiedWellFormed and FuzzApply explore. This file's tests and
// FuzzUnifiedWellFormed keep Unified to it.
func CheckWellFormed(text string) error {
	files, err := diff.ParseMultiFileDiff([]byte(text))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrParse, err)
	}
	if len(files) == 0 && text != "" {
		return fmt.Errorf("%w: no file diff found", ErrParse)
	}
	for _, f := range files {
		for i, h := range f.Hunks {
			var orig, nw int32
			for _, line := range bytes.SplitAfter(h.Body, []byte("\n")) {
				if len(line) == 0 {
					continue
				}
				switch line[0] {
				case ' ':
					orig++
					nw++
				case '-':
					orig++
				case '+':
					nw++
				case '\\':
				default:
					return fmt.Errorf("%w: %s hunk %d: line without a marker: %q", ErrParse, f.NewName, i+1, line)
				}
			}
			if orig != h.OrigLines || nw != h.NewLines {
				return fmt.Errorf("%w: %s hunk %d: header says -%d +%d, body has -%d +%d", ErrParse, f.NewName, i+1, h.OrigLines, h.NewLines, orig, nw)
			}
		}
	}
	return nil
}

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
		d := Unified("a/f.go", "b/f.go", before, after, 3)
		if err := CheckWellFormed(d); err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, d)
		}
	}
}

func TestCheckWellFormedRejects(t *testing.T) {
	for _, bad := range []string{
		"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n",    // counts say 3, body has 2
		"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\nb\n-c\n+d\n", // a line without a marker
	} {
		if err := CheckWellFormed(bad); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}
