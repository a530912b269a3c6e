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

// TestWriterKeepsSpecialModeBits is issue 21 item 13: a replaced file keeps
// its setuid, setgid and sticky bits with its permissions (edit --write
// dropped them), and its owner and group.
func TestWriterKeepsSpecialModeBits(t *testing.T) {
	root := t.TempDir()
	for _, mode := range []os.FileMode{0o4755, 0o2755, 0o6750, 0o1644} {
		want := os.FileMode(mode.Perm())
		if mode&0o4000 != 0 {
			want |= os.ModeSetuid
		}
		if mode&0o2000 != 0 {
			want |= os.ModeSetgid
		}
		if mode&0o1000 != 0 {
			want |= os.ModeSticky
		}
		p := filepath.Join(root, "tool.sh")
		writeFile(t, root, "tool.sh", "#!/bin/sh\necho 1\n")
		if err := os.Chmod(p, want); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(p); fi.Mode() != want {
			t.Skipf("chmod cannot set %v here (got %v): the file system or the user's groups do not allow it", want, fi.Mode())
		}
		before, _ := os.Stat(p)
		w := newWriter(t, root)
		_, stamp, err := w.ReadFile("tool.sh")
		if err != nil {
			t.Fatal(err)
		}
		tx := w.Begin()
		if err := tx.Replace("tool.sh", stamp, []byte("#!/bin/sh\necho 2\n")); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		after, _ := os.Stat(p)
		if after.Mode() != want {
			t.Errorf("mode %v after the write, want %v", after.Mode(), want)
		}
		o, n := before.Sys().(*syscall.Stat_t), after.Sys().(*syscall.Stat_t)
		if o.Uid != n.Uid || o.Gid != n.Gid {
			t.Errorf("owner %d:%d after the write, want %d:%d", n.Uid, n.Gid, o.Uid, o.Gid)
		}
		if got := readString(t, p); got != "#!/bin/sh\necho 2\n" {
			t.Errorf("tool.sh = %q", got)
		}
		// Put over the file keeps them too.
		if err := w.WriteFile("tool.sh", []byte("#!/bin/sh\necho 3\n")); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(p); fi.Mode() != want {
			t.Errorf("mode %v after WriteFile, want %v", fi.Mode(), want)
		}
	}
}

// TestWriterKeepsOwner: a setuid file of another user (root edits it) keeps
// its owner and group, so it stays setuid to that user, not to root.
func TestWriterKeepsOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("only root can make a file of another user")
	}
	root := t.TempDir()
	p := writeFile(t, root, "tool.sh", "#!/bin/sh\n")
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o755|os.ModeSetuid|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	w := newWriter(t, root)
	_, stamp, err := w.ReadFile("tool.sh")
	if err != nil {
		t.Fatal(err)
	}
	tx := w.Begin()
	if err := tx.Replace("tool.sh", stamp, []byte("#!/bin/sh\necho 2\n")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 65534 || st.Gid != 65534 || fi.Mode() != 0o755|os.ModeSetuid|os.ModeSetgid {
		t.Errorf("after the write: %v %d:%d, want %v 65534:65534", fi.Mode(), st.Uid, st.Gid, 0o755|os.ModeSetuid|os.ModeSetgid)
	}
}
