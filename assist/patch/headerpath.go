package patch

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// A model often names a file relative to another root than the
// workspace's: "--- a/myrepo/cmd/root.go" for the workspace's cmd/root.go,
// or "pkg/x.go" for a workspace opened one level up. A header path that
// does not exist is resolved by whole trailing path segments:
//
//   - a workspace file qualifies when the header's path ends with the
//     file's path, the file's path ends with the header's, or the two share
//     at least their last two segments (directory and name);
//   - the file sharing the most trailing segments wins; when two share the
//     most, the edit is refused and the refusal names both;
//   - when no file qualifies, a diff of one file edits the action's own
//     document (Options.Document) if the base names agree.
//
// Only relative header paths without ".." are resolved this way (an
// absolute path, or one climbing out, names the file it names or is
// refused), and only for files the diff edits in place: a creation,
// deletion or rename keeps its names.

// pathSegments splits a slash or OS separated path into its names, dropping
// empty, "." and ".." segments.
func pathSegments(p string) []string {
	var out []string
	for _, s := range strings.Split(filepath.ToSlash(p), "/") {
		if s != "" && s != "." && s != ".." {
			out = append(out, s)
		}
	}
	return out
}

// commonTail counts the trailing segments a and b share.
func commonTail(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

// byTail resolves a header path that names no existing file. It returns
// the workspace file to edit ("" when there is none), or a problem when
// several files qualify. single is set for a diff of one file.
func (t *tx) byTail(name string, single bool) (string, *ApplyError) {
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.Contains(name, ":") ||
		slices.Contains(strings.Split(filepath.ToSlash(name), "/"), "..") {
		return "", nil // names a place of its own: resolved, or refused, as written
	}
	segs := pathSegments(name)
	if len(segs) == 0 {
		return "", nil
	}
	var best []string
	bestN := 0
	if l, ok := t.set.files.(Lister); ok {
		for _, p := range l.Paths() {
			ps := pathSegments(p)
			n := commonTail(ps, segs)
			if n == 0 || (n < len(ps) && n < len(segs) && n < 2) {
				continue
			}
			switch {
			case n > bestN:
				best, bestN = []string{p}, n
			case n == bestN:
				best = append(best, p)
			}
		}
	}
	switch {
	case len(best) == 1:
		return best[0], nil
	case len(best) > 1:
		sort.Strings(best)
		return "", &ApplyError{Path: name, Err: ErrFileState,
			Detail: "no such file, and " + describeCandidates(best) + "; name the file by its workspace-relative path"}
	}
	if doc := t.set.opts.Document; single && doc != "" && path.Base(filepath.ToSlash(doc)) == segs[len(segs)-1] {
		return doc, nil
	}
	return "", nil
}

func describeCandidates(ps []string) string {
	const most = 4
	s := strings.Join(ps, " and ")
	if len(ps) > most {
		s = fmt.Sprintf("%s and %d more", strings.Join(ps[:most], ", "), len(ps)-most)
	}
	return fmt.Sprintf("the paths of %d workspace files end like its path (%s)", len(ps), s)
}
