package patch_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// benchFile returns net/http/server.go from GOROOT (about 4 000 lines) and
// an edit of three places in it.
func benchFile(b *testing.B) (string, string) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command")
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "src", "net", "http", "server.go"))
	if err != nil {
		b.Skip(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	for _, at := range []int{400, 1800, 3300} {
		lines[at] = strings.TrimSuffix(lines[at], "\n") + " // edited\n"
	}
	return string(src), strings.Join(lines, "")
}

func benchApply(b *testing.B, mangle func(string) string) {
	before, after := benchFile(b)
	d := workspace(&testing.T{}, map[string]string{"server.go": before})
	diff := mangle(patch.Unified("a/server.go", "b/server.go", before, after, 3))
	b.SetBytes(int64(len(before)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := patch.Apply(d, diff, patch.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApplyHinted(b *testing.B) { benchApply(b, func(s string) string { return s }) }

func BenchmarkApplyNoLineNumbers(b *testing.B) {
	benchApply(b, func(s string) string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "@@") {
				l = "@@ ... @@"
			}
			out = append(out, l)
		}
		return strings.Join(out, "\n")
	})
}

func BenchmarkApplyTabsToSpaces(b *testing.B) {
	benchApply(b, func(s string) string { return strings.ReplaceAll(s, "\t", "    ") })
}

func BenchmarkLineEdits(b *testing.B) {
	before, after := benchFile(b)
	b.SetBytes(int64(len(before)))
	b.ReportAllocs()
	for b.Loop() {
		if len(patch.LineEdits(before, after)) != 3 {
			b.Fatal("want 3 edits")
		}
	}
}

func BenchmarkRebase(b *testing.B) {
	before, after := benchFile(b)
	edits := patch.LineEdits(before, after)
	current := "// user typed\n" + before[:len(before)/2] + "// here too\n" + before[len(before)/2:]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := patch.Rebase(before, current, edits); err != nil {
			b.Fatal(err)
		}
	}
}
