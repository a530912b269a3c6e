package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestViewFilesAndLazyRead(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a.go", "package a\n")
	writeFile(t, root, "node_modules/x/i.js", "x")
	writeFile(t, root, "build/out.txt", "x")
	writeFile(t, root, ".gitignore", "build/\n")
	writeFile(t, root, "drop/me.txt", "x")
	opts := DefaultOptions()
	opts.Exclude = []string{"drop/"}
	f := newFolders(t, opts, Hooks{}, root)
	v := f.Views()[0]
	var got []string
	for _, fi := range v.Files() {
		got = append(got, fi.Path)
		if fi.Hash != "" {
			t.Errorf("%s hashed before it was read: contents are read eagerly", fi.Path)
		}
	}
	if strings.Join(got, " ") != ".gitignore a.go" {
		t.Fatalf("files = %v", got)
	}
	text, err := v.Read("a.go")
	if err != nil || text != "package a\n" {
		t.Fatalf("Read = %q, %v", text, err)
	}
	fi, _ := v.Stat("a.go")
	if len(fi.Hash) != 64 || fi.URI != FileURI(filepath.Join(root, "a.go")) {
		t.Errorf("after Read: %+v", fi)
	}
	// A write invalidates the cached contents once the watcher saw it.
	writeFile(t, root, "a.go", "package a // v2\n")
	waitUntil(t, "new contents", func() bool { s, _ := v.Read("a.go"); return s == "package a // v2\n" })
	if _, ok := v.Stat("missing.go"); ok {
		t.Errorf("Stat of a missing file found it")
	}
	if _, err := v.Read("missing.go"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a missing file: %v", err)
	}
}

func TestReadFileRefusals(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	writeFile(t, root, "ok.go", "package ok")
	writeFile(t, root, ".env", "API_KEY=sk-live-123")
	writeFile(t, root, "bin.dat", "ELF\x00\x01\x02")
	writeFile(t, root, "big.txt", strings.Repeat("x", 2000))
	writeFile(t, outside, "o.txt", "outside")
	if err := os.Symlink(filepath.Join(outside, "o.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(root, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notices []string
	bufs := &fakeBuffers{}
	opts := DefaultOptions()
	opts.MaxFileSize = 1000
	f := newFolders(t, opts, Hooks{Buffers: bufs, SecretNotice: func(p string) {
		mu.Lock()
		notices = append(notices, p)
		mu.Unlock()
	}}, root)
	// The secret is open in the editor, with unsaved text: still refused.
	bufs.set(FileURI(filepath.Join(root, ".env")), "API_KEY=sk-live-456")

	tests := []struct {
		target string
		want   error
	}{
		{".env", ErrSecret},
		{filepath.Join(root, ".env"), ErrSecret},
		{"innocent.txt", ErrSecret}, // a link to a secret
		{"bin.dat", ErrBinary},
		{"big.txt", ErrTooLarge},
		{"link.txt", ErrOutsideWorkspace},
		{"../x", ErrOutsideWorkspace},
		{"nope.go", fs.ErrNotExist},
	}
	for _, tt := range tests {
		file, err := f.ReadFile(tt.target)
		if !errors.Is(err, tt.want) {
			t.Errorf("ReadFile(%q) = %+v, %v; want %v", tt.target, file, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "sk-live") {
			t.Errorf("error text carries the secret: %v", err)
		}
	}
	file, err := f.ReadFile("ok.go")
	if err != nil || file.Text != "package ok" || file.Open || file.Language != "go" || file.Path != "ok.go" {
		t.Errorf("ReadFile(ok.go) = %+v, %v", file, err)
	}
	// An open buffer wins over the disk copy.
	bufs.set(FileURI(filepath.Join(root, "ok.go")), "package ok // unsaved")
	file, err = f.ReadFile("ok.go")
	if err != nil || file.Text != "package ok // unsaved" || !file.Open {
		t.Errorf("ReadFile(open ok.go) = %+v, %v", file, err)
	}
	// The view refuses the secret too.
	if _, err := f.Views()[0].Read(".env"); !errors.Is(err, ErrSecret) {
		t.Errorf("View.Read(.env): %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notices) != 1 || notices[0] != ".env" {
		t.Errorf("notices = %q, want one, for .env", notices)
	}
}

func TestChangedOnDiskWhileOpen(t *testing.T) {
	root := t.TempDir()
	p := writeFile(t, root, "a.go", "package a\n")
	uri := FileURI(p)
	bufs := &fakeBuffers{}
	bufs.set(uri, "package a\n// typing\n")
	var mu sync.Mutex
	var changed []URI
	f := newFolders(t, DefaultOptions(), Hooks{Buffers: bufs, ChangedOnDisk: func(u URI) {
		mu.Lock()
		changed = append(changed, u)
		mu.Unlock()
	}}, root)
	v := f.Views()[0]
	// Another program rewrites the file: noted, the buffer wins.
	writeFile(t, root, "a.go", "package a\n// from git pull\n")
	waitUntil(t, "change noted", func() bool { fi, _ := v.Stat("a.go"); return fi.ChangedWhileOpen })
	file, _ := f.ReadFile("a.go")
	if file.Text != "package a\n// typing\n" {
		t.Errorf("ReadFile = %q; the buffer must win", file.Text)
	}
	// The editor saves: disk equals buffer, the note goes away.
	bufs.set(uri, "package a\n// saved\n")
	writeFile(t, root, "a.go", "package a\n// saved\n")
	waitUntil(t, "note cleared by a save", func() bool { fi, _ := v.Stat("a.go"); return !fi.ChangedWhileOpen })
	mu.Lock()
	defer mu.Unlock()
	if len(changed) != 1 || changed[0] != uri {
		t.Errorf("ChangedOnDisk calls = %v, want one for %s", changed, uri)
	}
}

func TestViewCacheEviction(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 40; i++ {
		writeFile(t, root, fmt.Sprintf("d/%02d.txt", i), strings.Repeat("a", 1000))
	}
	f := newFolders(t, DefaultOptions(), Hooks{}, root)
	v := f.Views()[0]
	v.mu.Lock()
	v.cacheCap = 10_000
	v.mu.Unlock()
	for _, fi := range v.Files() {
		if _, err := v.Read(fi.Path); err != nil {
			t.Fatal(err)
		}
	}
	// The most recent file is still cached, the first one is not.
	v.mu.Lock()
	cached, n := v.cached, len(v.cache)
	_, first := v.cache["d/00.txt"]
	_, last := v.cache["d/39.txt"]
	v.mu.Unlock()
	if cached > 10_000 || n != 10 || first || !last {
		t.Errorf("cache: %d bytes in %d files (first %v, last %v); want 10 files within 10000 bytes, the last kept", cached, n, first, last)
	}
}

func TestDidChangeWatchedFilesAndOptions(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a.go", "x")
	writeFile(t, root, "gen/b.go", "x")
	f := newFolders(t, DefaultOptions(), Hooks{}, root)
	p := writeFile(t, root, "c.go", "x")
	f.DidChangeWatchedFiles([]URI{FileURI(p), "untitled:z", FileURI("/elsewhere/x")})
	waitUntil(t, "c.go", func() bool { _, ok := f.Views()[0].Stat("c.go"); return ok })
	opts := DefaultOptions()
	opts.Exclude = []string{"gen/"}
	f.SetOptions(opts)
	if err := f.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Views()[0].Stat("gen/b.go"); ok {
		t.Errorf("gen/b.go still in view after excluding gen/")
	}
	if len(f.WatchStats()) != 1 {
		t.Errorf("WatchStats: %v", f.WatchStats())
	}
}
