package watch

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fileCalls records what the watched file held at each OnChange ("" when
// it was gone).
type fileCalls struct {
	mu   sync.Mutex
	seen []string
}

func (c *fileCalls) add(path string) {
	data, _ := os.ReadFile(path)
	c.mu.Lock()
	c.seen = append(c.seen, string(data))
	c.mu.Unlock()
}

func (c *fileCalls) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen)
}

func watchFile(t *testing.T, path string) *fileCalls {
	t.Helper()
	calls := &fileCalls{}
	f, err := NewFile(path, FileOptions{OnChange: func() { calls.add(path) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return calls
}

// waitSeen waits until the calls are want.
func waitSeen(t *testing.T, calls *fileCalls, want ...string) {
	t.Helper()
	waitFor(t, "OnChange calls "+strings.Join(want, ","), func() bool { return slices.Equal(calls.list(), want) })
}

// TestFileChanges: a write, an editor's save (a new file renamed over the
// old one) and a removal are each reported once; a write to another file of
// the directory is not reported.
func TestFileChanges(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	write(t, dir, "config.toml", "a = 1\n")
	calls := watchFile(t, path)

	write(t, dir, "config.toml", "a = 2\n")
	waitSeen(t, calls, "a = 2\n")

	write(t, dir, "other.toml", "noise\n")
	write(t, dir, ".config.toml.swp", "noise\n")
	write(t, dir, "config.toml.tmp", "a = 3\n")
	if err := os.Rename(filepath.Join(dir, "config.toml.tmp"), path); err != nil {
		t.Fatal(err)
	}
	waitSeen(t, calls, "a = 2\n", "a = 3\n")

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitSeen(t, calls, "a = 2\n", "a = 3\n", "")
}

// TestFileDirectoryAppears: the user file's directory need not exist when
// the watch starts (a first run); the file written there later, in a
// directory made later, is reported, and so is its next write.
func TestFileDirectoryAppears(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "kimi-lsp", "config.toml")
	calls := watchFile(t, path)
	write(t, root, "kimi-lsp/config.toml", "b = 1\n")
	waitSeen(t, calls, "b = 1\n")
	write(t, root, "kimi-lsp/config.toml", "b = 22\n")
	waitSeen(t, calls, "b = 1\n", "b = 22\n")
}

// TestFileThroughLink: a user file that is a link (a dotfile manager's) is
// reported when its target is written in the target's own directory, and
// when the link is pointed elsewhere.
func TestFileThroughLink(t *testing.T) {
	conf, dots := t.TempDir(), t.TempDir()
	write(t, dots, "kimi.toml", "c = 1\n")
	write(t, dots, "kimi2.toml", "c = 2\n")
	path := filepath.Join(conf, "config.toml")
	if err := os.Symlink(filepath.Join(dots, "kimi.toml"), path); err != nil {
		t.Fatal(err)
	}
	calls := watchFile(t, path)
	write(t, dots, "kimi.toml", "c = 11\n")
	waitSeen(t, calls, "c = 11\n")

	tmp := filepath.Join(conf, "link.tmp")
	if err := os.Symlink(filepath.Join(dots, "kimi2.toml"), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	waitSeen(t, calls, "c = 11\n", "c = 2\n")
	write(t, dots, "kimi2.toml", "c = 22\n")
	waitSeen(t, calls, "c = 11\n", "c = 2\n", "c = 22\n")
}

// TestFileCloseLeaksNothing: Close returns once the goroutine has ended,
// and releases the inotify descriptor; a panicking OnChange fails that
// call alone.
func TestFileCloseLeaksNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)
	var mu sync.Mutex
	n := 0
	f, err := NewFile(path, FileOptions{OnChange: func() {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			panic("test: OnChange")
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "config.toml", "1")
	waitFor(t, "the first OnChange", func() bool { mu.Lock(); defer mu.Unlock(); return n == 1 })
	write(t, dir, "config.toml", "22")
	waitFor(t, "the second OnChange after the first panicked", func() bool { mu.Lock(); defer mu.Unlock(); return n == 2 })
	f.Close()
	f.Close()
	waitFor(t, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= goroutines })
	if got := openFDs(t); got > fds {
		t.Errorf("%d open descriptors after Close, %d before NewFile", got, fds)
	}
}

// TestFileSince: a change made between Identify and NewFile (a watch
// started after its file was read) is reported once, and the next write
// too; with the file unchanged since Identify, nothing is reported.
func TestFileSince(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	write(t, dir, "config.toml", "d = 1\n")
	since := Identify(path)
	write(t, dir, "config.toml.tmp", "d = 2\n")
	if err := os.Rename(filepath.Join(dir, "config.toml.tmp"), path); err != nil {
		t.Fatal(err)
	}
	calls := &fileCalls{}
	f, err := NewFile(path, FileOptions{Since: since, OnChange: func() { calls.add(path) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	waitSeen(t, calls, "d = 2\n")
	write(t, dir, "config.toml", "d = 33\n")
	waitSeen(t, calls, "d = 2\n", "d = 33\n")

	// Unchanged since Identify: the next write is the first call.
	other := filepath.Join(dir, "other.toml")
	write(t, dir, "other.toml", "e = 1\n")
	quiet := &fileCalls{}
	g, err := NewFile(other, FileOptions{Since: Identify(other), OnChange: func() { quiet.add(other) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	write(t, dir, "other.toml", "e = 22\n")
	waitSeen(t, quiet, "e = 22\n")
}
