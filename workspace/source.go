package workspace

import (
	"github.com/kimi-lsp/kimi-lsp/workspace/symbols"
	"github.com/kimi-lsp/kimi-lsp/workspace/watch"
)

// This file is what the context selection (workspace/relevance) reads the
// workspace through: *Folders is its relevance.Source and *View its
// relevance.Folder. They answer from the folders' disk views, symbol
// indexes and secret rules; they choose nothing.

// ViewOf returns the view of the innermost folder containing the absolute
// path p and p's slash-separated path relative to it.
func (f *Folders) ViewOf(p string) (*View, string, bool) { return f.owner(p) }

// SecretName reports whether path is a secret file by its own name (the
// folder-relative name inside a folder), under the current secret globs;
// the target of its links is not looked at (see IsSecret).
func (f *Folders) SecretName(path string) bool { return f.secretSet().IsSecret(f.secretKey(path)) }

// RefuseSecret records that the secret file shown as display was kept out
// of a prompt (logged once per file).
func (f *Folders) RefuseSecret(display string) { f.secretSet().Refused(display) }

// Abs returns the absolute path of the folder-relative path rel.
func (v *View) Abs(rel string) string { return v.abs(rel) }

// Tree returns the folder's watched tree, nil until its first scan is done.
func (v *View) Tree() *watch.Tree { return v.treeIfReady() }

// ReadDisk reads the folder-relative file rel from disk, with the size,
// binary and confinement checks of Read but not its secret check.
func (v *View) ReadDisk(rel string) (string, error) { return v.readDisk(rel) }

// StartSymbols starts the background build of the folder's symbol index,
// once, without waiting for it (see BuildSymbols).
func (v *View) StartSymbols() { v.syms.start() }

// FileSymbols returns the declarations of the folder-relative file rel and
// the size of the text they were parsed from, parsed now if the index has
// no entry for its current version on disk; ok is false for files that may
// not be read or in a language without a parser.
func (v *View) FileSymbols(rel string) (f *symbols.File, size int64, ok bool) {
	f, ok = v.syms.ensure(rel)
	if !ok {
		return nil, 0, false
	}
	_, st, _ := v.syms.idx.Get(rel)
	return f, st.Size, true
}

// BufferSymbols returns the declarations of text, the current text of the
// open buffer uri (parsed once per text).
func (v *View) BufferSymbols(uri URI, lang, text string) *symbols.File {
	return v.syms.bufs.parse(uri, lang, text)
}

// PackageTable is what the Go files of one directory declare, by name, as
// the folder's index holds them (from disk).
type PackageTable struct {
	gen, version uint64
	// Files are the directory's parsed Go files, folder-relative, sorted.
	Files []string
	// PkgOf maps a file to its package name.
	PkgOf map[string]string
	// Names, Methods and Members list the declarations by name: functions,
	// types, variables and constants; methods; struct fields and interface
	// methods.
	Names, Methods, Members map[string][]symbols.Located
}

// PackageTable returns the declarations of the Go files of the
// folder-relative directory dir, parsing those the index lacks; it is
// rebuilt when the tree or the index changed.
func (v *View) PackageTable(dir string) *PackageTable { return v.syms.table(dir) }
