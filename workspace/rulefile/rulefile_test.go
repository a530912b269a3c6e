package rulefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bounded runs f and fails the test if it has not returned after a long
// while (a FIFO open that blocks never returns). It then unblocks such an
// open by opening every FIFO of fifos for writing, so the suite goes on.
func bounded(t *testing.T, fifos []string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		for {
			for _, p := range fifos {
				if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
			}
			select {
			case <-done:
				t.Fatal("Read blocked")
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

func mkfifo(t *testing.T, p string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	return p
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func TestRead(t *testing.T) {
	outside := t.TempDir()
	write(t, filepath.Join(outside, "rules"), "outside\n")
	fifoOut := mkfifo(t, filepath.Join(outside, "fifo"))

	type want struct {
		data string
		err  error
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) []string // returns the FIFOs made
		links Links
		want  map[Links]want
	}{
		{name: "regular", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "f"), "ok\n")
			return nil
		}, want: map[Links]want{Inside: {"ok\n", nil}, NoLinks: {"ok\n", nil}, ToRegular: {"ok\n", nil}}},
		{name: "missing", setup: func(t *testing.T, dir string) []string { return nil },
			want: map[Links]want{Inside: {"", fs.ErrNotExist}, NoLinks: {"", fs.ErrNotExist}, ToRegular: {"", fs.ErrNotExist}}},
		{name: "fifo", setup: func(t *testing.T, dir string) []string {
			return []string{mkfifo(t, filepath.Join(dir, "f"))}
		}, want: map[Links]want{Inside: {"", ErrNotRegular}, NoLinks: {"", ErrNotRegular}, ToRegular: {"", ErrNotRegular}}},
		{name: "link-to-fifo-inside", setup: func(t *testing.T, dir string) []string {
			p := mkfifo(t, filepath.Join(dir, "sub", "pipe"))
			link(t, "sub/pipe", filepath.Join(dir, "f"))
			return []string{p}
		}, want: map[Links]want{Inside: {"", ErrNotRegular}, NoLinks: {"", ErrLink}, ToRegular: {"", ErrNotRegular}}},
		{name: "link-to-fifo-outside", setup: func(t *testing.T, dir string) []string {
			link(t, fifoOut, filepath.Join(dir, "f"))
			return []string{fifoOut}
		}, want: map[Links]want{Inside: {"", ErrOutside}, NoLinks: {"", ErrLink}, ToRegular: {"", ErrNotRegular}}},
		{name: "link-to-stdin", setup: func(t *testing.T, dir string) []string {
			link(t, "/dev/stdin", filepath.Join(dir, "f"))
			return nil
		}, want: map[Links]want{Inside: {"", ErrOutside}, NoLinks: {"", ErrLink}, ToRegular: {"", ErrNotRegular}}},
		{name: "link-to-regular-inside", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "real"), "inside\n")
			link(t, "real", filepath.Join(dir, "f"))
			return nil
		}, want: map[Links]want{Inside: {"inside\n", nil}, NoLinks: {"", ErrLink}, ToRegular: {"inside\n", nil}}},
		{name: "link-to-regular-outside", setup: func(t *testing.T, dir string) []string {
			link(t, filepath.Join(outside, "rules"), filepath.Join(dir, "f"))
			return nil
		}, want: map[Links]want{Inside: {"", ErrOutside}, NoLinks: {"", ErrLink}, ToRegular: {"outside\n", nil}}},
		{name: "directory", setup: func(t *testing.T, dir string) []string {
			if err := os.Mkdir(filepath.Join(dir, "f"), 0o755); err != nil {
				t.Fatal(err)
			}
			return nil
		}, want: map[Links]want{Inside: {"", ErrNotRegular}, NoLinks: {"", ErrNotRegular}, ToRegular: {"", ErrNotRegular}}},
		{name: "too-large", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "f"), strings.Repeat("x", 101))
			return nil
		}, want: map[Links]want{Inside: {"", ErrTooLarge}, NoLinks: {"", ErrTooLarge}, ToRegular: {"", ErrTooLarge}}},
		{name: "at-the-cap", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "f"), strings.Repeat("x", 100))
			return nil
		}, want: map[Links]want{Inside: {strings.Repeat("x", 100), nil}, NoLinks: {strings.Repeat("x", 100), nil}, ToRegular: {strings.Repeat("x", 100), nil}}},
	}
	for _, c := range cases {
		for _, links := range []Links{Inside, NoLinks, ToRegular} {
			t.Run(c.name+"/"+[]string{"Inside", "NoLinks", "ToRegular"}[links], func(t *testing.T) {
				dir := t.TempDir()
				fifos := c.setup(t, dir)
				w := c.want[links]
				var data []byte
				var err error
				bounded(t, fifos, func() { data, err = Read(dir, "f", 100, links) })
				if w.err == nil && err != nil || w.err != nil && !errors.Is(err, w.err) {
					t.Fatalf("Read: err = %v, want %v", err, w.err)
				}
				if string(data) != w.data {
					t.Fatalf("Read = %q, want %q", data, w.data)
				}
			})
		}
	}
}

// A directory on the way that is a link out of the folder is refused as
// well; one inside is followed.
func TestReadDirectoryLinks(t *testing.T) {
	outside := t.TempDir()
	write(t, filepath.Join(outside, ".gitignore"), "x\n")
	dir := t.TempDir()
	link(t, outside, filepath.Join(dir, "out"))
	write(t, filepath.Join(dir, "real", ".gitignore"), "y\n")
	link(t, "real", filepath.Join(dir, "in"))
	if _, err := Read(dir, "out/.gitignore", 100, NoLinks); err == nil {
		t.Error("out/.gitignore through a link out of the folder was read")
	}
	if b, err := Read(dir, "in/.gitignore", 100, NoLinks); err != nil || string(b) != "y\n" {
		t.Errorf("in/.gitignore = %q, %v", b, err)
	}
}
