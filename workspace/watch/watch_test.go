package watch

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace/ignore"
)

// deadline bounds every wait on an asynchronous condition; the conditions
// normally hold within tens of milliseconds.
const deadline = 20 * time.Second

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %s waiting for %s", deadline, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func write(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func paths(tr *Tree) string {
	var ps []string
	for _, e := range tr.Entries() {
		ps = append(ps, e.Path)
	}
	return strings.Join(ps, " ")
}

func start(t testing.TB, root string, opts Options) *Tree {
	t.Helper()
	if opts.Debounce == 0 {
		opts.Debounce = 10 * time.Millisecond
	}
	tr, err := New(context.Background(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func TestInitialScan(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"a.go", "sub/b.go", "sub/deep/c.txt", "node_modules/x/i.js", "gen/z.go", "skip.log", ".git/config"} {
		write(t, root, f, f)
	}
	write(t, root, ".gitignore", "*.log\ngen/\n")
	if err := os.Symlink(".", filepath.Join(root, "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../..", filepath.Join(root, "sub/up")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := start(t, root, Options{})
	if got, want := paths(tr), ".gitignore a.go loop sub/b.go sub/deep/c.txt sub/up"; got != want {
		t.Errorf("entries = %q, want %q", got, want)
	}
	e, ok := tr.Lookup("loop")
	if !ok || e.Mode&fs.ModeSymlink == 0 {
		t.Errorf("loop: %+v, %v; want a symlink entry", e, ok)
	}
	e, _ = tr.Lookup("sub/b.go")
	if e.Size != int64(len("sub/b.go")) || e.Mode != 0 || e.ModTime.IsZero() {
		t.Errorf("sub/b.go entry = %+v", e)
	}
	if !tr.IsDir("sub/deep") || tr.IsDir("gen") || tr.IsDir("node_modules") {
		t.Errorf("IsDir: sub/deep=%v gen=%v node_modules=%v", tr.IsDir("sub/deep"), tr.IsDir("gen"), tr.IsDir("node_modules"))
	}
	if got := tr.Dirs(); got != 3 {
		t.Errorf("Dirs = %d, want 3 (root, sub, sub/deep)", got)
	}
	if got := len(tr.Dir("sub")); got != 2 {
		t.Errorf("Dir(sub) has %d files, want 2", got)
	}
	if tr.Mode() != ModeNative {
		t.Errorf("Mode = %v", tr.Mode())
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(context.Background(), filepath.Join(t.TempDir(), "missing"), Options{}); err == nil {
		t.Error("New on a missing directory: no error")
	}
	f := filepath.Join(t.TempDir(), "f")
	write(t, filepath.Dir(f), "f", "x")
	if _, err := New(context.Background(), f, Options{}); err == nil {
		t.Error("New on a file: no error")
	}
}

// TestEvents drives real file system changes and waits for the index to
// show each one.
func TestEvents(t *testing.T) {
	root := t.TempDir()
	write(t, root, "keep.go", "package keep")
	var mu sync.Mutex
	var seen []Change
	tr := start(t, root, Options{OnChange: func(cs []Change) {
		mu.Lock()
		seen = append(seen, cs...)
		mu.Unlock()
	}})
	has := func(rel string) func() bool { return func() bool { _, ok := tr.Lookup(rel); return ok } }
	not := func(rel string) func() bool { return func() bool { _, ok := tr.Lookup(rel); return !ok } }

	// create
	write(t, root, "a.go", "package a")
	waitFor(t, "create a.go", has("a.go"))
	// write
	write(t, root, "a.go", "package a // longer now")
	waitFor(t, "write a.go", func() bool { e, _ := tr.Lookup("a.go"); return e.Size == int64(len("package a // longer now")) })
	// rename
	if err := os.Rename(filepath.Join(root, "a.go"), filepath.Join(root, "b.go")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "rename a.go → b.go", func() bool { return has("b.go")() && not("a.go")() })
	// delete
	if err := os.Remove(filepath.Join(root, "b.go")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "delete b.go", not("b.go"))
	// new nested directory, made at once (mkdir -p), then a file deep inside
	if err := os.MkdirAll(filepath.Join(root, "n1/n2/n3"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, root, "n1/n2/n3/deep.go", "package deep")
	waitFor(t, "nested file", has("n1/n2/n3/deep.go"))
	waitFor(t, "nested dirs watched", func() bool { return tr.IsDir("n1/n2/n3") })
	write(t, root, "n1/n2/n3/later.go", "package deep")
	waitFor(t, "file in a new nested dir after it is watched", has("n1/n2/n3/later.go"))
	// rename a directory: the new name is watched, the old one forgotten
	if err := os.Rename(filepath.Join(root, "n1"), filepath.Join(root, "m1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "dir rename", func() bool { return has("m1/n2/n3/deep.go")() && not("n1/n2/n3/deep.go")() })
	write(t, root, "m1/n2/n3/after.go", "x")
	waitFor(t, "file in renamed dir", has("m1/n2/n3/after.go"))
	if tr.IsDir("n1") || tr.IsDir("n1/n2") {
		t.Errorf("old directory names still indexed")
	}
	// a file replaced by a directory, and back
	write(t, root, "x", "file")
	waitFor(t, "x as file", has("x"))
	if err := os.Remove(filepath.Join(root, "x")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "x/inner.go", "package inner")
	waitFor(t, "x replaced by a directory", func() bool { return has("x/inner.go")() && not("x")() && tr.IsDir("x") })
	if err := os.RemoveAll(filepath.Join(root, "x")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "x", "file again")
	waitFor(t, "directory x replaced by a file", func() bool { return has("x")() && not("x/inner.go")() && !tr.IsDir("x") })
	// delete a whole tree
	if err := os.RemoveAll(filepath.Join(root, "m1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "tree removed", func() bool { return paths(tr) == "keep.go x" })
	if tr.Dirs() != 1 {
		t.Errorf("Dirs = %d after removals, want 1", tr.Dirs())
	}

	mu.Lock()
	defer mu.Unlock()
	ops := map[Op]bool{}
	for _, c := range seen {
		ops[c.Op] = true
	}
	if !ops[Created] || !ops[Modified] || !ops[Removed] {
		t.Errorf("OnChange saw ops %v, want created, modified and removed", ops)
	}
}

func TestIgnoreRuleChanges(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.go", "")
	write(t, root, "a.tmp", "")
	write(t, root, "d/b.tmp", "")
	if err := os.MkdirAll(filepath.Join(root, ".git/info"), 0o755); err != nil {
		t.Fatal(err)
	}
	tr := start(t, root, Options{})
	if got := paths(tr); got != "a.go a.tmp d/b.tmp" {
		t.Fatalf("entries = %q", got)
	}
	write(t, root, ".gitignore", "*.tmp\n")
	waitFor(t, ".gitignore applied", func() bool { return paths(tr) == ".gitignore a.go" })
	write(t, root, "d/.gitignore", "!b.tmp\n")
	waitFor(t, "nested negation applied", func() bool { return paths(tr) == ".gitignore a.go d/.gitignore d/b.tmp" })
	write(t, root, ".git/info/exclude", "d/\n")
	waitFor(t, ".git/info/exclude applied", func() bool { return paths(tr) == ".gitignore a.go" && !tr.IsDir("d") })
	write(t, root, ".git/info/exclude", "")
	if err := os.Remove(filepath.Join(root, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "rules removed", func() bool { return paths(tr) == "a.go a.tmp d/.gitignore d/b.tmp" })
	// New files in an ignored directory are not indexed (nor watched).
	write(t, root, "node_modules/p/i.js", "")
	write(t, root, "z.go", "")
	waitFor(t, "z.go", func() bool { _, ok := tr.Lookup("z.go"); return ok })
	if _, ok := tr.Lookup("node_modules/p/i.js"); ok || tr.IsDir("node_modules") {
		t.Errorf("node_modules indexed")
	}
}

// TestBurst creates 5,000 files at once: the index catches up, and it does
// so in a few batches (rescans), not thousands.
func TestBurst(t *testing.T) {
	root := t.TempDir()
	tr := start(t, root, Options{Debounce: 50 * time.Millisecond})
	const n = 5000
	// The directories first, watched before the files come: a file
	// written into a directory not yet watched is found by the walk of
	// that directory, not by an event, and under load most of the burst
	// would then never reach a batch (it failed so, with one batch and no
	// rescan, at load 11).
	for i := range 50 {
		if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("d%02d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "50 directories indexed", func() bool { return tr.Dirs() >= 50 })
	time.Sleep(100 * time.Millisecond) // their batch applied: the next ones are the files'
	for i := 0; i < n; i++ {
		write(t, root, fmt.Sprintf("d%02d/f%04d.go", i%50, i), "package x\n")
	}
	waitFor(t, "5000 files indexed", func() bool { return tr.Len() == n })
	st := tr.Stats()
	t.Logf("burst of %d files: %+v", n, st)
	if st.Rescans == 0 {
		t.Errorf("no full rescan for a burst of %d files: %+v", n, st)
	}
	if st.Batches > 100 {
		t.Errorf("%d batches for a burst of %d files; events are not debounced", st.Batches, n)
	}
	// And all of them go at once.
	if err := os.RemoveAll(root + "/d07"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "d07 removed", func() bool { return tr.Len() == n-100 })
}

// TestOverflow stalls the Tree's goroutine (in OnChange) while 24,000
// writes alternate between two files, so that the kernel's inotify queue
// (16,384 events by default) overflows; the Tree must notice and rescan.
func TestOverflow(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a", "")
	write(t, root, "b", "")
	release := make(chan struct{})
	var once sync.Once
	tr := start(t, root, Options{OnChange: func([]Change) {
		once.Do(func() { <-release })
	}})
	write(t, root, "first", "")
	waitFor(t, "first batch (the goroutine is now stalled)", func() bool { return tr.Generation() == 1 })
	fa, err := os.OpenFile(filepath.Join(root, "a"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := os.OpenFile(filepath.Join(root, "b"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	const n = 12000 // writes per file; alternating defeats the kernel's coalescing
	for i := 0; i < n; i++ {
		if _, err := fa.Write([]byte{'a'}); err != nil {
			t.Fatal(err)
		}
		if _, err := fb.Write([]byte{'b'}); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	waitFor(t, "overflow seen and rescanned", func() bool {
		st := tr.Stats()
		a, _ := tr.Lookup("a")
		b, _ := tr.Lookup("b")
		return st.Overflows > 0 && st.Rescans > 0 && a.Size == n && b.Size == n
	})
}

func TestSymlinkLoopDoesNotHang(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a/f.go", "")
	tr := start(t, root, Options{})
	// Made after the start: a loop found by events, not by the first walk.
	if err := os.Symlink("..", filepath.Join(root, "a/up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("self", filepath.Join(root, "self")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "links indexed", func() bool { return paths(tr) == "a/f.go a/up self" })
	tr.Rescan()
	g := tr.Generation()
	write(t, root, "b.go", "")
	waitFor(t, "index current after rescan", func() bool { return tr.Generation() > g && paths(tr) == "a/f.go a/up b.go self" })
}

func TestMaxFiles(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 10; i++ {
		write(t, root, fmt.Sprintf("f%d", i), "")
	}
	tr := start(t, root, Options{MaxFiles: 4})
	if tr.Len() != 4 {
		t.Errorf("Len = %d with MaxFiles 4", tr.Len())
	}
}

// TestFallbackModes checks the two degraded modes work without inotify:
// polling finds changes by itself, client mode through Notify.
func TestFallbackModes(t *testing.T) {
	t.Run("poll", func(t *testing.T) {
		root := t.TempDir()
		tr := start(t, root, Options{startMode: ModePoll, PollInterval: 20 * time.Millisecond})
		write(t, root, "p/new.go", "")
		waitFor(t, "poll finds the file", func() bool { _, ok := tr.Lookup("p/new.go"); return ok })
		if tr.Mode() != ModePoll {
			t.Errorf("Mode = %v", tr.Mode())
		}
	})
	t.Run("client", func(t *testing.T) {
		root := t.TempDir()
		tr := start(t, root, Options{startMode: ModeClient})
		write(t, root, "c/new.go", "")
		write(t, root, "c/other.go", "")
		tr.Notify(filepath.Join(root, "c"), "/elsewhere/x.go", "../outside")
		waitFor(t, "client event applied", func() bool { return paths(tr) == "c/new.go c/other.go" })
		if err := os.Remove(filepath.Join(root, "c/new.go")); err != nil {
			t.Fatal(err)
		}
		tr.Notify("c/new.go")
		waitFor(t, "client delete applied", func() bool { return paths(tr) == "c/other.go" })
	})
}

func openFDs(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("counting open descriptors: %v", err)
	}
	return len(ents)
}

// TestCloseReleasesEverything counts goroutines and open descriptors
// around the life of several Trees.
func TestCloseReleasesEverything(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a/b/c.go", "")
	runtime.GC()
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)
	for i := 0; i < 5; i++ {
		tr, err := New(context.Background(), root, Options{Debounce: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		write(t, root, fmt.Sprintf("a/n%d.go", i), "")
		waitFor(t, "event", func() bool { return tr.Len() == i+2 })
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
		if err := tr.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	}
	waitFor(t, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= goroutines })
	if got := openFDs(t); got != fds {
		t.Errorf("open descriptors: %d before, %d after closing the trees", fds, got)
	}
}

func TestIgnoreOption(t *testing.T) {
	root := t.TempDir()
	write(t, root, "keep.go", "")
	write(t, root, "drop/x.go", "")
	tr := start(t, root, Options{Ignore: ignore.New(root, ignore.Options{Excludes: []string{"drop/"}})})
	if got := paths(tr); got != "keep.go" {
		t.Errorf("entries = %q", got)
	}
}

func TestOpString(t *testing.T) {
	got := []string{Created.String(), Modified.String(), Removed.String(), Op(9).String(),
		ModeNative.String(), ModeClient.String(), ModePoll.String()}
	sort.Strings(got)
	if strings.Join(got, ",") != "Op(9),client,created,modified,native,poll,removed" {
		t.Errorf("names = %v", got)
	}
}
