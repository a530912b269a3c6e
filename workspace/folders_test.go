package workspace

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// fakeBuffers is a real, small in-memory Buffers for tests.
type fakeBuffers struct {
	mu   sync.Mutex
	open map[URI]string
}

func (b *fakeBuffers) Buffer(uri URI) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.open[uri]
	return t, ok
}

func (b *fakeBuffers) set(uri URI, text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open == nil {
		b.open = map[URI]string{}
	}
	b.open[uri] = text
}

func writeFile(t testing.TB, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// newFolders makes Folders over real directories and waits for their scans.
func newFolders(t testing.TB, opts Options, hooks Hooks, roots ...string) *Folders {
	t.Helper()
	if hooks.Logger == nil {
		hooks.Logger = slog.New(slog.DiscardHandler)
	}
	f := NewFolders(opts, hooks)
	t.Cleanup(func() { f.Close() })
	for _, r := range roots {
		if err := f.Add(FileURI(r), ""); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := f.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFoldersAddRemoveOwner(t *testing.T) {
	outer := t.TempDir()
	inner := filepath.Join(outer, "sub", "inner")
	writeFile(t, inner, "x.go", "package x")
	writeFile(t, outer, "a.go", "package a")
	f := newFolders(t, DefaultOptions(), Hooks{}, outer, inner)
	if err := f.Add(FileURI(outer), "again"); err != nil {
		t.Fatalf("adding a folder twice: %v", err)
	}
	if got := len(f.List()); got != 2 {
		t.Fatalf("%d folders, want 2", got)
	}
	owner, ok := f.Owner(filepath.Join(inner, "x.go"))
	if !ok || owner.Path != inner {
		t.Errorf("Owner(inner/x.go) = %v, %v; want the innermost folder %s", owner.Path, ok, inner)
	}
	owner, ok = f.Owner(filepath.Join(outer, "a.go"))
	if !ok || owner.Path != outer {
		t.Errorf("Owner(outer/a.go) = %v, %v", owner.Path, ok)
	}
	if _, ok := f.Owner(t.TempDir()); ok {
		t.Errorf("Owner of an unrelated directory found a folder")
	}
	if rel, _ := f.RelPath(filepath.Join(inner, "x.go")); rel != "inner/x.go" {
		t.Errorf("RelPath with two folders = %q, want inner/x.go", rel)
	}
	if err := f.Add(FileURI(filepath.Join(outer, "a.go")), ""); err == nil {
		t.Errorf("Add of a file: no error")
	}
	if err := f.Add(URI("untitled:x"), ""); err == nil {
		t.Errorf("Add of a non-file URI: no error")
	}
	if !f.Remove(FileURI(inner)) || f.Remove(FileURI(inner)) {
		t.Errorf("Remove: first should succeed, second fail")
	}
	if rel, _ := f.RelPath(filepath.Join(outer, "a.go")); rel != "a.go" {
		t.Errorf("RelPath with one folder = %q, want a.go", rel)
	}
}

func TestFolderNamesUnique(t *testing.T) {
	a := filepath.Join(t.TempDir(), "proj")
	b := filepath.Join(t.TempDir(), "proj")
	for _, d := range []string{a, b} {
		writeFile(t, d, "f.txt", "x")
	}
	f := newFolders(t, DefaultOptions(), Hooks{}, a, b)
	l := f.List()
	if l[0].Name != "proj" || l[1].Name != "proj~2" {
		t.Errorf("names = %q, %q", l[0].Name, l[1].Name)
	}
	abs, folder, err := f.Resolve("proj~2/f.txt")
	if err != nil || folder.Path != b || abs != filepath.Join(b, "f.txt") {
		t.Errorf("Resolve(proj~2/f.txt) = %q, %v, %v", abs, folder.Path, err)
	}
}

func TestFoldersCloseReleasesEverything(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a/b.go", "package a")
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	goroutines, before := runtime.NumGoroutine(), fds()
	for i := 0; i < 3; i++ {
		f := NewFolders(DefaultOptions(), Hooks{Logger: slog.New(slog.DiscardHandler)})
		if err := f.Add(FileURI(root), ""); err != nil {
			t.Fatal(err)
		}
		if err := f.Ready(t.Context()); err != nil {
			t.Fatal(err)
		}
		writeFile(t, root, "a/new.go", fmt.Sprint(i))
		if _, err := f.ReadFile("a/b.go"); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	waitUntil(t, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= goroutines })
	if after := fds(); after != before {
		t.Errorf("open descriptors: %d before, %d after Close", before, after)
	}
}
