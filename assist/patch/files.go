package patch

import "errors"

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
