package complete

import (
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// FuzzNextFromAnswer: whatever the model answers, checking it never
// panics, and a suggestion it keeps applies to the text, leaves the typed
// lines alone (no line inserted among them) and stays within maxLines.
func FuzzNextFromAnswer(f *testing.F) {
	const text = "package p\n\nfunc f(k int) int {\n\tx := factor\n\treturn x\n}\n"
	f.Add("--- a/p.go\n+++ b/p.go\n@@ -3,3 +3,3 @@\n func f(k int) int {\n-\tx := factor\n+\tx := k\n \treturn x\n")
	f.Add("--- a/p.go\n+++ b/p.go\n@@ -3,2 +3,2 @@\n-func f(k int) int {\n+func f(factor int) int {\n")
	f.Add("@@\n-\treturn x\n+\treturn x + 1\n")
	f.Add("```diff\n--- p.go\n+++ p.go\n@@ -5 +5 @@\n-\treturn x\n+\treturn -x\n```\n")
	f.Add("@@\n package p\n+// p\n \n")
	f.Add("@@\n-func f(k int) int {\n+func f(k int) int { // k\n")
	f.Add("```diff\n@@\n \treturn x\n }\n+\n+func g() {}\n```\n")
	f.Add("nothing to do")
	cfg := config.Default()
	cfg.NextEdit.MaxLines = 3
	// Lines 0-2 typed, as two edits: one block.
	typed := [][2]int{{0, 1}, {2, 2}}
	f.Fuzz(func(t *testing.T, answer string) {
		s, _ := nextFromAnswer(answer, "p.go", text, typed, cfg, "")
		if s == nil {
			return
		}
		after, err := patch.ApplyEdits(text, s.Edits)
		if err != nil {
			t.Fatalf("kept a suggestion that does not apply: %v", err)
		}
		if got := text[:s.Start] + s.NewText + text[s.End:]; got != after {
			t.Fatalf("span and edits disagree:\n%q\n%q", got, after)
		}
		for _, e := range s.Edits {
			if e.Start == e.End {
				if at := strings.Count(text[:e.Start], "\n"); 0 < at && at <= 2 {
					t.Fatalf("an edit inserts lines inside the typed block: %+v", e)
				}
				continue
			}
			if from := strings.Count(text[:e.Start], "\n"); from <= 2 { // from lines 0-2 on
				t.Fatalf("an edit changes a typed line: %+v", e)
			}
		}
		if s.Lines > cfg.NextEdit.MaxLines {
			t.Fatalf("%d lines kept, max %d", s.Lines, cfg.NextEdit.MaxLines)
		}
	})
}
