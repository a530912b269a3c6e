// Package patchtest provides a directory-backed patch.Files for tests and
// benchmarks: real files, real symlinks and the same confinement rules the
// workspace package enforces (no absolute paths elsewhere, no ".." escapes,
// no .git internals, no symlinks pointing out).
package patchtest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// Dir is a patch.Files over one directory tree.
type Dir struct {
	root string // absolute, symlinks resolved
}

var (
	_ patch.Files  = (*Dir)(nil)
	_ patch.Lister = (*Dir)(nil)
	_ patch.Namer  = (*Dir)(nil)
)

// NewDir returns a Dir rooted at root.
func NewDir(root string) (*Dir, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	return &Dir{root: abs}, nil
}

// Root returns the resolved root directory.
func (d *Dir) Root() string { return d.root }

// inside checks that abs lies under the root and outside .git.
func (d *Dir) inside(name, abs string) error {
	rel, err := filepath.Rel(d.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%q: %w", name, patch.ErrOutside)
	}
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		if c == ".git" {
			return fmt.Errorf("%q is inside .git: %w", name, patch.ErrOutside)
		}
	}
	return nil
}

// Resolve implements patch.Files.
func (d *Dir) Resolve(name string) (string, error) {
	if name == "" || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("invalid path %q", name)
	}
	abs := filepath.FromSlash(name)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(d.root, abs)
	}
	abs = filepath.Clean(abs)
	if err := d.inside(name, abs); err != nil {
		return "", err
	}
	// Resolve symlinks through the deepest existing ancestor.
	rest := ""
	cur := abs
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			abs = filepath.Join(real, rest)
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("resolve %q: %w", name, err)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", fmt.Errorf("resolve %q: %w", name, err)
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
	if err := d.inside(name, abs); err != nil {
		return "", err
	}
	return abs, nil
}

// Paths implements patch.Lister: every regular file under the root, .git
// directories left out, sorted.
func (d *Dir) Paths() []string {
	var out []string
	_ = filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.IsDir() && e.Name() == ".git" {
			return filepath.SkipDir
		}
		if e.Type().IsRegular() {
			rel, _ := filepath.Rel(d.root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// Relative implements patch.Namer.
func (d *Dir) Relative(text string) string {
	return patch.RelativeText(text, []patch.Root{{Paths: []string{d.root}}})
}

// Read implements patch.Files; versions are always patch.NoVersion.
func (d *Dir) Read(path string) (string, int32, error) {
	if err := d.inside(path, path); err != nil {
		return "", patch.NoVersion, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", patch.NoVersion, err
	}
	return string(b), patch.NoVersion, nil
}

// Write carries out changes on disk, in order.
func (d *Dir) Write(changes []patch.FileChange) error {
	for _, c := range changes {
		if err := d.inside(c.Path, c.Path); err != nil {
			return err
		}
		switch c.Kind {
		case patch.DeleteFile:
			if err := os.Remove(c.Path); err != nil {
				return err
			}
			continue
		case patch.RenameFile:
			if err := d.inside(c.OldPath, c.OldPath); err != nil {
				return err
			}
			if err := os.Remove(c.OldPath); err != nil {
				return err
			}
		}
		if err := os.MkdirAll(filepath.Dir(c.Path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(c.Path, []byte(c.After), 0o644); err != nil {
			return err
		}
	}
	return nil
}
