package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveConfinement(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	writeFile(t, root, "src/a.go", "package a")
	writeFile(t, root, ".git/config", "[core]")
	writeFile(t, outside, "secret.txt", "nope")
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	link(outside, "out")       // directory link leading out
	link("src/a.go", "inlink") // file link staying in
	link(filepath.Join(outside, "new.txt"), "dangling-out")
	link("src/new.go", "dangling-in")
	link("loop1", "loop2")
	link("loop2", "loop1")
	link(".git", "gitlink")
	// The folder is reached through a link too: /tmp/x/alias → ws.
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(root, alias); err != nil {
		t.Fatal(err)
	}
	f := newFolders(t, DefaultOptions(), Hooks{}, root)

	tests := []struct {
		target  string
		want    string // real path relative to root, when allowed
		refused bool   // ErrOutsideWorkspace
		err     bool   // another error
	}{
		{target: "src/a.go", want: "src/a.go"},
		{target: "./src/a.go", want: "src/a.go"},
		{target: "src/../src/a.go", want: "src/a.go"},
		{target: filepath.Join(root, "src/a.go"), want: "src/a.go"},
		{target: string(FileURI(filepath.Join(root, "src/a.go"))), want: "src/a.go"},
		{target: "src/new/dir/file.go", want: "src/new/dir/file.go"}, // to create
		{target: "inlink", want: "src/a.go"},
		{target: "dangling-in", want: "src/new.go"},
		{target: filepath.Join(alias, "src/a.go"), want: "src/a.go"},
		{target: "../outside/secret.txt", refused: true},
		{target: "src/../../outside/secret.txt", refused: true},
		{target: filepath.Join(outside, "secret.txt"), refused: true},
		{target: string(FileURI(filepath.Join(outside, "secret.txt"))), refused: true},
		{target: "out/secret.txt", refused: true},
		{target: "out/new.txt", refused: true},
		{target: "dangling-out", refused: true},
		{target: ".git/config", refused: true},
		{target: ".git/hooks/pre-commit", refused: true},
		{target: "src/.GIT/x", refused: true},
		{target: "gitlink/config", refused: true},
		{target: root, refused: true},
		{target: ".", refused: true},
		{target: "/etc/passwd", refused: true},
		{target: "loop1", err: true},
		{target: "", err: true},
		{target: "a\x00b", err: true},
		{target: "untitled:Untitled-1", err: true},
		{target: "vscode-notebook-cell:/x/a.ipynb", err: true},
		{target: "https://example.com/a.go", err: true},
		// Issue 12 item 14: a colon in a file name is a file name.
		{target: "notes:v2.go", want: "notes:v2.go"},
		{target: "src/12:30.txt", want: "src/12:30.txt"},
		{target: "ab:c/d.go", want: "ab:c/d.go"},
		{target: filepath.Join(root, "notes:v2.go"), want: "notes:v2.go"},
		{target: string(FileURI(filepath.Join(root, "notes:v2.go"))), want: "notes:v2.go"},
	}
	for _, tt := range tests {
		abs, folder, err := f.Resolve(tt.target)
		switch {
		case tt.refused:
			if !errors.Is(err, ErrOutsideWorkspace) {
				t.Errorf("Resolve(%q) = %q, %v; want ErrOutsideWorkspace", tt.target, abs, err)
			}
		case tt.err:
			if err == nil || errors.Is(err, ErrOutsideWorkspace) {
				t.Errorf("Resolve(%q) = %q, %v; want a plain error", tt.target, abs, err)
			}
		default:
			if err != nil {
				t.Errorf("Resolve(%q): %v", tt.target, err)
				continue
			}
			want := filepath.Join(folder.Real, filepath.FromSlash(tt.want))
			if abs != want || folder.Path != root {
				t.Errorf("Resolve(%q) = %q in %q, want %q in %q", tt.target, abs, folder.Path, want, root)
			}
		}
		if err != nil && strings.Contains(err.Error(), "\x00") {
			t.Errorf("error text carries a NUL: %q", err)
		}
	}
}

func TestResolveWithoutFolders(t *testing.T) {
	f := NewFolders(DefaultOptions(), Hooks{})
	defer f.Close()
	if _, _, err := f.Resolve("a.go"); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("Resolve with no folders: %v", err)
	}
}

func FuzzResolve(f *testing.F) {
	root := f.TempDir()
	writeFile(f, root, "a/b.go", "x")
	folders := NewFolders(DefaultOptions(), Hooks{})
	if err := folders.Add(FileURI(root), ""); err != nil {
		f.Fatal(err)
	}
	defer folders.Close()
	for _, s := range []string{"a/b.go", "../x", "a/../../x", "file:///etc/passwd", ".git/x", "a/./b/../../..", "file://host/x", "%", "a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		abs, folder, err := folders.Resolve(target)
		if err != nil {
			return
		}
		if _, ok := within(folder.Real, abs); !ok {
			t.Fatalf("Resolve(%q) = %q, outside %q", target, abs, folder.Real)
		}
		if hasGitDir(abs[len(folder.Real):]) {
			t.Fatalf("Resolve(%q) = %q, inside .git", target, abs)
		}
	})
}
