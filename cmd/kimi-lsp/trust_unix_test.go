//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestEditWriteIgnoresPlantedFIFO is issue 12 item 1: a FIFO at the old
// fixed temporary name made edit --write hang forever; the confined writer
// never opens an existing name for writing.
func TestEditWriteIgnoresPlantedFIFO(t *testing.T) {
	dir := goModule(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "calc.go.kimi-tmp"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeSubtract(t, dir)
}

// TestCommandOnAFIFO: explain and edit on a FIFO (or a link to one) refuse
// it as not a regular file at once; reading it would wait forever for a
// writer.
func TestCommandOnAFIFO(t *testing.T) {
	dir := goModule(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.go"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pipe.go", filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"explain", "pipe.go"},
		{"explain", "link.go:1"},
		{"edit", "pipe.go", "-m", "x"},
	} {
		r := runBinary(t, testEnv(t), dir, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "is not a regular file") {
			t.Errorf("kimi-lsp %q: exit %d, stderr %q; want 2 and \"is not a regular file\"", args, r.code, r.stderr)
		}
	}
}

// TestTargetWording: a directory and a line number beyond any int get a
// plain sentence, not a mode string or a parse error.
func TestTargetWording(t *testing.T) {
	dir := goModule(t)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "sub"}, "sub is a directory: name a file in it"},
		{[]string{"explain", "calc.go:3-99999999999999999999"}, "calc.go:3-99999999999999999999 ends past the end of calc.go"},
		{[]string{"explain", "calc.go:99999999999999999999"}, "calc.go:99999999999999999999 is past the end of calc.go"},
	} {
		r := runBinary(t, testEnv(t), dir, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("kimi-lsp %q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
