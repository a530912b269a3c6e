package ignore

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO as an ignore file (a cloned repository cannot hold one, but any
// process can make one) is skipped with one log line: the matcher neither
// blocks on opening it nor waits for a writer, and the other ignore files
// still count.
func TestMatcherSkipsFIFOs(t *testing.T) {
	for _, rel := range []string{IgnoreFile, "sub/" + IgnoreFile, InfoExclude} {
		t.Run(rel, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, map[string]string{"sub/a.log": "", "b.tmp": "", "sub/deeper/.gitignore": "*.log\n", "sub/deeper/c.log": ""})
			fifo := filepath.Join(root, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			var got [3]bool
			done := make(chan struct{})
			go func() {
				defer close(done)
				m := New(root, Options{NoDefaults: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				got = [3]bool{m.Ignored("sub/a.log", false), m.Ignored("b.tmp", false), m.Ignored("sub/deeper/c.log", false)}
				m.Reset()
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				unblock(fifo, done)
				t.Fatalf("the matcher blocked on the FIFO %s", rel)
			}
			if got != [3]bool{false, false, true} {
				t.Errorf("Ignored(sub/a.log, b.tmp, sub/deeper/c.log) = %v, want [false false true]", got)
			}
			if n := strings.Count(logs.String(), "ignore file skipped"); n < 1 || !strings.Contains(logs.String(), "FIFO") {
				t.Errorf("log = %q, want a line naming the FIFO", logs.String())
			}
		})
	}
}

// .git/info/exclude is followed through a link inside the folder (as git
// does) but not through one pointing out of it (where git would follow it:
// a folder's rules come from the folder).
func TestInfoExcludeLinks(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "rules"), []byte("*.out\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	writeTree(t, root, map[string]string{"rules.txt": "*.in\n", "a.in": "", "a.out": ""})
	ex := filepath.Join(root, filepath.FromSlash(InfoExclude))
	if err := os.MkdirAll(filepath.Dir(ex), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../rules.txt", ex); err != nil {
		t.Fatal(err)
	}
	if m := New(root, Options{NoDefaults: true}); !m.Ignored("a.in", false) {
		t.Error("a .git/info/exclude linked inside the folder was not read")
	}
	os.Remove(ex)
	if err := os.Symlink(filepath.Join(outside, "rules"), ex); err != nil {
		t.Fatal(err)
	}
	if m := New(root, Options{NoDefaults: true}); m.Ignored("a.out", false) {
		t.Error("a .git/info/exclude linked out of the folder was read")
	}
}

// unblock opens fifo for writing until done is closed, so that an open of
// it that blocks returns and the suite goes on.
func unblock(fifo string, done <-chan struct{}) {
	for {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		select {
		case <-done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}
