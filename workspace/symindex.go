package workspace

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"

	"github.com/kimi-lsp/kimi-lsp/workspace/ignore"
	"github.com/kimi-lsp/kimi-lsp/workspace/symbols"
	"github.com/kimi-lsp/kimi-lsp/workspace/watch"
)

// folderSymbols is the symbol index of one folder (symbols.Index), kept
// fresh by the folder's watcher. Nothing is parsed at start-up: a file is
// parsed the first time a context selection needs it (ensure), and the
// first selection also starts a background build of the whole folder
// (start), so that names can be looked up across it. After that, every
// batch of the watcher re-parses the files it changed, one by one, off the
// watcher's goroutine; removed and renamed files leave the index at once.
type folderSymbols struct {
	v    *View
	idx  *symbols.Index
	bufs bufferFiles

	// mu guards started, queue and buildErr; built is closed when the
	// first full build ends.
	mu       sync.Mutex
	started  bool
	queue    map[string]bool // folder-relative paths to re-parse
	buildErr error
	built    chan struct{}
	wake     chan struct{}

	// tmu guards the Go package tables: goDirs lists the .go files of
	// each directory as of the tree's generation goDirGen; tables holds a
	// directory's declarations by name as of the index's version of it.
	tmu      sync.Mutex
	goDirGen uint64
	goDirs   map[string][]string
	tables   map[string]*PackageTable
}

// table returns the declarations of the Go files of dir, parsing those the
// index lacks; it is rebuilt when the tree or the index changed.
func (s *folderSymbols) table(dir string) *PackageTable {
	t := s.v.treeIfReady()
	if t == nil {
		return &PackageTable{}
	}
	s.tmu.Lock()
	defer s.tmu.Unlock()
	gen := t.Generation()
	if s.goDirs == nil || gen != s.goDirGen {
		s.goDirs = map[string][]string{}
		for _, e := range t.Entries() {
			if strings.HasSuffix(e.Path, ".go") {
				d := dirOf(e.Path)
				s.goDirs[d] = append(s.goDirs[d], e.Path)
			}
		}
		s.goDirGen = gen
	}
	if tb := s.tables[dir]; tb != nil && tb.gen == gen && tb.version == s.idx.DirVersion(dir) {
		return tb
	}
	tb := &PackageTable{gen: gen, PkgOf: map[string]string{}, Names: map[string][]symbols.Located{},
		Methods: map[string][]symbols.Located{}, Members: map[string][]symbols.Located{}}
	for _, rel := range s.goDirs[dir] {
		f, ok := s.ensure(rel)
		if !ok || f.Package == "" {
			continue
		}
		tb.Files = append(tb.Files, rel)
		tb.PkgOf[rel] = f.Package
		for _, d := range f.Defs {
			l := symbols.Located{Path: rel, Def: d}
			switch d.Kind {
			case symbols.Method:
				tb.Methods[d.Name] = append(tb.Methods[d.Name], l)
			case symbols.Member:
				tb.Members[d.Name] = append(tb.Members[d.Name], l)
			default:
				tb.Names[d.Name] = append(tb.Names[d.Name], l)
			}
		}
	}
	tb.version = s.idx.DirVersion(dir)
	if s.tables == nil {
		s.tables = map[string]*PackageTable{}
	}
	s.tables[dir] = tb
	return tb
}

func newFolderSymbols(v *View) *folderSymbols {
	return &folderSymbols{v: v, idx: symbols.NewIndex(), bufs: bufferFiles{seed: maphash.MakeSeed(), m: map[URI]bufferFile{}},
		queue: map[string]bool{}, built: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// stampOf returns the version stamp of a watched file.
func stampOf(e watch.Entry) symbols.Stamp {
	return symbols.Stamp{Size: e.Size, Mod: e.ModTime.UnixNano()}
}

// ensure returns the declarations of the folder-relative file rel, parsed
// now if the index has no entry for its current version on disk. ok is
// false for files that may not be read (secret, outside the workspace
// through a link, too large, binary) or in a language without a parser.
func (s *folderSymbols) ensure(rel string) (*symbols.File, bool) {
	t := s.v.treeIfReady()
	if t == nil {
		return nil, false
	}
	e, ok := t.Lookup(rel)
	if !ok {
		s.idx.Remove(rel)
		return nil, false
	}
	lang := LanguageOf(rel)
	if !symbols.Supported(lang) {
		return nil, false
	}
	st := stampOf(e)
	if f, old, ok := s.idx.Get(rel); ok && old == st {
		return f, true
	}
	src, err := s.v.readForIndex(rel)
	if err != nil {
		s.idx.Remove(rel)
		return nil, false
	}
	f := symbols.Parse(lang, src)
	s.idx.Set(rel, st, f)
	return f, true
}

// start begins the background build of the whole folder, once.
func (s *folderSymbols) start() {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return
	}
	s.started = true
	s.mu.Unlock()
	if !s.v.spawn("the symbol index", s.run) {
		s.mu.Lock()
		s.buildErr = context.Canceled // the view is closed: nothing to build
		s.mu.Unlock()
		close(s.built)
	}
}

// run builds the index of every file of the folder, then re-parses what
// the watcher reports changed, until the view closes.
func (s *folderSymbols) run() {
	built := false
	defer func() {
		if !built { // a panic in the build: its waiters get an error
			s.mu.Lock()
			s.buildErr = errIndexFailed
			s.mu.Unlock()
			close(s.built)
		}
	}()
	err := s.buildAll(s.v.stopCtx())
	s.mu.Lock()
	s.buildErr = err
	s.mu.Unlock()
	built = true
	close(s.built)
	for {
		select {
		case <-s.v.stop:
			return
		case <-s.wake:
		}
		s.mu.Lock()
		paths := s.queue
		s.queue = map[string]bool{}
		s.mu.Unlock()
		for p := range paths {
			s.ensure(p)
		}
	}
}

// buildAll parses every indexed file of the folder that has a parser.
func (s *folderSymbols) buildAll(ctx context.Context) error {
	if err := s.v.Ready(ctx); err != nil {
		return err
	}
	t := s.v.treeIfReady()
	if t == nil {
		return nil
	}
	for _, e := range t.Entries() {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.ensure(e.Path)
	}
	return nil
}

// wait blocks until the first full build ended (starting it if needed).
func (s *folderSymbols) wait(ctx context.Context) error {
	s.start()
	select {
	case <-s.built:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.buildErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// changed takes a batch of the watcher: removed files leave the index at
// once; changed ones are re-parsed by the background goroutine if the
// index is being kept, else simply dropped (ensure parses them when
// needed).
func (s *folderSymbols) changed(changes []watch.Change) {
	s.mu.Lock()
	started := s.started
	for _, c := range changes {
		switch {
		case c.Op == watch.Removed:
			s.idx.Remove(c.Path)
			delete(s.queue, c.Path)
		case started:
			s.queue[c.Path] = true
		default:
			s.idx.Remove(c.Path)
		}
	}
	s.mu.Unlock()
	if started {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// readForIndex reads the folder-relative file rel for parsing, as Read
// would (secret and confinement checks on the resolved target, the size
// cap, no binary files) but without filling the content cache: a full
// build reads every file once.
func (v *View) readForIndex(rel string) ([]byte, error) {
	sec := v.fs.secretSet()
	if sec.IsSecret(rel) {
		return nil, fmt.Errorf("%s: %w", rel, ErrSecret)
	}
	real, _, err := v.fs.Resolve(v.abs(rel))
	if err != nil {
		return nil, err
	}
	if sec.IsSecret(v.fs.secretKey(real)) {
		return nil, fmt.Errorf("%s: %w", rel, ErrSecret)
	}
	// Without blocking: a link to a FIFO inside the folder would hang the
	// index build, and every selection waiting for it, forever.
	fh, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > v.maxSz {
		return nil, fmt.Errorf("%s: %w", rel, ErrTooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(fh, v.maxSz+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > v.maxSz {
		return nil, fmt.Errorf("%s: %w", rel, ErrTooLarge)
	}
	if ignore.LooksBinary(data) {
		return nil, fmt.Errorf("%s: %w", rel, ErrBinary)
	}
	return data, nil
}

// errIndexFailed is the build's error after a panic in it (logged).
var errIndexFailed = errors.New("the symbol index failed (see the log)")

// stopCtx returns a context cancelled when the view closes.
func (v *View) stopCtx() context.Context { return v.ctx }

// Symbols returns the folder's symbol index. It is filled lazily: see
// BuildSymbols.
func (v *View) Symbols() *symbols.Index { return v.syms.idx }

// BuildSymbols starts the background build of the folder's symbol index
// (if no context selection has started it yet) and waits for it to end or
// for ctx. The index then follows the watcher's changes.
func (v *View) BuildSymbols(ctx context.Context) error { return v.syms.wait(ctx) }

// bufferFiles caches the declarations parsed from open buffers, whose text
// differs from the disk copy the index holds: one entry per buffer, reused
// while its text stays the same.
type bufferFiles struct {
	mu   sync.Mutex
	seed maphash.Seed
	m    map[URI]bufferFile
}

type bufferFile struct {
	hash uint64
	size int
	file *symbols.File
}

// maxBufferFiles bounds the cache; past it, it is emptied.
const maxBufferFiles = 64

// parse returns the declarations of text, the current text of uri.
func (b *bufferFiles) parse(uri URI, lang, text string) *symbols.File {
	h := maphash.String(b.seed, text)
	b.mu.Lock()
	if e, ok := b.m[uri]; ok && e.hash == h && e.size == len(text) {
		b.mu.Unlock()
		return e.file
	}
	b.mu.Unlock()
	f := symbols.Parse(lang, []byte(text))
	b.mu.Lock()
	if len(b.m) >= maxBufferFiles {
		clear(b.m)
	}
	b.m[uri] = bufferFile{hash: h, size: len(text), file: f}
	b.mu.Unlock()
	return f
}

// dirOf is the directory of the folder-relative path rel ("" for the
// folder itself).
func dirOf(rel string) string {
	d := path.Dir(rel)
	if d == "." {
		return ""
	}
	return d
}
