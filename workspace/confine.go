package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideWorkspace is returned by Resolve for a path that may not be
// written, created or deleted: outside every workspace folder (lexically,
// by "..", or through a symbolic link that points out), inside a .git
// directory, or a workspace folder itself.
var ErrOutsideWorkspace = errors.New("outside the workspace folders")

// maxLinkHops bounds symbolic-link resolution, so that a loop is an error.
const maxLinkHops = 255

// Resolve turns target — a file URI, an absolute path, or a
// workspace-relative path (see RelPath: with several folders it starts with
// a folder's name, else it is taken relative to the first folder) — into
// the absolute path it really designates, symbolic links resolved (those of
// missing trailing components too: a write through a dangling link lands on
// its target), and the innermost folder containing that real path. The
// path need not exist, so that a file can be created.
//
// Anything that resolves outside every folder, into a .git directory, or
// to a folder itself, is refused with an error wrapping
// ErrOutsideWorkspace. The edit applier calls Resolve before every write,
// create, rename or delete. A link changed between Resolve and the write
// is not caught (no openat2 RESOLVE_BENEATH here).
func (f *Folders) Resolve(target string) (abs string, folder Folder, err error) {
	if target == "" {
		return "", Folder{}, errors.New("resolve: empty path")
	}
	if strings.ContainsRune(target, 0) {
		return "", Folder{}, fmt.Errorf("resolve %q: NUL in path", target)
	}
	lexical, err := f.lexical(target)
	if err != nil {
		return "", Folder{}, err
	}
	if _, rel, ok := f.owner(lexical); ok && hasGitDir(rel) {
		return "", Folder{}, fmt.Errorf("%s is inside a .git directory: %w", target, ErrOutsideWorkspace)
	}
	real, err := resolveLinks(lexical)
	if err != nil {
		return "", Folder{}, fmt.Errorf("resolve %s: %w", target, err)
	}
	rv, rrel, ok := f.ownerReal(real)
	if !ok {
		if _, _, lexOK := f.owner(lexical); !lexOK {
			return "", Folder{}, fmt.Errorf("%s: %w", target, ErrOutsideWorkspace)
		}
		return "", Folder{}, fmt.Errorf("%s resolves through a symbolic link to %s: %w", target, real, ErrOutsideWorkspace)
	}
	if rrel == "" {
		return "", Folder{}, fmt.Errorf("%s is the workspace folder %s itself: %w", target, rv.folder.Name, ErrOutsideWorkspace)
	}
	if hasGitDir(rrel) {
		return "", Folder{}, fmt.Errorf("%s resolves into a .git directory: %w", target, ErrOutsideWorkspace)
	}
	return real, rv.folder, nil
}

// lexical turns target into a clean absolute path, refusing a relative path
// that climbs out with "..".
func (f *Folders) lexical(target string) (string, error) {
	if strings.HasPrefix(target, "file:") {
		u, err := ParseURI(target)
		if err != nil {
			return "", err
		}
		p, err := u.Path()
		if err != nil {
			return "", err
		}
		return filepath.Clean(p), nil
	}
	if scheme, ok := uriScheme(target); ok && !filepath.IsAbs(target) {
		return "", fmt.Errorf("resolve %q: %w: %s", target, ErrNotFile, scheme)
	}
	if filepath.IsAbs(target) {
		return filepath.Clean(target), nil
	}
	rel := filepath.Clean(filepath.FromSlash(target))
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s climbs out with \"..\": %w", target, ErrOutsideWorkspace)
	}
	v, rest, ok := f.splitNamed(filepath.ToSlash(rel))
	if !ok {
		return "", fmt.Errorf("%s: no workspace folder: %w", target, ErrOutsideWorkspace)
	}
	return filepath.Join(v.folder.Path, filepath.FromSlash(rest)), nil
}

// uriScheme reports whether target reads as a URI rather than a path, and
// its scheme: "scheme://…" or "scheme:/…" (vscode-notebook-cell:/x.ipynb),
// or an editor's in-memory document ("untitled:Untitled-1"). Other names
// with a colon are file names: "notes:v2.go", "12:30.txt".
func uriScheme(target string) (string, bool) {
	i := strings.IndexByte(target, ':')
	if i < 2 {
		return "", false // no colon, or a Windows drive letter
	}
	scheme := target[:i]
	for j, r := range scheme {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (j == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return "", false
		}
	}
	rest := target[i+1:]
	return scheme, strings.HasPrefix(rest, "/") || strings.EqualFold(scheme, "untitled")
}

// splitNamed splits a workspace-relative path into its folder and the
// folder-relative rest: with several folders, a first element naming a
// folder selects it; otherwise the first folder.
func (f *Folders) splitNamed(rel string) (*View, string, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if len(f.views) == 0 {
		return nil, "", false
	}
	rel = strings.TrimPrefix(rel, "./")
	if len(f.views) > 1 {
		first, rest, _ := strings.Cut(rel, "/")
		for _, v := range f.views {
			if v.folder.Name == first {
				return v, rest, true
			}
		}
	}
	return f.views[0], rel, true
}

// ownerReal is owner against the folders' real paths only.
func (f *Folders) ownerReal(p string) (*View, string, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var best *View
	var bestRel string
	for _, v := range f.views {
		if rel, ok := within(v.folder.Real, p); ok && (best == nil || len(v.folder.Real) > len(best.folder.Real)) {
			best, bestRel = v, rel
		}
	}
	return best, bestRel, best != nil
}

func hasGitDir(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if strings.EqualFold(part, ".git") {
			return true
		}
	}
	return false
}

// resolveLinks resolves every symbolic link in the absolute, clean path p,
// like filepath.EvalSymlinks, except that components that do not exist are
// kept as they are (so the path of a file to create resolves too), and a
// dangling link resolves to its target.
func resolveLinks(p string) (string, error) {
	vol := filepath.VolumeName(p)
	resolved := vol + string(filepath.Separator)
	todo := splitPath(p[len(vol):])
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || isNotDir(err) {
				resolved = next
				continue
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		hops++
		if hops > maxLinkHops {
			return "", fmt.Errorf("too many levels of symbolic links at %s", next)
		}
		dest, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(dest) {
			v := filepath.VolumeName(dest)
			resolved = v + string(filepath.Separator)
			dest = dest[len(v):]
		}
		todo = append(splitPath(dest), todo...)
	}
	return filepath.Clean(resolved), nil
}

func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == filepath.Separator || r == '/' })
}

func isNotDir(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory")
}
