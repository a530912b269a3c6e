package patch_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/patch/patchtest"
)

// A model's reply with a fenced diff whose line numbers are wrong and whose
// tabs became spaces: it applies, re-indented with tabs, and the result
// comes back as minimal line edits for one workspace/applyEdit.
func ExampleApply() {
	root, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(root)
	before := "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"
	_ = os.WriteFile(filepath.Join(root, "calc.go"), []byte(before), 0o644)
	files, _ := patchtest.NewDir(root)

	reply := "The operator is wrong:\n\n```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -10,3 +10,3 @@\n func Add(a, b int) int {\n-    return a - b\n+    return a + b\n }\n```\n"
	changes, err := patch.Apply(files, reply, patch.Options{})
	if err != nil {
		fmt.Println(patch.Feedback(err))
		return
	}
	for _, c := range changes {
		fmt.Println(filepath.Base(c.Path), c.Kind)
		for _, e := range patch.LineEdits(c.Before, c.After) {
			fmt.Printf("replace bytes [%d,%d) with %q\n", e.Start, e.End, e.NewText)
		}
	}
	// Output:
	// calc.go modify
	// replace bytes [39,53) with "\treturn a + b\n"
}

// The user typed above the edited lines after the prompt was built: the
// edit moves down with the text. Typing on the edited lines makes it stale.
func ExampleRebase() {
	base := "a\nb\nc\n"
	edits := patch.LineEdits(base, "a\nB\nc\n")

	moved, err := patch.Rebase(base, "new\na\nb\nc\n", edits)
	fmt.Println(moved, err)

	_, err = patch.Rebase(base, "a\nbee\nc\n", edits)
	fmt.Println(err)
	// Output:
	// [{6 8 B
	// }] <nil>
	// buffer changed under the edit: the buffer's lines 2-2 changed since the edit was computed and the edit changes lines 2-2; ask again
}
