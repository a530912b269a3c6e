package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// withinBound runs f, failing the test if it blocks (on a FIFO: fifo is
// then opened for writing until f returns, so the suite goes on).
func withinBound(t *testing.T, fifo string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return
	case <-time.After(20 * time.Second):
	}
	for {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		select {
		case <-done:
			t.Fatal("reading the configuration blocked")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// A workspace .kimi-lsp.toml that is a FIFO, or a link to /dev/stdin (the
// server's own LSP input) or out of the folder, is not read: one problem
// says why, and nothing blocks.
func TestWorkspaceFileNotRegular(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "x.toml")
	if err := os.WriteFile(outside, []byte("model = \"kimi-k3\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, want string }{
		{"fifo", "FIFO"}, {"/dev/stdin", "pointing out of its folder"}, {outside, "pointing out of its folder"},
	} {
		t.Run(filepath.Base(c.name), func(t *testing.T) {
			root := t.TempDir()
			p := WorkspaceFile(root)
			fifo := p
			if c.name == "fifo" {
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Symlink(c.name, p); err != nil {
				t.Fatal(err)
			}
			var cfg Config
			var errs []error
			withinBound(t, fifo, func() { cfg, errs = Default().WithWorkspaceFiles(p) })
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) || !strings.Contains(errs[0].Error(), p) {
				t.Fatalf("errs = %v, want one naming %s and %q", errs, p, c.want)
			}
			if cfg.Model != Default().Model {
				t.Errorf("model = %q: the file was read", cfg.Model)
			}
		})
	}
}

// The user's config file may be a link (dotfile managers keep it in their
// repository), to a regular file only.
func TestUserFileLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "kimi.toml")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("model = \"kimi-k3\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(dir, "config.toml")
	if err := os.Symlink(real, user); err != nil {
		t.Fatal(err)
	}
	cfg, errs := Load(func(string) string { return "" }, user)
	if len(errs) != 0 || cfg.Model != "kimi-k3" {
		t.Errorf("linked user file: model %q, errs %v", cfg.Model, errs)
	}

	for _, target := range []string{"/dev/stdin", "fifo"} {
		t.Run(filepath.Base(target), func(t *testing.T) {
			dir := t.TempDir()
			user := filepath.Join(dir, "config.toml")
			fifo := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			if target == "fifo" {
				target = fifo
			}
			if err := os.Symlink(target, user); err != nil {
				t.Fatal(err)
			}
			var errs []error
			withinBound(t, fifo, func() { _, errs = Load(func(string) string { return "" }, user) })
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), "not a regular file") {
				t.Errorf("errs = %v, want one saying the file is not a regular file", errs)
			}
		})
	}
}
