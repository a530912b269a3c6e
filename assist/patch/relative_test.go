package patch_test

import (
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

func TestRelativeText(t *testing.T) {
	t.Setenv("HOME", "/home/ann")
	one := []patch.Root{{Paths: []string{"/home/ann/src/ws", "/data/ws"}}}
	two := []patch.Root{{Paths: []string{"/home/ann/a"}, Prefix: "a/"}, {Paths: []string{"/home/ann/a/b"}, Prefix: "b/"}}
	tests := []struct {
		roots    []patch.Root
		in, want string
	}{
		{one, "open /home/ann/src/ws/pkg/x.go: permission denied", "open pkg/x.go: permission denied"},
		{one, "read /data/ws/dir: is a directory", "read dir: is a directory"},
		{one, "notes.txt resolves through a symbolic link to /home/ann/private/notes.txt: outside", "notes.txt resolves through a symbolic link to ~/private/notes.txt: outside"},
		{one, "/home/ann/src/ws2/x.go and /home/ann/src/ws", "~/src/ws2/x.go and ."},
		{one, "see /home/annex/x", "see /home/annex/x"},
		{two, "open /home/ann/a/b/c.go and /home/ann/a/d.go", "open b/c.go and a/d.go"},
	}
	for _, tc := range tests {
		if got := patch.RelativeText(tc.in, tc.roots); got != tc.want {
			t.Errorf("RelativeText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
