package symbols

import (
	"path"
	"slices"
	"strings"
	"sync"
)

// Stamp identifies the version of a file an entry was parsed from: its
// size and modification time on disk (what the workspace watcher tracks),
// or a hash of an editor buffer's text. Any change makes the entry stale.
type Stamp struct {
	Size int64
	// Mod is the modification time in Unix nanoseconds, or a hash of the
	// text.
	Mod int64
}

// Located is a declaration and the file declaring it.
type Located struct {
	// Path is the file's folder-relative, slash-separated path.
	Path string
	Def
}

// Index holds the declarations of the files of one folder, by file and by
// name. It is safe for concurrent use; every method costs time in
// proportion to one file's declarations, so it is kept fresh file by file.
type Index struct {
	// mu guards files, names and dirs.
	mu    sync.RWMutex
	files map[string]*entry
	// names maps a declared name (members excluded) to the files that
	// declare it, sorted — files of languages resolved by name only: Go
	// resolves by package (Dir, Get), and its names would take most of the
	// memory; dirs maps a directory ("" for the root) to its indexed files,
	// sorted.
	names map[string][]string
	dirs  map[string][]string
	defs  int
	// version counts the changes of each directory's files.
	version map[string]uint64
}

type entry struct {
	stamp Stamp
	file  *File
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{files: make(map[string]*entry), names: make(map[string][]string), dirs: make(map[string][]string),
		version: make(map[string]uint64)}
}

// Set records f, parsed from the version stamp of the file at the
// folder-relative path p, replacing what was recorded for p.
func (x *Index) Set(p string, stamp Stamp, f *File) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(p)
	x.files[p] = &entry{stamp: stamp, file: f}
	x.defs += len(f.Defs)
	for _, n := range topNames(f) {
		x.names[n] = insertSorted(x.names[n], p)
	}
	d := dirOf(p)
	x.dirs[d] = insertSorted(x.dirs[d], p)
	x.version[d]++
}

// Remove forgets the file at p (deleted, renamed away, now ignored).
func (x *Index) Remove(p string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(p)
}

// removeLocked forgets p. Precondition: x.mu is held for writing.
func (x *Index) removeLocked(p string) {
	e, ok := x.files[p]
	if !ok {
		return
	}
	delete(x.files, p)
	x.defs -= len(e.file.Defs)
	for _, n := range topNames(e.file) {
		if l := removeSorted(x.names[n], p); len(l) == 0 {
			delete(x.names, n)
		} else {
			x.names[n] = l
		}
	}
	d := dirOf(p)
	x.version[d]++
	if l := removeSorted(x.dirs[d], p); len(l) == 0 {
		delete(x.dirs, d)
	} else {
		x.dirs[d] = l
	}
}

// RemoveUnder forgets every file at or below the directory dir.
func (x *Index) RemoveUnder(dir string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for p := range x.files {
		if p == dir || dir == "" || strings.HasPrefix(p, dir+"/") {
			x.removeLocked(p)
		}
	}
}

// Get returns the entry for p and the stamp it was parsed from.
func (x *Index) Get(p string) (*File, Stamp, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	e, ok := x.files[p]
	if !ok {
		return nil, Stamp{}, false
	}
	return e.file, e.stamp, true
}

// Lookup returns the declarations named name (members excluded) in every
// indexed file of a language resolved by name (all but Go, whose names are
// found through their package's directory: Dir and Get), by path then
// source order.
func (x *Index) Lookup(name string) []Located {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []Located
	for _, p := range x.names[name] {
		for _, d := range x.files[p].file.Defs {
			if d.Name == name && d.Kind != Member {
				out = append(out, Located{Path: p, Def: d})
			}
		}
	}
	return out
}

// Dir returns the indexed files directly in dir ("" for the root), sorted.
func (x *Index) Dir(dir string) []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return slices.Clone(x.dirs[dir])
}

// DirVersion returns a number that changes whenever a file of dir is
// recorded or forgotten, for caches of what a directory declares.
func (x *Index) DirVersion(dir string) uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.version[dir]
}

// Len returns the number of indexed files and declarations.
func (x *Index) Len() (files, defs int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.files), x.defs
}

// topNames returns the distinct names f declares, members excluded, for
// the by-name table (none for Go, see Index.names).
func topNames(f *File) []string {
	if f.Lang == "go" {
		return nil
	}
	out := make([]string, 0, len(f.Defs))
	for _, d := range f.Defs {
		if d.Kind != Member {
			out = append(out, d.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func dirOf(p string) string {
	d := path.Dir(p)
	if d == "." {
		return ""
	}
	return d
}

func insertSorted(l []string, s string) []string {
	i, found := slices.BinarySearch(l, s)
	if found {
		return l
	}
	return slices.Insert(l, i, s)
}

func removeSorted(l []string, s string) []string {
	i, found := slices.BinarySearch(l, s)
	if !found {
		return l
	}
	return slices.Delete(l, i, i+1)
}
