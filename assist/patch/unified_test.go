package patch_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// Unified's output is a diff git itself applies.
func TestUnifiedAppliesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	cases := []struct{ before, after string }{
		{goFile, goFileEdited},
		{"a\nb\nc", "a\nB\nc"},
		{"x\n", "x\ny"},
		{"one\r\ntwo\r\n", "one\r\n2\r\n"},
	}
	for i, c := range cases {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(c.before), 0o644); err != nil {
			t.Fatal(err)
		}
		diff := patch.Unified("a/f.txt", "b/f.txt", c.before, c.after, 3)
		if err := os.WriteFile(filepath.Join(dir, "d.diff"), []byte(diff), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "apply", "--whitespace=nowarn", "d.diff")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("case %d: git apply: %v\n%s\n%s", i, err, out, diff)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "f.txt"))
		if string(got) != c.after {
			t.Errorf("case %d: git produced %q, want %q", i, got, c.after)
		}
	}
}
