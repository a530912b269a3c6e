package patch_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// pyFile is a space-indented file with blocks that repeat once their
// outer lines are dropped.
const pyFile = `import os


def load(path):
    with open(path) as f:
        data = f.read()
    return data


def save(path, data):
    with open(path, "w") as f:
        f.write(data)
    return None


def size(path):
    return os.path.getsize(path)
`

// TestModelShapes covers the shapes of issue 16: each applies exactly when
// the hunk's old lines have one clear place, and every refusal class
// refuses.
func TestModelShapes(t *testing.T) {
	sumEdited := strings.Replace(goFile, "\t\ttotal += x\n", "\t\tif x < 0 {\n\t\t\tcontinue\n\t\t}\n\t\ttotal += x\n", 1)
	greetEdited := strings.Replace(goFile, "name = \"world\"", "name = \"stranger\"", 1)
	sizeEdited := strings.Replace(pyFile, "    return os.path.getsize(path)\n", "    st = os.stat(path)\n    return st.st_size\n", 1)
	twice := goFile + "\nfunc Sum2(xs ...int) int {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total\n}\n"
	tests := []struct {
		name  string
		file  string // demo.go unless it ends in .py
		text  string
		diff  string
		want  string
		err   error
		level patch.Level
	}{
		// 1. Counts are hints, never limits.
		{name: "counts overstated, last hunk of a bare reply", text: goFile, want: sumEdited,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ -15,7 +15,9 @@\n \tfor _, x := range xs {\n+\t\tif x < 0 {\n+\t\t\tcontinue\n+\t\t}\n \t\ttotal += x\n"},
		{name: "counts understated", text: goFile, want: sumEdited,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ -14,2 +14,2 @@\n func Sum(xs ...int) int {\n \ttotal := 0\n \tfor _, x := range xs {\n+\t\tif x < 0 {\n+\t\t\tcontinue\n+\t\t}\n \t\ttotal += x\n \t}\n"},
		{name: "counts overstated before the next file header", text: goFile, want: greetEdited,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ -7,9 +7,12 @@\n \tif name == \"\" {\n-\t\tname = \"world\"\n+\t\tname = \"stranger\"\n \t}\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-one\n+uno\n"},
		{name: "counts overstated in a closed fence with prose after", text: goFile, want: sumEdited,
			diff: "Fix:\n\n```diff\n--- a/demo.go\n+++ b/demo.go\n@@ -15,12 +15,19 @@\n \tfor _, x := range xs {\n+\t\tif x < 0 {\n+\t\t\tcontinue\n+\t\t}\n \t\ttotal += x\n```\n\nDone.\n"},
		{name: "removed -- line and added ++ line inside a hunk", file: "q.sql",
			text: "select 1;\n-- old note\nselect 2;\n",
			diff: "--- a/q.sql\n+++ b/q.sql\n@@ -1,3 +1,3 @@\n select 1;\n--- old note\n+++ new note\n select 2;\n",
			want: "select 1;\n++ new note\nselect 2;\n"},
		// 2. Thin or missing leading context, header unchanged.
		{name: "all leading context dropped", text: goFile, want: greetEdited,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ -5,7 +5,7 @@\n-\t\tname = \"world\"\n+\t\tname = \"stranger\"\n \t}\n \tfmt.Println(\"hello,\", name)\n }\n"},
		{name: "some leading context dropped", text: goFile, want: greetEdited, level: patch.LevelExact,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ -5,7 +5,7 @@\n \tif name == \"\" {\n-\t\tname = \"world\"\n+\t\tname = \"stranger\"\n \t}\n"},
		{name: "pure insertion, trailing context only", text: goFile, want: sumEdited,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ -14,6 +14,9 @@\n+\t\tif x < 0 {\n+\t\t\tcontinue\n+\t\t}\n \t\ttotal += x\n \t}\n \treturn total\n"},
		{name: "pure insertion, leading context only", text: goFile, want: sumEdited,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ -14,6 +14,9 @@\n \ttotal := 0\n \tfor _, x := range xs {\n+\t\tif x < 0 {\n+\t\t\tcontinue\n+\t\t}\n"},
		{name: "no context, removed line unique", file: "m.py", text: pyFile, want: sizeEdited,
			diff: "--- a/m.py\n+++ b/m.py\n@@ -17,2 +17,3 @@\n-    return os.path.getsize(path)\n+    st = os.stat(path)\n+    return st.st_size\n"},
		// 3. Numberless headers.
		{name: "@@ ... @@ header", text: goFile, want: sumEdited,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ ... @@\n \tfor _, x := range xs {\n+\t\tif x < 0 {\n+\t\t\tcontinue\n+\t\t}\n \t\ttotal += x\n"},
		{name: "@@ @@ header", text: goFile, want: sumEdited,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ @@\n \tfor _, x := range xs {\n+\t\tif x < 0 {\n+\t\t\tcontinue\n+\t\t}\n \t\ttotal += x\n"},
		{name: "@@ with a section name only", text: goFile, want: sumEdited,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ func Sum(xs ...int) int {\n \tfor _, x := range xs {\n+\t\tif x < 0 {\n+\t\t\tcontinue\n+\t\t}\n \t\ttotal += x\n"},
		// 4. Whitespace drift on context lines.
		{name: "trailing whitespace on thin context", text: goFile, want: greetEdited, level: patch.LevelTrailingSpace,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ -5,7 +5,7 @@\n-\t\tname = \"world\"\n+\t\tname = \"stranger\"\n \t} \n \tfmt.Println(\"hello,\", name)\t\n"},
		{name: "spaces for tabs, no numbers, wrong counts", text: goFile, want: sumEdited, level: patch.LevelIndent,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ -1,3 +1,1 @@\n     for _, x := range xs {  \n+        if x < 0 {\n+            continue\n+        }\n         total += x\n"},
		{name: "two spaces for four, python", file: "m.py", text: pyFile, want: sizeEdited,
			diff: "--- a/m.py\n+++ b/m.py\n@@\n def size(path):\n-  return os.path.getsize(path)\n+  st = os.stat(path)\n+  return st.st_size\n"},

		// Refusals: two candidate places stay refused, whatever the header says.
		{name: "header names one of two places", text: twice, err: patch.ErrAmbiguous,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ -15,4 +15,7 @@\n \ttotal := 0\n \tfor _, x := range xs {\n+\t\tif x < 0 {\n+\t\t\tcontinue\n+\t\t}\n \t\ttotal += x\n \t}\n"},
		{name: "thin context leaves two places", text: twice, err: patch.ErrAmbiguous,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ -14,6 +14,6 @@\n-\ttotal := 0\n+\ttotal := 1\n \tfor _, x := range xs {\n"},
		{name: "thin context leaves two places, python with", file: "m.py", text: strings.Replace(pyFile, "    return None\n", "    return data\n", 1), err: patch.ErrAmbiguous,
			diff: "--- a/m.py\n+++ b/m.py\n@@ -6,2 +6,2 @@\n-    return data\n+    return data.strip()\n"},
		{name: "one exact place, another with trailing whitespace", text: strings.Replace(twice, "func Sum2(xs ...int) int {\n\ttotal := 0\n", "func Sum2(xs ...int) int {\n\ttotal := 0  \n", 1), err: patch.ErrAmbiguous,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ -15,4 +15,7 @@\n \ttotal := 0\n \tfor _, x := range xs {\n+\t\tif x < 0 {\n+\t\t\tcontinue\n+\t\t}\n \t\ttotal += x\n \t}\n"},
		{name: "numberless, two places", text: twice, err: patch.ErrAmbiguous,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ ... @@\n \tfor _, x := range xs {\n-\t\ttotal += x\n+\t\ttotal += 2 * x\n"},
		{name: "two places modulo indentation", file: "m.py", text: pyFile + "\n\nclass C:\n    def load(self, path):\n        with open(path) as f:\n            data = f.read()\n        return data\n", err: patch.ErrAmbiguous,
			diff: "--- a/m.py\n+++ b/m.py\n@@\n   with open(path) as f:\n-      data = f.read()\n+      data = f.read().strip()\n   return data\n"},
		{name: "context that does not match", text: goFile, err: patch.ErrNoMatch,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@ -5,7 +5,7 @@\n \tif name == \"\" {\n-\t\tname = \"world\"\n+\t\tname = \"stranger\"\n \t} // end\n \tfmt.Println(\"hello,\", name)\n }\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = "demo.go"
			}
			files := map[string]string{file: tc.text, "notes.txt": "one\ntwo\n"}
			d := workspace(t, files)
			set := patch.NewEditSet(d, patch.Options{})
			err := set.ApplyDiff(tc.diff)
			var changes []patch.FileChange
			if err == nil {
				changes, err = set.Changes()
			}
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused:\n%s", patch.Feedback(err))
			}
			var got string
			for _, c := range changes {
				if strings.HasSuffix(c.Path, "/"+file) {
					got = c.After
				}
			}
			if got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
			if tc.level != 0 {
				var lv patch.Level
				for _, m := range set.Matches() {
					lv = max(lv, m.Level)
				}
				if lv != tc.level {
					t.Errorf("level %v, want %v", lv, tc.level)
				}
			}
		})
	}
}

// TestDeletionShowsContent: a deletion must show what it removes (issue 12
// item 17).
func TestDeletionShowsContent(t *testing.T) {
	tests := []struct {
		name, text, diff string
		ok               bool
	}{
		{"+++ /dev/null without hunks", "package demo\n\nvar secret = 1\n", "--- a/demo.go\n+++ /dev/null\n", false},
		{"git deleted file mode without hunks", "package demo\n", "diff --git a/demo.go b/demo.go\ndeleted file mode 100644\n", false},
		{"removed lines are not the file", "package demo\n\nvar x = 1\n", "--- a/demo.go\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-package demo\n-\n", false},
		{"whole content shown", "package demo\n\nvar x = 1\n", "--- a/demo.go\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-package demo\n-\n-var x = 1\n", true},
		{"empty file without hunks", "", "--- a/demo.go\n+++ /dev/null\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := workspace(t, map[string]string{"demo.go": tc.text})
			ch, err := patch.Apply(d, tc.diff, patch.Options{})
			if !tc.ok {
				if !errors.Is(err, patch.ErrFileState) || ch != nil {
					t.Fatalf("got %v, %v; want a refusal (ErrFileState)", ch, err)
				}
				return
			}
			if err != nil || len(ch) != 1 || ch[0].Kind != patch.DeleteFile {
				t.Fatalf("got %+v, %v; want one deletion", ch, err)
			}
		})
	}
}

// TestFinalNewlineKept: an edit never changes whether a file ends with a
// newline (issue 12 item 19, found by FuzzApply).
func TestFinalNewlineKept(t *testing.T) {
	tests := []struct {
		name, text, diff, want string
	}{
		{"fuzz input: empty line added after the last line", "0\nb", "--- 0\n+++ demo.go\n@@\nb\n+", ""},
		{"last line deleted leaving a blank last line", "a\n\nb", "--- a/demo.go\n+++ b/demo.go\n@@\n a\n \n-b\n", ""},
		{"last line changed", "a\nb", "--- a/demo.go\n+++ b/demo.go\n@@\n a\n-b\n+c\n", "a\nc"},
		{"line added after the last line", "a\nb", "--- a/demo.go\n+++ b/demo.go\n@@\n b\n+c\n", "a\nb\nc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := workspace(t, map[string]string{"demo.go": tc.text})
			ch, err := patch.Apply(d, tc.diff, patch.Options{AllowBrokenGo: true})
			if tc.want == "" {
				if !errors.Is(err, patch.ErrFileState) {
					t.Fatalf("got %+v, %v; want a refusal (ErrFileState)", ch, err)
				}
				return
			}
			if err != nil {
				t.Fatal(patch.Feedback(err))
			}
			if ch[0].After != tc.want {
				t.Fatalf("got %q, want %q", ch[0].After, tc.want)
			}
		})
	}
}

// TestFeedbackNamesWhatDidNotMatch: the correction prompt quotes the
// current lines around a failing hunk and names what did not match; for an
// ambiguous hunk it quotes every place (issue 16 item 6).
func TestFeedbackNamesWhatDidNotMatch(t *testing.T) {
	twice := goFile + "\nfunc Sum2(xs ...int) int {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total\n}\n"
	tests := []struct {
		name, text, diff string
		want             []string
	}{
		{"changed line", strings.Replace(goFile, `name = "world"`, `name = "earth"`, 1),
			"--- a/demo.go\n+++ b/demo.go\n@@ -6,4 +6,4 @@\n func Greet(name string) {\n \tif name == \"\" {\n-\t\tname = \"world\"\n+\t\tname = \"stranger\"\n \t}\n",
			[]string{`your removed line 3 "\t\tname = \"world\"" occurs nowhere in the file`,
				"The current lines of the file there", "    8 | \t\tname = \"earth\"", "    5 | // Greet prints a greeting."}},
		{"line moved elsewhere", goFile,
			"--- a/demo.go\n+++ b/demo.go\n@@\n func Greet(name string) {\n \treturn total\n-\tif name == \"\" {\n+\tif name == \"\" || name == \" \" {\n",
			[]string{`your context line 2 "\treturn total" is not what the file has in its place: line 7 is "\tif name == \"\" {"`}},
		{"two places", twice,
			"--- a/demo.go\n+++ b/demo.go\n@@\n \ttotal := 0\n \tfor _, x := range xs {\n-\t\ttotal += x\n+\t\ttotal += 2 * x\n",
			[]string{"The file at each place it matches:", "   14 | func Sum(xs ...int) int {", "   22 | func Sum2(xs ...int) int {", "Add context lines that differ"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := workspace(t, map[string]string{"demo.go": tc.text})
			_, err := patch.Apply(d, tc.diff, patch.Options{})
			if err == nil {
				t.Fatal("applied")
			}
			fb := patch.Feedback(err)
			for _, w := range tc.want {
				if !strings.Contains(fb, w) {
					t.Errorf("feedback lacks %q:\n%s", w, fb)
				}
			}
		})
	}
}
