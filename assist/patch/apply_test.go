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

// workspace writes files into a temporary directory and returns a Dir.
func workspace(t *testing.T, files map[string]string) *patchtest.Dir {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := patchtest.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const goFile = `package demo

import "fmt"

// Greet prints a greeting.
func Greet(name string) {
	if name == "" {
		name = "world"
	}
	fmt.Println("hello,", name)
}

// Sum adds numbers.
func Sum(xs ...int) int {
	total := 0
	for _, x := range xs {
		total += x
	}
	return total
}
`

const goFileEdited = `package demo

import "fmt"

// Greet prints a greeting.
func Greet(name string) {
	if name == "" {
		name = "stranger"
	}
	fmt.Println("hello,", name)
}

// Sum adds numbers.
func Sum(xs ...int) int {
	total := 0
	for _, x := range xs {
		if x < 0 {
			continue
		}
		total += x
	}
	return total
}
`

// clean is the correct two-hunk diff from goFile to goFileEdited.
const clean = `--- a/demo.go
+++ b/demo.go
@@ -5,7 +5,7 @@
 // Greet prints a greeting.
 func Greet(name string) {
 	if name == "" {
-		name = "world"
+		name = "stranger"
 	}
 	fmt.Println("hello,", name)
 }
@@ -14,6 +14,9 @@
 func Sum(xs ...int) int {
 	total := 0
 	for _, x := range xs {
+		if x < 0 {
+			continue
+		}
 		total += x
 	}
 	return total
`

func TestApplyLevelsAndPerturbations(t *testing.T) {
	spaces := func(s string) string { return strings.ReplaceAll(s, "\t", "    ") }
	sumOnly := strings.Replace(goFileEdited, "\t\tname = \"stranger\"", "\t\tname = \"world\"", 1)
	tests := []struct {
		name   string
		before string
		diff   string
		want   string // "" with wantErr set: refused
		level  patch.Level
		err    error
	}{
		{name: "clean", before: goFile, diff: clean, want: goFileEdited, level: patch.LevelHint},
		{name: "fenced with prose", before: goFile, diff: "Here is the fix:\n\n```diff\n" + clean + "```\n\nThis skips negatives.", want: goFileEdited},
		{name: "bare @@", before: goFile, diff: strings.ReplaceAll(strings.ReplaceAll(clean, "@@ -5,7 +5,7 @@", "@@"), "@@ -14,6 +14,9 @@", "@@"), want: goFileEdited, level: patch.LevelExact},
		{name: "@@ ... @@", before: goFile, diff: strings.ReplaceAll(strings.ReplaceAll(clean, "@@ -5,7 +5,7 @@", "@@ ... @@"), "@@ -14,6 +14,9 @@", "@@ ... @@"), want: goFileEdited},
		{name: "shifted line numbers", before: goFile, diff: strings.ReplaceAll(strings.ReplaceAll(clean, "-5,7 +5,7", "-40,7 +40,7"), "-14,6 +14,9", "-2,6 +2,9"), want: goFileEdited},
		{name: "wrong counts", before: goFile, diff: strings.ReplaceAll(strings.ReplaceAll(clean, "-5,7 +5,7", "-5,9 +5,3"), "-14,6 +14,9", "-15,2 +15,2"), want: goFileEdited},
		{name: "no prefixes", before: goFile, diff: strings.ReplaceAll(strings.ReplaceAll(clean, "a/demo.go", "demo.go"), "b/demo.go", "demo.go"), want: goFileEdited},
		{name: "blank context without space", before: goFile, diff: "--- a/demo.go\n+++ b/demo.go\n@@\n \t\tname = \"world\"\n \t}\n \tfmt.Println(\"hello,\", name)\n }\n\n // Sum adds numbers.\n-func Sum(xs ...int) int {\n+func Sum(xs ...int) (total int) {\n", want: strings.Replace(goFile, "func Sum(xs ...int) int {", "func Sum(xs ...int) (total int) {", 1)},
		{name: "shuffled hunks", before: goFile, diff: "--- a/demo.go\n+++ b/demo.go\n" + clean[strings.Index(clean, "@@ -14"):] + clean[strings.Index(clean, "@@ -5"):strings.Index(clean, "@@ -14")], want: goFileEdited},
		{name: "trailing whitespace in context", before: goFile, diff: strings.Replace(clean, " func Greet(name string) {\n", " func Greet(name string) {  \n", 1), want: goFileEdited, level: patch.LevelTrailingSpace},
		{name: "tabs as spaces", before: goFile, diff: spaces(clean), want: goFileEdited, level: patch.LevelIndent},
		{name: "dedented hunk", before: goFile, diff: "--- a/demo.go\n+++ b/demo.go\n@@\n total := 0\n for _, x := range xs {\n+\tif x < 0 {\n+\t\tcontinue\n+\t}\n \ttotal += x\n }\n", want: sumOnly, level: patch.LevelIndent},
		{name: "hallucinated outer context", before: goFile, diff: "--- a/demo.go\n+++ b/demo.go\n@@\n // Sum returns the sum.\n func Sum(xs ...int) int {\n \ttotal := 0\n \tfor _, x := range xs {\n+\t\tif x < 0 {\n+\t\t\tcontinue\n+\t\t}\n \t\ttotal += x\n \t}\n", want: sumOnly, level: patch.LevelTrimmed},
		{name: "missing plus markers", before: goFile, diff: "```diff\n--- a/demo.go\n+++ b/demo.go\n@@\n \ttotal := 0\n \tfor _, x := range xs {\n\t\tif x < 0 {\n+\t\t\tcontinue\n\t\t}\n \t\ttotal += x\n```\n", want: sumOnly},
		{name: "blank line drift", before: goFile, diff: "--- a/demo.go\n+++ b/demo.go\n@@\n }\n // Sum adds numbers.\n func Sum(xs ...int) int {\n-\ttotal := 0\n+\ttotal := 0 // running sum\n", want: strings.Replace(goFile, "\ttotal := 0\n", "\ttotal := 0 // running sum\n", 1), level: patch.LevelBlankLines},
		{name: "CRLF file, LF diff", before: strings.ReplaceAll(goFile, "\n", "\r\n"), diff: clean, want: strings.ReplaceAll(goFileEdited, "\n", "\r\n")},
		{name: "BOM and no final newline kept", before: "\ufeff" + strings.TrimSuffix(goFile, "\n"), diff: "--- a/demo.go\n+++ b/demo.go\n@@\n \t}\n-\treturn total\n+\treturn total * 1\n }\n\\ No newline at end of file\n", want: "\ufeff" + strings.TrimSuffix(strings.Replace(goFile, "return total\n", "return total * 1\n", 1), "\n")},

		{name: "placeholder refused", before: goFile, diff: "--- a/demo.go\n+++ b/demo.go\n@@\n func Sum(xs ...int) int {\n-\ttotal := 0\n-\tfor _, x := range xs {\n-\t\ttotal += x\n-\t}\n+\t// ... existing code ...\n \treturn total\n }\n", err: patch.ErrPlaceholder},
		{name: "duplicated target refused", before: goFile + "\nfunc Sum2(xs ...int) int {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total\n}\n", diff: "--- a/demo.go\n+++ b/demo.go\n@@\n \ttotal := 0\n \tfor _, x := range xs {\n+\t\tif x < 0 {\n+\t\t\tcontinue\n+\t\t}\n \t\ttotal += x\n \t}\n", err: patch.ErrAmbiguous},
		{name: "target changed refused", before: strings.Replace(goFile, `name = "world"`, `name = "earth"`, 1), diff: clean, err: patch.ErrNoMatch},
		{name: "truncated in a fence refused", before: goFile, diff: "```diff\n" + clean[:strings.Index(clean, "+\t\t\tcontinue")], err: patch.ErrTruncated},
		{name: "unclosed fence without counts refused", before: goFile, diff: "```diff\n--- a/demo.go\n+++ b/demo.go\n@@\n \ttotal := 0\n \tfor _, x := range xs {\n+\t\tif x < 0 {\n", err: patch.ErrTruncated},
		{name: "tiny anchor refused", before: "{\n}\n{\n}\n", diff: "--- a/demo.go\n+++ b/demo.go\n@@ -1,2 +1,3 @@\n {\n+x\n }\n", err: patch.ErrAmbiguous},
		{name: "overlapping hunks refused", before: goFile, diff: "--- a/demo.go\n+++ b/demo.go\n@@\n \ttotal := 0\n-\tfor _, x := range xs {\n+\tfor _, x := range xs[1:] {\n@@\n-\tfor _, x := range xs {\n+\tfor _, x := range xs[2:] {\n \t\ttotal += x\n", err: patch.ErrOverlap},
		{name: "broken Go refused", before: goFile, diff: "--- a/demo.go\n+++ b/demo.go\n@@\n func Sum(xs ...int) int {\n-\ttotal := 0\n+\ttotal := (0\n", err: patch.ErrBrokenSyntax},
		{name: "prose right after a bare hunk refused", before: goFile, diff: "--- a/demo.go\n+++ b/demo.go\n@@\n func Sum(xs ...int) int {\n-\ttotal := 0\n+\ttotal := 1\nThis starts at one.\n", err: patch.ErrParse},
		{name: "one bad hunk refuses all", before: goFile, diff: strings.Replace(clean, "-\t\tname = \"world\"", "-\t\tname = \"earth\"", 1), err: patch.ErrNoMatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := workspace(t, map[string]string{"demo.go": tc.before})
			set := patch.NewEditSet(d, patch.Options{})
			var changes []patch.FileChange
			err := set.ApplyDiff(tc.diff)
			if err == nil {
				changes, err = set.Changes()
			}
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got error %v, want %v", err, tc.err)
				}
				if changes != nil {
					t.Fatalf("refused edit returned changes %v", changes)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error:\n%s", patch.Feedback(err))
			}
			if len(changes) != 1 {
				t.Fatalf("got %d changes, want 1", len(changes))
			}
			if got := changes[0].After; got != tc.want {
				t.Errorf("after mismatch:\n--- got\n%s\n--- want\n%s", got, tc.want)
			}
			if changes[0].Before != tc.before {
				t.Errorf("before is not the file's text")
			}
			if tc.level != 0 {
				got := patch.Level(0)
				for _, m := range set.Matches() {
					got = max(got, m.Level)
				}
				if got != tc.level {
					t.Errorf("matched at level %v, want %v", got, tc.level)
				}
			}
		})
	}
}

func TestParseProseAfterBareDiff(t *testing.T) {
	const diff = "--- a/demo.go\n+++ b/demo.go\n@@\n func Sum(xs ...int) int {\n-\ttotal := 0\n+\ttotal := 1\n \tfor _, x := range xs {\n"
	want := strings.Replace(goFile, "total := 0", "total := 1", 1)
	tests := []struct {
		name, reply string
		ok          bool
	}{
		{"prose", diff + "\nThis starts the sum at one.\nNothing else changes.\n", true},
		{"prose then another file", diff + "\nAnd the other file:\n--- a/demo.go\n+++ b/demo.go\n@@\n-\treturn total\n+\treturn total // sum\n", true},
		// A list after the diff could be removed and added lines: refuse
		// rather than guess where the diff ends.
		{"list", diff + "\nChanges:\n- start the sum at one\n", false},
		// A context line that lost its space after a blank line keeps the
		// rest of the hunk.
		{"unmarked context", "--- a/demo.go\n+++ b/demo.go\n@@\n \tfmt.Println(\"hello,\", name)\n }\n\n// Sum adds numbers.\n func Sum(xs ...int) int {\n-\ttotal := 0\n+\ttotal := 1\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := workspace(t, map[string]string{"demo.go": goFile})
			ch, err := patch.Apply(d, tc.reply, patch.Options{})
			if !tc.ok {
				if err == nil {
					t.Fatalf("applied: %+v", ch)
				}
				return
			}
			if err != nil {
				t.Fatal(patch.Feedback(err))
			}
			w := want
			if strings.Contains(tc.reply, "// sum") {
				w = strings.Replace(w, "\treturn total\n", "\treturn total // sum\n", 1)
			}
			if ch[0].After != w {
				t.Fatalf("after:\n%s", ch[0].After)
			}
		})
	}
}
