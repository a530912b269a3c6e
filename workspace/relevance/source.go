package relevance

import (
	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/symbols"
	"github.com/kimi-lsp/kimi-lsp/workspace/watch"
)

// Source is what the selection reads the workspace through: the folders'
// files and their text, their symbols, the secret rules, the options.
// Workspace makes the Source of a workspace.Folders; a test may provide
// another.
type Source interface {
	// Options are the context options: the kinds of context, the size
	// cap.
	Options() workspace.Options
	// Folder returns the folder holding the absolute path p and p's
	// folder-relative path; ok is false outside every folder.
	Folder(p string) (f Folder, rel string, ok bool)
	// RelPath is p as prompts show it: workspace-relative.
	RelPath(p string) (string, bool)
	// Resolve confines p to the workspace, symbolic links resolved.
	Resolve(p string) (string, workspace.Folder, error)
	// SecretName reports whether p is a secret file by its name;
	// RefuseSecret records that one was kept out of a prompt.
	SecretName(p string) bool
	RefuseSecret(display string)
	// ReadFile returns a file's text: the open buffer's, else the disk's,
	// with the workspace's checks.
	ReadFile(p string) (workspace.File, error)
}

// Folder is one workspace folder as the selection reads it: its tree, its
// files on disk, its symbol index (and so its Go packages and module).
type Folder interface {
	Abs(rel string) string
	// Tree is the watched tree, nil until the first scan is done.
	Tree() *watch.Tree
	Ignored(rel string) bool
	Stat(rel string) (workspace.FileInfo, bool)
	Dir(rel string) []workspace.FileInfo
	ReadDisk(rel string) (string, error)
	// StartSymbols starts the background build of the index; Symbols is
	// the index, FileSymbols a file's entry (parsed now if missing),
	// BufferSymbols an open buffer's declarations, PackageTable a Go
	// directory's declarations by name.
	StartSymbols()
	Symbols() *symbols.Index
	FileSymbols(rel string) (*symbols.File, int64, bool)
	BufferSymbols(uri workspace.URI, lang, text string) *symbols.File
	PackageTable(dir string) *workspace.PackageTable
}

// Workspace returns the Source of the workspace's folders.
func Workspace(f *workspace.Folders) Source { return folders{f} }

type folders struct{ *workspace.Folders }

func (f folders) Folder(p string) (Folder, string, bool) {
	v, rel, ok := f.ViewOf(p)
	if !ok {
		return nil, "", false
	}
	return v, rel, true
}
