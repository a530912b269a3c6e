package patch_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/patch/patchtest"
)

func TestConfinement(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := workspace(t, map[string]string{"ok.txt": "fine\n", ".git/config": "[core]\n", "sub/x.txt": "x\n"})
	if err := os.Symlink(outside, filepath.Join(d.Root(), "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(d.Root(), "secret-link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(d.Root(), "sub"), filepath.Join(d.Root(), "inner")); err != nil {
		t.Fatal(err)
	}
	bad := []string{
		"../outside.txt",
		"sub/../../outside.txt",
		filepath.Join(outside, "secret.txt"),
		"/etc/passwd",
		".git/config",
		"sub/.git/hooks/pre-commit",
		"link/secret.txt",
		"link/new.txt",
		"secret-link.txt",
	}
	for _, name := range bad {
		t.Run("resolve "+name, func(t *testing.T) {
			if p, err := d.Resolve(name); !errors.Is(err, patch.ErrOutside) {
				t.Errorf("Resolve(%q) = %q, %v; want ErrOutside", name, p, err)
			}
		})
		t.Run("diff "+name, func(t *testing.T) {
			diff := "--- a/ok.txt\n+++ b/ok.txt\n@@\n-fine\n+changed\n--- " + name + "\n+++ " + name + "\n@@\n-secret\n+pwned\n"
			_, err := patch.Apply(d, diff, patch.Options{})
			if !errors.Is(err, patch.ErrOutside) {
				t.Fatalf("got %v, want ErrOutside", err)
			}
		})
		t.Run("create "+name, func(t *testing.T) {
			s := patch.NewEditSet(d, patch.Options{})
			if err := s.Create(name, "x\n"); !errors.Is(err, patch.ErrOutside) {
				t.Fatalf("got %v, want ErrOutside", err)
			}
		})
	}
	for _, name := range []string{"ok.txt", "./ok.txt", "sub/../ok.txt", filepath.Join(d.Root(), "ok.txt"), "inner/x.txt", "new/dir/file.txt"} {
		if _, err := d.Resolve(name); err != nil {
			t.Errorf("Resolve(%q): %v", name, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "secret\n" {
		t.Fatal("file outside the workspace changed")
	}
}

func TestFileOperations(t *testing.T) {
	files := map[string]string{
		"a.go":       "package a\n\nfunc A() int { return 1 }\n",
		"old.txt":    "line one\nline two\nline three\n",
		"gone.txt":   "bye\nbye again\n",
		"dir/keep.c": "int main(void) {\n\treturn 0;\n}\n",
	}
	tests := []struct {
		name  string
		diff  string
		want  map[string]patch.ChangeKind
		after map[string]string
		err   error
	}{
		{
			name: "create with git headers",
			diff: "diff --git a/new.go b/new.go\nnew file mode 100644\n--- /dev/null\n+++ b/new.go\n@@ -0,0 +1,3 @@\n+package a\n+\n+func B() {}\n",
			want: map[string]patch.ChangeKind{"new.go": patch.CreateFile}, after: map[string]string{"new.go": "package a\n\nfunc B() {}\n"},
		},
		{
			name: "create without trailing newline",
			diff: "--- /dev/null\n+++ notes.txt\n@@ -0,0 +1 @@\n+hello\n\\ No newline at end of file\n",
			want: map[string]patch.ChangeKind{"notes.txt": patch.CreateFile}, after: map[string]string{"notes.txt": "hello"},
		},
		{
			name: "delete",
			diff: "--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-bye\n-bye again\n",
			want: map[string]patch.ChangeKind{"gone.txt": patch.DeleteFile},
		},
		{
			name: "delete with wrong content refused",
			diff: "--- a/gone.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-bye\n",
			err:  patch.ErrFileState,
		},
		{
			name: "rename with edit",
			diff: "diff --git a/old.txt b/new.txt\nsimilarity index 80%\nrename from old.txt\nrename to new.txt\n--- a/old.txt\n+++ b/new.txt\n@@ -1,3 +1,3 @@\n line one\n-line two\n+line 2\n line three\n",
			want: map[string]patch.ChangeKind{"new.txt": patch.RenameFile}, after: map[string]string{"new.txt": "line one\nline 2\nline three\n"},
		},
		{
			name: "pure rename",
			diff: "diff --git a/old.txt b/moved/old.txt\nsimilarity index 100%\nrename from old.txt\nrename to moved/old.txt\n",
			want: map[string]patch.ChangeKind{"moved/old.txt": patch.RenameFile}, after: map[string]string{"moved/old.txt": files["old.txt"]},
		},
		{
			name: "two files at once",
			diff: "--- a/a.go\n+++ b/a.go\n@@\n-func A() int { return 1 }\n+func A() int { return 2 }\n--- dir/keep.c\n+++ dir/keep.c\n@@\n int main(void) {\n-\treturn 0;\n+\treturn 1;\n }\n",
			want: map[string]patch.ChangeKind{"a.go": patch.ModifyFile, "dir/keep.c": patch.ModifyFile},
		},
		{
			name: "second file fails, first not applied",
			diff: "--- a/a.go\n+++ b/a.go\n@@\n-func A() int { return 1 }\n+func A() int { return 2 }\n--- dir/keep.c\n+++ dir/keep.c\n@@\n int main(void) {\n-\treturn 7;\n+\treturn 1;\n }\n",
			err:  patch.ErrNoMatch,
		},
		{
			name: "create existing refused",
			diff: "--- /dev/null\n+++ b/a.go\n@@ -0,0 +1 @@\n+package a\n",
			err:  patch.ErrFileState,
		},
		{
			name: "edit of a missing file refused",
			diff: "--- a/missing.go\n+++ b/missing.go\n@@\n-x\n+y\n",
			err:  patch.ErrFileState,
		},
		{
			name: "created file with a placeholder refused",
			diff: "--- /dev/null\n+++ b/p.py\n@@ -0,0 +1,3 @@\n+def f():\n+    # ... rest unchanged\n+    pass\n",
			err:  patch.ErrPlaceholder,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := workspace(t, files)
			changes, err := patch.Apply(d, tc.diff, patch.Options{})
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s", patch.Feedback(err))
			}
			got := map[string]patch.ChangeKind{}
			for _, c := range changes {
				rel, _ := filepath.Rel(d.Root(), c.Path)
				got[filepath.ToSlash(rel)] = c.Kind
				if want, ok := tc.after[filepath.ToSlash(rel)]; ok && c.After != want {
					t.Errorf("%s: after %q, want %q", rel, c.After, want)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got changes %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s: got %v, want %v", k, got[k], v)
				}
			}
			if err := d.Write(changes); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestEditSetAccumulates(t *testing.T) {
	d := workspace(t, map[string]string{"m.go": "package m\n\nfunc F() {\n\tprintln(1)\n}\n", "r.txt": "a\r\nb\r\n"})
	s := patch.NewEditSet(d, patch.Options{})
	if err := s.Replace("m.go", "println(1)", "println(2)"); err != nil {
		t.Fatal(err)
	}
	// A diff written against the pending text applies on top of it.
	if err := s.ApplyDiff("--- a/m.go\n+++ b/m.go\n@@\n func F() {\n \tprintln(2)\n+\tprintln(3)\n }\n"); err != nil {
		t.Fatal(patch.Feedback(err))
	}
	// Indentation drift in replace_text is matched by whole lines.
	if err := s.Replace("m.go", "    println(3)\n", "    println(4)\n"); err != nil {
		t.Fatal(patch.Feedback(err))
	}
	if err := s.Replace("m.go", "println", "print"); !errors.Is(err, patch.ErrAmbiguous) {
		t.Fatalf("ambiguous replace: got %v", err)
	}
	if err := s.Replace("r.txt", "a\nb\n", "a\nc\n"); err != nil {
		t.Fatal(patch.Feedback(err))
	}
	if err := s.Create("n.go", "package m\n"); err != nil {
		t.Fatal(err)
	}
	if err := s.Create("n.go", "package m\n"); !errors.Is(err, patch.ErrFileState) {
		t.Fatalf("second create: got %v", err)
	}
	// A failing diff leaves the set as it was.
	if err := s.ApplyDiff("--- a/m.go\n+++ b/m.go\n@@\n-\tprintln(99)\n+\tprintln(5)\n"); err == nil {
		t.Fatal("bad diff applied")
	}
	got, err := s.Read("m.go")
	if err != nil {
		t.Fatal(err)
	}
	if want := "package m\n\nfunc F() {\n\tprintln(2)\n\tprintln(4)\n}\n"; got != want {
		t.Fatalf("pending text %q, want %q", got, want)
	}
	changes, err := s.Changes()
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 3 {
		t.Fatalf("got %d changes, want 3", len(changes))
	}
	for _, c := range changes {
		if strings.HasSuffix(c.Path, "r.txt") && c.After != "a\r\nc\r\n" {
			t.Errorf("CRLF replace: got %q", c.After)
		}
	}
	// A Go file left broken fails the final check.
	s2 := patch.NewEditSet(d, patch.Options{})
	if err := s2.Replace("m.go", "func F() {", "func F() {{"); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Changes(); !errors.Is(err, patch.ErrBrokenSyntax) {
		t.Fatalf("broken Go: got %v", err)
	}
	s3 := patch.NewEditSet(d, patch.Options{AllowBrokenGo: true})
	_ = s3.Replace("m.go", "func F() {", "func F() {{")
	if _, err := s3.Changes(); err != nil {
		t.Fatalf("AllowBrokenGo: %v", err)
	}
}

func TestFeedback(t *testing.T) {
	d := workspace(t, map[string]string{"demo.go": goFile})
	_, err := patch.Apply(d, "--- a/demo.go\n+++ b/demo.go\n@@ -15,3 +15,3 @@\n func Sum(xs ...int) int {\n-\ttotal := 1\n+\ttotal := 2\n \tfor _, x := range xs {\n", patch.Options{})
	if err == nil {
		t.Fatal("applied")
	}
	msg := patch.Feedback(err)
	for _, want := range []string{"nothing was changed", "demo.go, hunk 1 (@@ -15,3 +15,3 @@)", "outer context trimmed", "   15 | \ttotal := 0", "Copy the context"} {
		if !strings.Contains(msg, want) {
			t.Errorf("feedback lacks %q:\n%s", want, msg)
		}
	}
	var r *patch.Refusal
	if !errors.As(err, &r) || len(r.Problems) != 1 || r.Problems[0].Hunk != 1 {
		t.Errorf("refusal %+v", r)
	}
}

var _ patch.Files = (*patchtest.Dir)(nil)

// TestApplyDiffToOriginal: a diff against the files' original text
// replaces the set's edits of the files it names, and only those (a file
// it merely names in a lookup keeps its edit); a refused one changes
// nothing; a set that renamed a file refuses.
func TestApplyDiffToOriginal(t *testing.T) {
	const m = "package m\n\nfunc F() int {\n\treturn 1\n}\n"
	d := workspace(t, map[string]string{"m.go": m, "n.txt": "one\ntwo\n"})
	s := patch.NewEditSet(d, patch.Options{})
	if err := s.Replace("m.go", "return 1", "return x"); err != nil {
		t.Fatal(err)
	}
	if err := s.Replace("n.txt", "two", "three"); err != nil {
		t.Fatal(err)
	}
	whole := "--- a/m.go\n+++ b/m.go\n@@ -3,3 +3,3 @@\n func F() int {\n-\treturn 1\n+\treturn 2\n }\n"
	if err := s.ApplyDiff(whole); err == nil {
		t.Fatal("the diff against the original applied to the edited text")
	}
	if err := s.ApplyDiffToOriginal("--- a/m.go\n+++ b/m.go\n@@\n-\treturn 7\n+\treturn 2\n"); err == nil || s.Restated() {
		t.Fatalf("got %v, restated %v: a diff that fits neither text applied", err, s.Restated())
	}
	if err := s.ApplyDiffToOriginal(whole); err != nil {
		t.Fatal(patch.Feedback(err))
	}
	if !s.Restated() {
		t.Error("Restated is false")
	}
	changes, err := s.Changes()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range changes {
		got[filepath.Base(c.Path)] = c.Before + "→" + c.After
	}
	want := map[string]string{"m.go": m + "→" + strings.Replace(m, "return 1", "return 2", 1), "n.txt": "one\ntwo\n→one\nthree\n"}
	if len(got) != 2 || got["m.go"] != want["m.go"] || got["n.txt"] != want["n.txt"] {
		t.Errorf("changes %q, want %q", got, want)
	}

	r := patch.NewEditSet(d, patch.Options{})
	if err := r.ApplyDiff("diff --git a/n.txt b/o.txt\nrename from n.txt\nrename to o.txt\n"); err != nil {
		t.Fatal(patch.Feedback(err))
	}
	if err := r.ApplyDiffToOriginal("--- a/n.txt\n+++ b/n.txt\n@@\n one\n-two\n+2\n"); !errors.Is(err, patch.ErrFileState) {
		t.Errorf("after a rename: got %v, want ErrFileState", err)
	}
}
