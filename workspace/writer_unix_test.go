//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWriterFIFO: a FIFO at the target is refused at once, never opened
// for a write that would wait for a reader, nor read while waiting for a
// writer; a FIFO planted at a temporary name is never used.
func TestWriterFIFO(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.go"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "calc.go", "package calc\n")
	// The temporary names of the old writer, planted as FIFOs.
	for _, n := range []string{"calc.go.kimi-tmp", ".calc.go.kimi-tmp"} {
		if err := syscall.Mkfifo(filepath.Join(root, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := newWriter(t, root)
	done := make(chan error, 3)
	go func() {
		_, _, err := w.ReadFile("pipe.go")
		done <- err
		done <- w.WriteFile("pipe.go", []byte("x"))
		done <- w.WriteFile("calc.go", []byte("package calc // v2\n"))
	}()
	for i, want := range []error{ErrNotRegular, ErrNotRegular, nil} {
		select {
		case err := <-done:
			if !errors.Is(err, want) {
				t.Errorf("call %d: %v, want %v", i, err, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("call %d hangs on a FIFO", i)
		}
	}
	if got := readString(t, filepath.Join(root, "calc.go")); got != "package calc // v2\n" {
		t.Errorf("calc.go = %q", got)
	}
	if fi, _ := os.Lstat(filepath.Join(root, "pipe.go")); fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced")
	}
}
