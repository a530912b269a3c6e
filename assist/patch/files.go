package patch

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Files is how the applier reads the workspace. The workspace package
// implements it (open buffers first, then disk); patchtest.Dir is a
// directory-backed implementation for tests.
type Files interface {
	// Resolve maps a path as a model wrote it (relative to the workspace
	// root, or absolute) to a canonical absolute path, symlinks resolved,
	// inside a workspace folder. Paths outside the workspace, escapes with
	// "..", symlinks pointing out and anything inside a .git directory are
	// refused with an error (wrapping ErrOutside where the implementation
	// can). The file need not exist: a path that is about to be created
	// resolves through its nearest existing parent directory.
	Resolve(path string) (string, error)

	// Read returns the current text of the file at a resolved path and its
	// version: the editor buffer's version for an open document, NoVersion
	// for a file read from disk. A missing file is an error wrapping
	// fs.ErrNotExist.
	Read(path string) (text string, version int32, err error)
}

// Lister is implemented by Files that can list the workspace's files. A
// diff header naming a file that does not exist is then resolved by its
// trailing path segments (see Options.Document).
type Lister interface {
	// Paths returns the workspace's files as names Resolve accepts:
	// workspace-relative and slash-separated.
	Paths() []string
}

// Namer is implemented by Files that can name their paths for messages
// sent to the model: workspace-relative, never the absolute paths of the
// user's directories.
type Namer interface {
	// Relative rewrites the absolute paths in text (see RelativeText).
	Relative(text string) string
}

// Root is a workspace folder for RelativeText: its absolute paths (as
// named and with symbolic links resolved) and the prefix its
// workspace-relative paths take ("" with one folder, "name/" with several).
type Root struct {
	Paths  []string
	Prefix string
}

// RelativeText rewrites every absolute path under a root in text as the
// workspace-relative path, a root itself as its prefix (or "."), and
// what is left under the user's home directory as "~/…", so that a message
// (an error of the file system, a refusal) names files the way the model
// names them and shows nothing of the user's directories.
func RelativeText(text string, roots []Root) string {
	type sub struct{ from, to string }
	var subs []sub
	for _, r := range roots {
		name := strings.TrimSuffix(r.Prefix, "/")
		if name == "" {
			name = "."
		}
		for _, p := range r.Paths {
			if p == "" || p == string(filepath.Separator) {
				continue
			}
			p = strings.TrimSuffix(p, string(filepath.Separator))
			subs = append(subs, sub{p + string(filepath.Separator), r.Prefix}, sub{p, name})
		}
	}
	if home, err := os.UserHomeDir(); err == nil && len(home) > 1 {
		home = strings.TrimSuffix(home, string(filepath.Separator))
		subs = append(subs, sub{home + string(filepath.Separator), "~" + string(filepath.Separator)}, sub{home, "~"})
	}
	// Longest first: a folder inside the home directory, or inside
	// another folder, is named by the innermost.
	sort.SliceStable(subs, func(i, j int) bool { return len(subs[i].from) > len(subs[j].from) })
	for _, s := range subs {
		text = replacePath(text, s.from, s.to)
	}
	return text
}

// replacePath replaces from in text where it is a whole path prefix: not
// preceded by a path character, and (for a path without a trailing
// separator) not followed by one that continues a name.
func replacePath(text, from, to string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, from)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(from)
		whole := (i == 0 || !pathByte(text[i-1])) &&
			(strings.HasSuffix(from, string(filepath.Separator)) || end == len(text) || !pathByte(text[end]) && text[end] != filepath.Separator)
		b.WriteString(text[:i])
		if whole {
			b.WriteString(to)
		} else {
			b.WriteString(from)
		}
		text = text[end:]
	}
}

func pathByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// NoVersion is the version Files.Read reports for a file that is not open
// in the editor.
const NoVersion int32 = -1

// Sentinel errors; errors returned by this package wrap one of them.
var (
	// ErrOutside: a path resolves outside the workspace folders, into
	// .git, or through a symlink pointing out.
	ErrOutside = errors.New("path outside the workspace")
	// ErrParse: the diff text cannot be read as a unified diff.
	ErrParse = errors.New("malformed diff")
	// ErrTruncated: the diff looks cut off (its code fence was never
	// closed, or the provider reported the reply as cut off).
	ErrTruncated = errors.New("diff looks truncated")
	// ErrNoMatch: a hunk's context and removed lines were found nowhere.
	ErrNoMatch = errors.New("hunk does not match")
	// ErrAmbiguous: a hunk matches in more than one place.
	ErrAmbiguous = errors.New("hunk matches in several places")
	// ErrOverlap: two hunks claim the same lines.
	ErrOverlap = errors.New("hunks overlap")
	// ErrPlaceholder: the edit adds a comment standing for elided code.
	ErrPlaceholder = errors.New("edit contains a placeholder for elided code")
	// ErrBrokenSyntax: the edited Go file no longer parses.
	ErrBrokenSyntax = errors.New("edit breaks the file's syntax")
	// ErrFileState: a file to create exists, a file to edit or delete is
	// missing, or a deletion does not remove the whole file.
	ErrFileState = errors.New("file state does not fit the edit")
	// ErrStale: the buffer changed where an edit applies since the edit was
	// computed.
	ErrStale = errors.New("buffer changed under the edit")
)
