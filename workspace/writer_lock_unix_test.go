//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestLockExcludes(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	unlock, err := w.Lock("a.lock")
	if err != nil {
		t.Fatal(err)
	}
	// A second holder (another open file, as another process has) waits
	// its 2 s and gives up.
	if _, err := w.Lock("a.lock"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock while held: %v, want ErrLocked", err)
	}
	unlock()
	unlock2, err := w.Lock("a.lock")
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	unlock2()

	// A FIFO at the lock's path is refused, never opened for long.
	if err := syscall.Mkfifo(filepath.Join(dir, "f.lock"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Lock("f.lock"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Lock on a FIFO: %v", err)
	}
	if err := w.AppendFile("f.lock", []byte("x")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("AppendFile on a FIFO: %v", err)
	}
	os.Remove(filepath.Join(dir, "f.lock"))
}
