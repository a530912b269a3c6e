package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestAppendFile(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.AppendFile("log", []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendFile(filepath.Join(dir, "log"), []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil || string(b) != "one\ntwo\n" {
		t.Fatalf("log = %q, %v", b, err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "log")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}

	got, fi, err := w.ReadFileAt("log", 4, 100)
	if err != nil || string(got) != "two\n" || fi.Size() != 8 {
		t.Fatalf("ReadFileAt(4) = %q, %v, %v", got, fi, err)
	}
	if got, _, err = w.ReadFileAt("log", 0, 3); err != nil || string(got) != "one" {
		t.Fatalf("ReadFileAt(0, 3) = %q, %v", got, err)
	}
	if got, _, err = w.ReadFileAt("log", 99, 3); err != nil || len(got) != 0 {
		t.Fatalf("ReadFileAt past the end = %q, %v", got, err)
	}

	// A link at the target is never written through, nor one leading out.
	outside := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(outside, []byte("keep"), 0o600)
	os.Symlink(outside, filepath.Join(dir, "out"))
	os.Symlink("log", filepath.Join(dir, "in"))
	for _, name := range []string{"out", "in"} {
		if err := w.AppendFile(name, []byte("x")); err == nil {
			t.Errorf("append through the link %s: no error", name)
		}
		if _, _, err := w.ReadFileAt(name, 0, 10); err == nil {
			t.Errorf("read through the link %s: no error", name)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Errorf("the file outside became %q", b)
	}
	if err := w.AppendFile("../escape", []byte("x")); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("append to ../escape: %v", err)
	}
}

func TestAppendFileConcurrentLinesWhole(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	line := make([]byte, 999)
	for i := range line {
		line[i] = 'a'
	}
	line = append(line, '\n')
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if err := w.AppendFile("log", line); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	b, _ := os.ReadFile(filepath.Join(dir, "log"))
	if len(b) != 400*len(line) {
		t.Fatalf("%d bytes, want %d", len(b), 400*len(line))
	}
	for i := 0; i < len(b); i += len(line) {
		if string(b[i:i+len(line)]) != string(line) {
			t.Fatalf("line at %d torn", i)
		}
	}
}

func TestReadFileAtTail(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Lstat("log"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Lstat of a missing file: %v", err)
	}
	w.AppendFile("log", []byte("abcdef"))
	if got, _, err := w.ReadFileAt("log", -1, 2); err != nil || string(got) != "ef" {
		t.Fatalf("last 2 bytes = %q, %v", got, err)
	}
	if got, _, err := w.ReadFileAt("log", -1, 100); err != nil || string(got) != "abcdef" {
		t.Fatalf("last 100 bytes = %q, %v", got, err)
	}
	if fi, err := w.Lstat("log"); err != nil || fi.Size() != 6 {
		t.Fatalf("Lstat = %v, %v", fi, err)
	}
}
