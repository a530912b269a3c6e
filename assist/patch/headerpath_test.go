package patch_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// TestHeaderPathByTail covers header paths relative to another root than
// the workspace's (issue 21.23): the one file whose path matches the
// header's by trailing segments is edited; two such files refuse, naming
// both.
func TestHeaderPathByTail(t *testing.T) {
	const body = "@@\n func Sum(xs ...int) int {\n-\ttotal := 0\n+\ttotal := 1\n"
	edited := strings.Replace(goFile, "\ttotal := 0\n", "\ttotal := 1\n", 1)
	diff := func(name string) string { return "--- a/" + name + "\n+++ b/" + name + "\n" + body }
	tests := []struct {
		name   string
		files  []string // each holds goFile
		header string
		doc    string
		want   string // the file edited
		err    error
		names  []string // named in the refusal
	}{
		{name: "extra leading directory", files: []string{"cmd/root.go"}, header: "myrepo/cmd/root.go", want: "cmd/root.go"},
		{name: "relative to a deeper root", files: []string{"tools/cmd/root.go"}, header: "cmd/root.go", want: "tools/cmd/root.go"},
		{name: "different leading directories", files: []string{"src/cmd/root.go", "root.go"}, header: "myrepo/cmd/root.go", want: "src/cmd/root.go"},
		{name: "workspace opened below the header's root", files: []string{"root.go"}, header: "myrepo/cmd/root.go", want: "root.go"},
		{name: "two files qualify", files: []string{"cmd/root.go", "tools/cmd/root.go"}, header: "myrepo/cmd/root.go",
			err: patch.ErrFileState, names: []string{"cmd/root.go", "tools/cmd/root.go"}},
		{name: "only the base name agrees: the action's document", files: []string{"internal/app/root.go", "other/root.go"},
			header: "myrepo/cmd/root.go", doc: "internal/app/root.go", want: "internal/app/root.go"},
		{name: "only the base name agrees, no document", files: []string{"internal/app/root.go"},
			header: "myrepo/cmd/root.go", err: patch.ErrFileState},
		{name: "a path climbing out stays outside", files: []string{"cmd/root.go"}, header: "../other/cmd/root.go", err: patch.ErrOutside},
		{name: "document with another name", files: []string{"internal/app/main.go"},
			header: "myrepo/cmd/root.go", doc: "internal/app/main.go", err: patch.ErrFileState},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			for _, f := range tc.files {
				files[f] = goFile
			}
			d := workspace(t, files)
			changes, err := patch.Apply(d, diff(tc.header), patch.Options{Document: tc.doc})
			if tc.err != nil {
				if !errors.Is(err, tc.err) || changes != nil {
					t.Fatalf("got %v, %v; want %v", changes, err, tc.err)
				}
				for _, n := range tc.names {
					if !strings.Contains(err.Error(), n) {
						t.Errorf("refusal does not name %s: %v", n, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if len(changes) != 1 || !strings.HasSuffix(changes[0].Path, "/"+tc.want) || changes[0].After != edited {
				t.Fatalf("got %+v, want an edit of %s", changes, tc.want)
			}
		})
	}
	// A diff of two files does not fall back to the document.
	d := workspace(t, map[string]string{"internal/app/root.go": goFile, "notes.txt": "one\n"})
	two := diff("myrepo/cmd/root.go") + "--- a/notes.txt\n+++ b/notes.txt\n@@\n-one\n+uno\n"
	if _, err := patch.Apply(d, two, patch.Options{Document: "internal/app/root.go"}); !errors.Is(err, patch.ErrFileState) {
		t.Errorf("two-file diff: got %v, want ErrFileState", err)
	}
}

// TestHeaderPathAddOnlyNotMoved: a diff that only adds lines to a file that
// does not exist (a new file written without --- /dev/null) is not moved to
// another file whose path ends like its header: there is nothing to
// recognise that file by, and the refusal must name the header's path and
// say how to create it, not speak of another file.
func TestHeaderPathAddOnlyNotMoved(t *testing.T) {
	for _, hunk := range []string{"@@ -0,0 +1,3 @@", "@@"} {
		d := workspace(t, map[string]string{"other/calc_test.go": "package other\n\nfunc TestX() {}\n", "calc.go": "package calc\n"})
		diff := "--- a/calc_test.go\n+++ b/calc_test.go\n" + hunk + "\n+package calc\n+\n+func TestAdd() {}\n"
		changes, err := patch.Apply(d, diff, patch.Options{Document: "calc.go"})
		if !errors.Is(err, patch.ErrFileState) || changes != nil {
			t.Fatalf("%s: got %+v, %v; want ErrFileState", hunk, changes, err)
		}
		if msg := err.Error(); strings.Contains(msg, "other/") || !strings.Contains(msg, "/dev/null") {
			t.Errorf("%s: the refusal %q speaks of another file or does not say how to create one", hunk, msg)
		}
	}
}
