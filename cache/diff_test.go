package cache

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// roundTrip renders the edit block from old to new and applies it to old.
func roundTrip(t testing.TB, old, new string) string {
	t.Helper()
	block := appendEdit(nil, "x.go", 1, old, new)
	if old == new {
		if len(block) != 0 {
			t.Fatalf("edit block for equal texts: %q", block)
		}
		return old
	}
	header, body := cutLine(block)
	if string(header) != "<edit path=\"x.go\" seq=\"1\">\n" || !bytes.HasSuffix(body, []byte("</edit>\n")) {
		t.Fatalf("bad block framing: %q", block)
	}
	got, err := applyEditBody(old, body[:len(body)-len("</edit>\n")])
	if err != nil {
		t.Fatalf("applying %q to %q: %v", block, old, err)
	}
	return got
}

func TestEditBlock(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"change one line", "a\nb\nc\n", "a\nB\nc\n", "<edit path=\"x.go\" seq=\"1\">\n@@ -2,1 +2,1 @@\n-b\n+B\n</edit>\n"},
		{"insert at top", "a\nb\n", "z\na\nb\n", "<edit path=\"x.go\" seq=\"1\">\n@@ -0,0 +1,1 @@\n+z\n</edit>\n"},
		{"insert in middle", "a\nb\n", "a\nx\ny\nb\n", "<edit path=\"x.go\" seq=\"1\">\n@@ -1,0 +2,2 @@\n+x\n+y\n</edit>\n"},
		{"delete last", "a\nb\n", "a\n", "<edit path=\"x.go\" seq=\"1\">\n@@ -2,1 +1,0 @@\n-b\n</edit>\n"},
		{"append without newline", "a\n", "a\nb", "<edit path=\"x.go\" seq=\"1\">\n@@ -1,0 +2,1 @@\n+b\n\\ No newline at end of file\n</edit>\n"},
		{"add final newline", "a\nb", "a\nb\n", "<edit path=\"x.go\" seq=\"1\">\n@@ -2,1 +2,1 @@\n-b\n\\ No newline at end of file\n+b\n</edit>\n"},
		{"two separate hunks", "1\n2\n3\n4\n5\n", "1\nX\n3\n4\nY\n", "<edit path=\"x.go\" seq=\"1\">\n@@ -2,1 +2,1 @@\n-2\n+X\n@@ -5,1 +5,1 @@\n-5\n+Y\n</edit>\n"},
		{"from empty", "", "a\n", "<edit path=\"x.go\" seq=\"1\">\n@@ -0,0 +1,1 @@\n+a\n</edit>\n"},
		{"to empty", "a\n", "", "<edit path=\"x.go\" seq=\"1\">\n@@ -1,1 +0,0 @@\n-a\n</edit>\n"},
		{"crlf kept", "a\r\nb\r\n", "a\r\nc\r\n", "<edit path=\"x.go\" seq=\"1\">\n@@ -2,1 +2,1 @@\n-b\r\n+c\r\n</edit>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(appendEdit(nil, "x.go", 1, tt.old, tt.new)); got != tt.want {
				t.Errorf("got block\n%s\nwant\n%s", got, tt.want)
			}
			if got := roundTrip(t, tt.old, tt.new); got != tt.new {
				t.Errorf("round trip gave %q, want %q", got, tt.new)
			}
		})
	}
}

// mutate makes n random line-level edits to text.
func mutate(r *rand.Rand, text string, n int) string {
	lines := linediff.SplitLines(text)
	for i := 0; i < n; i++ {
		at := 0
		if len(lines) > 0 {
			at = r.IntN(len(lines))
		}
		switch r.IntN(4) {
		case 0: // insert
			lines = append(lines[:at], append([]string{"// inserted " + string(rune('a'+r.IntN(26))) + "\n"}, lines[at:]...)...)
		case 1: // delete
			if len(lines) > 0 {
				lines = append(lines[:at], lines[at+1:]...)
			}
		case 2: // change
			if len(lines) > 0 {
				lines[at] = strings.ToUpper(lines[at])
			}
		case 3: // change inside a line, or drop the final newline
			if len(lines) > 0 {
				l := lines[at]
				if r.IntN(8) == 0 && at == len(lines)-1 {
					lines[at] = strings.TrimSuffix(l, "\n")
				} else {
					lines[at] = strings.Replace(l, "e", "E", 1)
				}
			}
		}
	}
	return strings.Join(lines, "")
}

func TestEditBlockRandom(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(goroot(t), "src", "net", "http", "header.go"))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	text := string(src)
	for i := 0; i < 300; i++ {
		next := mutate(r, text, 1+r.IntN(6))
		if got := roundTrip(t, text, next); got != next {
			t.Fatalf("step %d: round trip differs", i)
		}
		text = next
	}
}

// TestEditBlockGNUPatch checks that an edit block's hunks are a unified diff
// that GNU patch applies the same way.
func TestEditBlockGNUPatch(t *testing.T) {
	patch, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("GNU patch not installed")
	}
	src, err := os.ReadFile(filepath.Join(goroot(t), "src", "net", "http", "header.go"))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 10; i++ {
		old := string(src)
		new := mutate(r, old, 1+r.IntN(6))
		block := appendEdit(nil, "x.go", 1, old, new)
		_, body := cutLine(block)
		body = body[:len(body)-len("</edit>\n")]
		dir := t.TempDir()
		file := filepath.Join(dir, "x.go")
		if err := os.WriteFile(file, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		diff := append([]byte("--- a/x.go\n+++ b/x.go\n"), body...)
		cmd := exec.Command(patch, "-s", "-p1", "-F0", "-N")
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(diff)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("patch: %v\n%s\n%s", err, out, diff)
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != new {
			t.Fatalf("GNU patch gave a different text for\n%s", diff)
		}
	}
}

func TestApplyEditBodyRejects(t *testing.T) {
	tests := []struct{ name, text, body string }{
		{"no header", "a\n", "-a\n"},
		{"bad header", "a\n", "@@ -x +1 @@\n"},
		{"mismatch", "a\n", "@@ -1,1 +1,1 @@\n-b\n+c\n"},
		{"past end", "a\n", "@@ -3,1 +3,1 @@\n-a\n+c\n"},
		{"missing plus", "a\n", "@@ -1,1 +1,1 @@\n-a\n"},
		{"out of order", "a\nb\n", "@@ -2,1 +2,1 @@\n-b\n+c\n@@ -1,1 +1,1 @@\n-a\n+d\n"},
	}
	for _, tt := range tests {
		if _, err := applyEditBody(tt.text, []byte(tt.body)); err == nil {
			t.Errorf("%s: applyEditBody succeeded, want an error", tt.name)
		}
	}
}

func FuzzEditBlock(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("", "x")
	f.Add("x\r\ny", "x\ny\r\n")
	f.Add("1\n2\n3\n4\n5\n6\n", "0\n2\n3\n5\n6\n7")
	f.Fuzz(func(t *testing.T, old, new string) {
		if got := roundTrip(t, old, new); got != new {
			t.Fatalf("round trip of %q -> %q gave %q", old, new, got)
		}
	})
}

func goroot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}
