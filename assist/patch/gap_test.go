package patch_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// TestElidedGap covers a hunk made of two parts with an elision line for
// the unchanged lines between them (issue 21.23): the gap skips forward to
// where the next part matches, when that place is unique.
func TestElidedGap(t *testing.T) {
	greetAndSum := strings.Replace(strings.Replace(goFile, "name = \"world\"", "name = \"stranger\"", 1),
		"\ttotal := 0\n", "\ttotal := 0 // running sum\n", 1)
	merged := func(gap string) string {
		return "--- a/demo.go\n+++ b/demo.go\n@@ -7,10 +7,10 @@\n \tif name == \"\" {\n-\t\tname = \"world\"\n+\t\tname = \"stranger\"\n \t}\n" +
			gap + "\n func Sum(xs ...int) int {\n-\ttotal := 0\n+\ttotal := 0 // running sum\n \tfor _, x := range xs {\n"
	}
	// Two functions that end alike: after the gap, "return total\n}"
	// matches twice.
	twice := goFile + "\n// Sum2 adds numbers too.\nfunc Sum2(xs ...int) int {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total\n}\n"
	pyGap := "def load(path):\n    with open(path) as f:\n        data = f.read()\n    ...\n    return data\n"
	tests := []struct {
		name, file, text, diff, want string
		err                          error
	}{
		{name: "bare ... between two parts", text: goFile, want: greetAndSum, diff: merged(" ...")},
		{name: "// ... between two parts", text: goFile, want: greetAndSum, diff: merged(" // ...")},
		{name: "indented // ... existing code ...", text: goFile, want: greetAndSum, diff: merged(" \t// ... existing code ...")},
		{name: "/* ... */ between two parts", text: goFile, want: greetAndSum, diff: merged(" /* ... */")},
		{name: "... without its context marker", text: goFile, want: greetAndSum, diff: merged("...")},
		{name: "# ... in Python", file: "m.py", text: pyFile,
			want: strings.Replace(strings.Replace(pyFile, "        data = f.read()\n", "        data = f.read().strip()\n", 1), "        f.write(data)\n", "        f.write(data + \"\\n\")\n", 1),
			diff: "--- a/m.py\n+++ b/m.py\n@@\n     with open(path) as f:\n-        data = f.read()\n+        data = f.read().strip()\n     return data\n # ...\n def save(path, data):\n     with open(path, \"w\") as f:\n-        f.write(data)\n+        f.write(data + \"\\n\")\n"},
		{name: "an added line right after the gap goes after the kept lines", text: goFile,
			want: strings.Replace(goFile, "// Sum adds numbers.\n", "// Sum adds numbers.\n// It returns 0 for no numbers.\n", 1),
			diff: "--- a/demo.go\n+++ b/demo.go\n@@\n func Greet(name string) {\n // ...\n+// It returns 0 for no numbers.\n func Sum(xs ...int) int {\n"},
		{name: "the file's own ... line matches as written", file: "m.py", text: pyGap,
			want: strings.Replace(pyGap, "    return data\n", "    return data.strip()\n", 1),
			diff: "--- a/m.py\n+++ b/m.py\n@@\n         data = f.read()\n     ...\n-    return data\n+    return data.strip()\n"},
		{name: "the next part matches twice after the gap", text: twice, err: patch.ErrAmbiguous,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@\n func Sum(xs ...int) int {\n-\ttotal := 0\n+\ttotal := 1\n // ...\n \treturn total\n }\n"},
		{name: "the next part matches only before the first", text: goFile, err: patch.ErrNoMatch,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@\n func Sum(xs ...int) int {\n-\ttotal := 0\n+\ttotal := 1\n // ...\n \tif name == \"\" {\n \t\tname = \"world\"\n"},
		{name: "a removed ... line is no gap", text: goFile, err: patch.ErrNoMatch,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@\n func Greet(name string) {\n-\t// ...\n+\t// hello\n func Sum(xs ...int) int {\n"},
		{name: "an added ... line is a placeholder", text: goFile, err: patch.ErrPlaceholder,
			diff: "--- a/demo.go\n+++ b/demo.go\n@@\n func Sum(xs ...int) int {\n-\ttotal := 0\n-\tfor _, x := range xs {\n-\t\ttotal += x\n-\t}\n+\t// ...\n \treturn total\n }\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = "demo.go"
			}
			d := workspace(t, map[string]string{file: tc.text})
			changes, err := patch.Apply(d, tc.diff, patch.Options{})
			if tc.err != nil {
				if !errors.Is(err, tc.err) || changes != nil {
					t.Fatalf("got %v, %v; want %v", changes, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused:\n%s", patch.Feedback(err))
			}
			if len(changes) != 1 || changes[0].After != tc.want {
				t.Fatalf("got %+v\nwant\n%s", changes, tc.want)
			}
		})
	}
}
