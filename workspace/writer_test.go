package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func newWriter(t *testing.T, dir string) *Writer {
	t.Helper()
	w, err := NewWriter(dir, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// listAll returns every name below dir, slash-separated and sorted.
func listAll(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if p != dir {
			r, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(r))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// TestWriterConfinement: writes leave the root by no path, link or .git,
// and never replace or write through a symbolic link.
func TestWriterConfinement(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	victim := writeFile(t, outside, "victim.txt", "untouched\n")
	writeFile(t, root, "src/a.go", "package a\n")
	writeFile(t, root, ".git/config", "[core]\n")
	os.Symlink(outside, filepath.Join(root, "out"))
	os.Symlink(victim, filepath.Join(root, "victim-link.txt"))
	os.Symlink("src/a.go", filepath.Join(root, "inlink.go"))
	os.Symlink(".git", filepath.Join(root, "gitlink"))
	w := newWriter(t, root)

	for _, tt := range []struct {
		path string
		want error
	}{
		{"../outside/victim.txt", ErrOutsideWorkspace},
		{victim, ErrOutsideWorkspace},
		{"out/victim.txt", ErrOutsideWorkspace},
		{"out/new.txt", ErrOutsideWorkspace},
		{"victim-link.txt", ErrOutsideWorkspace},
		{".git/config", ErrOutsideWorkspace},
		{"gitlink/hooks/pre-commit", ErrOutsideWorkspace},
		{root, ErrOutsideWorkspace},
		{"inlink.go", ErrNotRegular},
		{"src", ErrNotRegular},
	} {
		if err := w.WriteFile(tt.path, []byte("pwned\n")); !errors.Is(err, tt.want) {
			t.Errorf("WriteFile(%q) = %v, want %v", tt.path, err, tt.want)
		}
		if _, _, err := w.ReadFile(tt.path); err == nil {
			t.Errorf("ReadFile(%q) succeeded", tt.path)
		}
	}
	if got := readString(t, victim); got != "untouched\n" {
		t.Errorf("the file outside was written: %q", got)
	}
	if fi, _ := os.Lstat(filepath.Join(root, "inlink.go")); fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symbolic link inlink.go was replaced")
	}
	if got := readString(t, filepath.Join(root, "src/a.go")); got != "package a\n" {
		t.Errorf("written through a link: %q", got)
	}
	if got := readString(t, filepath.Join(root, ".git/config")); got != "[core]\n" {
		t.Errorf(".git/config written: %q", got)
	}
	// Inside, writes work: new directories, new files, replaced files, and
	// nothing else is left behind.
	if err := w.WriteFile("src/new/b.go", []byte("package b\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(filepath.Join(root, "src/a.go"), []byte("package a // v2\n")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(root, "src/new/b.go")); got != "package b\n" {
		t.Errorf("new file: %q", got)
	}
	if got := readString(t, filepath.Join(root, "src/a.go")); got != "package a // v2\n" {
		t.Errorf("replaced file: %q", got)
	}
	for _, name := range listAll(t, root) {
		if strings.Contains(name, ".kimi-") {
			t.Errorf("left behind: %s", name)
		}
	}
}

// TestWriterKeepsMode: a replaced file keeps its permission bits; new files
// get the writer's mode.
func TestWriterKeepsMode(t *testing.T) {
	root := t.TempDir()
	p := writeFile(t, root, "run.sh", "#!/bin/sh\n")
	os.Chmod(p, 0o750)
	w, err := NewWriter(root, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.WriteFile("run.sh", []byte("#!/bin/sh\necho hi\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("d/new.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// (0o600 and 0o700 are what any usual umask leaves alone.)
	for name, want := range map[string]fs.FileMode{"run.sh": 0o750, "d/new.txt": 0o600, "d": 0o700} {
		fi, err := os.Stat(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
}

// TestTxAllOrNothing: a Tx over several files changes all of them or none —
// a file changed on disk after it was read, a file to create that
// appeared, or a failure in the middle of the renames leaves every file as
// it was, with nothing left behind.
func TestTxAllOrNothing(t *testing.T) {
	setup := func(t *testing.T) (string, *Writer, [2]Stamp) {
		root := t.TempDir()
		writeFile(t, root, "a.go", "a1\n")
		writeFile(t, root, "b.go", "b1\n")
		writeFile(t, root, "gone.go", "g1\n")
		w := newWriter(t, root)
		var st [2]Stamp
		var err error
		for i, n := range []string{"a.go", "gone.go"} {
			if _, st[i], err = w.ReadFile(n); err != nil {
				t.Fatal(err)
			}
		}
		return root, w, st
	}
	stage := func(t *testing.T, w *Writer, st [2]Stamp) *Tx {
		tx := w.Begin()
		for _, err := range []error{
			tx.Replace("a.go", st[0], []byte("a2\n")),
			tx.Create("new/dir/c.go", []byte("c2\n")),
			tx.Remove("gone.go", st[1]),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		return tx
	}
	unchanged := func(t *testing.T, root string) {
		t.Helper()
		want := []string{"a.go", "b.go", "gone.go"}
		if got := listAll(t, root); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("files after a refused commit: %v, want %v", got, want)
		}
		if readString(t, filepath.Join(root, "a.go")) != "a1\n" || readString(t, filepath.Join(root, "gone.go")) != "g1\n" {
			t.Errorf("a file changed")
		}
	}

	t.Run("commit", func(t *testing.T) {
		root, w, st := setup(t)
		if err := stage(t, w, st).Commit(); err != nil {
			t.Fatal(err)
		}
		want := []string{"a.go", "b.go", "new", "new/dir", "new/dir/c.go"}
		if got := listAll(t, root); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("files after commit: %v, want %v", got, want)
		}
		if readString(t, filepath.Join(root, "a.go")) != "a2\n" || readString(t, filepath.Join(root, "new/dir/c.go")) != "c2\n" {
			t.Errorf("contents after commit are wrong")
		}
	})
	t.Run("changed on disk", func(t *testing.T) {
		root, w, st := setup(t)
		tx := stage(t, w, st)
		os.WriteFile(filepath.Join(root, "gone.go"), []byte("g1 and the user's line\n"), 0o644)
		if err := tx.Commit(); !errors.Is(err, ErrChangedOnDisk) {
			t.Fatalf("Commit = %v, want ErrChangedOnDisk", err)
		}
		os.WriteFile(filepath.Join(root, "gone.go"), []byte("g1\n"), 0o644)
		unchanged(t, root)
	})
	t.Run("created meanwhile", func(t *testing.T) {
		root, w, st := setup(t)
		tx := stage(t, w, st)
		writeFile(t, root, "new/dir/c.go", "theirs\n")
		if err := tx.Commit(); !errors.Is(err, ErrChangedOnDisk) {
			t.Fatalf("Commit = %v, want ErrChangedOnDisk", err)
		}
		if readString(t, filepath.Join(root, "new/dir/c.go")) != "theirs\n" {
			t.Errorf("the file created meanwhile was replaced")
		}
		os.RemoveAll(filepath.Join(root, "new"))
		unchanged(t, root)
	})
	for _, at := range []int{1, 2} {
		t.Run("failure in the renames", func(t *testing.T) {
			root, w, st := setup(t)
			inode := func() fs.FileInfo { fi, _ := os.Stat(filepath.Join(root, "a.go")); return fi }
			before := inode()
			tx := stage(t, w, st)
			tx.beforeApply = func(i int) error {
				if i == at {
					return errors.New("injected failure")
				}
				return nil
			}
			if err := tx.Commit(); err == nil || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("Commit = %v, want the injected failure", err)
			}
			unchanged(t, root)
			if !os.SameFile(before, inode()) {
				t.Errorf("a.go was not restored as the same file")
			}
		})
	}
	t.Run("abort", func(t *testing.T) {
		root, w, st := setup(t)
		stage(t, w, st).Abort()
		unchanged(t, root)
	})
}

// BenchmarkWriterWriteFile is one atomic write of a 2 KiB file through
// the Writer (exclusive temporary file, fsync, rename), as for the
// statistics file after every task.
func BenchmarkWriterWriteFile(b *testing.B) {
	w, err := NewWriter(b.TempDir(), 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	data := []byte(strings.Repeat("x", 2048))
	for b.Loop() {
		if err := w.WriteFile("stats.json", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTx10Files is edit --write's commit of ten 8 KiB files: read,
// stage, check, keep, rename, clean up.
func BenchmarkTx10Files(b *testing.B) {
	root := b.TempDir()
	w, err := NewWriter(root, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	data := []byte(strings.Repeat("y", 8<<10))
	for i := range 10 {
		writeFile(b, root, "pkg/f"+string(rune('0'+i))+".go", string(data))
	}
	for b.Loop() {
		tx := w.Begin()
		for i := range 10 {
			p := "pkg/f" + string(rune('0'+i)) + ".go"
			_, st, err := w.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			if err := tx.Replace(p, st, data); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFoldersIsSecret is one secret check by name and resolved
// target, for a path five directories deep (the lsp memo serves repeats).
func BenchmarkFoldersIsSecret(b *testing.B) {
	root := b.TempDir()
	p := writeFile(b, root, "a/b/c/d/main.go", "package d\n")
	f := newFolders(b, DefaultOptions(), Hooks{}, root)
	for b.Loop() {
		if f.IsSecret(p) {
			b.Fatal("main.go is secret")
		}
	}
}

// FuzzWriterPath: whatever path a Writer accepts names something strictly
// below its root and outside .git; writing there never leaves the root.
func FuzzWriterPath(f *testing.F) {
	base := f.TempDir()
	root := filepath.Join(base, "ws")
	writeFile(f, root, "a/b.go", "x")
	os.Symlink(base, filepath.Join(root, "up"))
	w, err := NewWriter(root, 0o644)
	if err != nil {
		f.Fatal(err)
	}
	defer w.Close()
	for _, s := range []string{"a/b.go", "../x", "a/../../x", "/etc/passwd", ".git/x", "up/x", "a/./b/../../..", "a\x00b", root + "/a/c.go", "notes:v2.go"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := w.rel(p)
		if err != nil {
			return
		}
		r, ok := within(w.Dir(), filepath.Join(w.Dir(), rel))
		if !ok || r == "" || hasGitDir(r) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			t.Fatalf("rel(%q) = %q: not strictly below the root, or in .git", p, rel)
		}
		if real, err := resolveLinks(filepath.Join(w.Dir(), rel)); err == nil {
			if _, ok := within(w.Dir(), real); !ok {
				t.Fatalf("rel(%q) = %q resolves to %s, outside the root", p, rel, real)
			}
		}
	})
}
