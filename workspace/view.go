package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace/ignore"
	"github.com/kimi-lsp/kimi-lsp/workspace/watch"
)

// Errors of ReadFile and View.Read. Each is wrapped with the path.
var (
	// ErrSecret: the file is secret (see IsSecret); its bytes never leave the machine.
	ErrSecret = errors.New("secret file: its contents are never sent to the model")
	// ErrBinary: the file is not text.
	ErrBinary = errors.New("binary file")
	// ErrTooLarge: the file is larger than Options.MaxFileSize.
	ErrTooLarge = errors.New("file larger than the size cap")
)

// maxCachedBytes bounds the file contents a View keeps in memory.
const maxCachedBytes = 32 << 20

// FileInfo describes a file of a disk view.
type FileInfo struct {
	// Path is workspace-relative and slash-separated (see Folders.RelPath).
	Path string
	URI  URI
	Size int64
	// ModTime is the disk copy's modification time.
	ModTime time.Time
	// Hash is the hex SHA-256 of the disk contents, once they were read
	// (empty before).
	Hash string
	// Symlink is set for a symbolic link (read through only when its
	// target is inside the workspace).
	Symlink bool
	// ChangedWhileOpen is set when the disk copy changed while the file
	// was open in the editor and differs from the buffer.
	ChangedWhileOpen bool
}

// View is the disk view of one workspace folder: its files (not ignored)
// with their metadata, kept fresh by a watch.Tree, and their contents, read
// lazily and cached while size and modification time stay the same.
type View struct {
	folder Folder
	fs     *Folders
	log    *slog.Logger
	maxSz  int64

	ready   chan struct{}
	stopped chan struct{}
	stop    chan struct{}
	once    sync.Once
	// ctx is cancelled by close: it stops the first scan if it is still
	// running and the symbol index's build (stopCtx).
	ctx    context.Context
	cancel context.CancelFunc
	// bg counts the view's goroutines besides start (the symbol index's,
	// spawn); close waits for them. bgMu guards closed, so that none is
	// added once close waits.
	bg     sync.WaitGroup
	bgMu   sync.Mutex
	closed bool
	// pollWanted: the editor will not watch after all (fallBackToPolling),
	// possibly said before the first scan ended.
	pollWanted atomic.Bool

	ign *ignore.Matcher

	// Set before ready is closed, read after.
	tree    *watch.Tree
	initErr error

	// syms is the folder's symbol index (select_index.go).
	syms *folderSymbols

	mu       sync.Mutex
	cache    map[string]*content // folder-relative path → contents
	cached   int64               // bytes in cache
	cacheCap int64               // maxCachedBytes; lowered by tests
	useSeq   uint64
	conflict map[string]bool // folder-relative paths changed on disk while open
}

type content struct {
	size    int64
	modTime time.Time
	text    string
	hash    string
	binary  bool
	lastUse uint64
}

func newView(folder Folder, f *Folders, opts Options) *View {
	v := &View{
		folder:   folder,
		fs:       f,
		log:      f.log.With("folder", folder.Path),
		maxSz:    opts.MaxFileSize,
		ready:    make(chan struct{}),
		stopped:  make(chan struct{}),
		stop:     make(chan struct{}),
		cache:    make(map[string]*content),
		cacheCap: maxCachedBytes,
		conflict: make(map[string]bool),
	}
	v.ign = ignore.New(folder.Path, f.ignoreOptions(opts))
	v.syms = newFolderSymbols(v)
	v.ctx, v.cancel = context.WithCancel(context.Background())
	go v.start(v.ctx, v.ign)
	return v
}

// start runs the first scan in the background and keeps the tree until
// close. Closing the view cancels ctx, which stops the scan promptly. A
// panic is logged with its stack and ends the view's watching alone.
func (v *View) start(ctx context.Context, ign *ignore.Matcher) {
	defer close(v.stopped)
	defer v.recoverIn("the folder's scan")
	tree, err := watch.New(ctx, v.folder.Path, watch.Options{
		Ignore:     ign,
		Logger:     v.log,
		OnChange:   v.onChange,
		OnDegraded: v.onDegraded,
	})
	v.tree, v.initErr = tree, err
	close(v.ready)
	if err != nil {
		if ctx.Err() == nil {
			v.log.Error("cannot scan workspace folder", "err", err)
		}
		return
	}
	if v.pollWanted.Load() {
		tree.FallBackToPolling()
	}
	<-v.stop
	tree.Close()
}

func (v *View) onDegraded(err error) bool {
	if h := v.fs.hooks.WatchDegraded; h != nil {
		return h(v.folder, err)
	}
	return false
}

// Ignored reports whether the folder-relative path rel is left out of the
// view by the ignore rules (.gitignore, defaults, the user's excludes).
func (v *View) Ignored(rel string) bool {
	return v.ign.Ignored(rel, false)
}

// Folder returns the view's folder.
func (v *View) Folder() Folder { return v.folder }

// Ready waits for the first scan.
func (v *View) Ready(ctx context.Context) error {
	select {
	case <-v.ready:
		return v.initErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (v *View) treeIfReady() *watch.Tree {
	select {
	case <-v.ready:
		return v.tree
	default:
		return nil
	}
}

// close stops the view (a first scan in progress stops within a directory)
// and waits for its watcher to be released.
func (v *View) close() {
	v.once.Do(func() {
		v.bgMu.Lock()
		v.closed = true
		v.bgMu.Unlock()
		v.cancel()
		close(v.stop)
	})
	<-v.stopped
	v.bg.Wait()
}

// spawn runs fn on a goroutine of the view's, which close waits for,
// under recover (what names it in the log). After close it runs nothing
// and returns false.
func (v *View) spawn(what string, fn func()) bool {
	v.bgMu.Lock()
	defer v.bgMu.Unlock()
	if v.closed {
		return false
	}
	v.bg.Go(func() {
		defer v.recoverIn(what)
		fn()
	})
	return true
}

// recoverIn logs a panic of the view's goroutine doing what, with its
// stack, and ends that goroutine alone. It must be deferred directly.
func (v *View) recoverIn(what string) {
	if r := recover(); r != nil {
		v.log.Error("panic in "+what, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	}
}

// fallBackToPolling switches the view's watcher from the editor's file
// events to periodic rescans.
func (v *View) fallBackToPolling() {
	v.pollWanted.Store(true)
	if t := v.treeIfReady(); t != nil {
		t.FallBackToPolling()
	}
}

func (v *View) notify(p string) {
	if t := v.treeIfReady(); t != nil {
		t.Notify(p)
	}
}

// Stats returns the watcher's counters (zero before the first scan ends).
func (v *View) Stats() watch.Stats {
	if t := v.treeIfReady(); t != nil {
		return t.Stats()
	}
	return watch.Stats{}
}

// Files returns the folder's files, sorted by path; empty until the first
// scan is done.
func (v *View) Files() []FileInfo {
	t := v.treeIfReady()
	if t == nil {
		return nil
	}
	ents := t.Entries()
	out := make([]FileInfo, len(ents))
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, e := range ents {
		out[i] = v.infoLocked(e)
	}
	return out
}

// Stat returns the file at the folder-relative, slash-separated path rel.
func (v *View) Stat(rel string) (FileInfo, bool) {
	t := v.treeIfReady()
	if t == nil {
		return FileInfo{}, false
	}
	e, ok := t.Lookup(rel)
	if !ok {
		return FileInfo{}, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.infoLocked(e), true
}

// Dir returns the files directly in the folder-relative directory rel.
func (v *View) Dir(rel string) []FileInfo {
	t := v.treeIfReady()
	if t == nil {
		return nil
	}
	ents := t.Dir(rel)
	out := make([]FileInfo, len(ents))
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, e := range ents {
		out[i] = v.infoLocked(e)
	}
	return out
}

// infoLocked builds a FileInfo. Precondition: v.mu is held.
func (v *View) infoLocked(e watch.Entry) FileInfo {
	fi := FileInfo{
		Path:             v.fs.display(v, e.Path),
		URI:              FileURI(v.abs(e.Path)),
		Size:             e.Size,
		ModTime:          e.ModTime,
		Symlink:          e.Mode&fs.ModeSymlink != 0,
		ChangedWhileOpen: v.conflict[e.Path],
	}
	if c, ok := v.cache[e.Path]; ok && c.size == e.Size && c.modTime.Equal(e.ModTime) {
		fi.Hash = c.hash
	}
	return fi
}

func (v *View) abs(rel string) string {
	return filepath.Join(v.folder.Path, filepath.FromSlash(rel))
}

// Read returns the disk contents of the folder-relative path rel, read once
// and cached while its size and modification time stay the same. It refuses
// secret files (ErrSecret), files over the size cap (ErrTooLarge, without
// reading them), binary files (ErrBinary) and symbolic links leading outside
// the workspace (ErrOutsideWorkspace). Open buffers are not consulted: see
// Folders.ReadFile.
func (v *View) Read(rel string) (string, error) {
	rel = strings.TrimPrefix(path.Clean("/"+filepath.ToSlash(rel)), "/")
	if v.fs.secretSet().IsSecret(rel) || v.fs.IsSecret(v.abs(rel)) {
		v.fs.secretSet().Refused(v.fs.display(v, rel))
		return "", fmt.Errorf("%s: %w", rel, ErrSecret)
	}
	return v.readDisk(rel)
}

func (v *View) readDisk(rel string) (string, error) {
	abs := v.abs(rel)
	real, _, err := v.fs.Resolve(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("read %s: not a regular file", rel)
	}
	if fi.Size() > v.maxSz {
		return "", fmt.Errorf("%s (%d bytes, cap %d): %w", rel, fi.Size(), v.maxSz, ErrTooLarge)
	}
	v.mu.Lock()
	if c, ok := v.cache[rel]; ok && c.size == fi.Size() && c.modTime.Equal(fi.ModTime()) {
		v.useSeq++
		c.lastUse = v.useSeq
		v.mu.Unlock()
		return c.result(rel)
	}
	v.mu.Unlock()

	// Without blocking, and checked again on the open file: the name may
	// have become a FIFO since the Stat.
	fh, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", rel, err)
	}
	defer fh.Close()
	if ofi, err := fh.Stat(); err != nil || !ofi.Mode().IsRegular() {
		return "", fmt.Errorf("read %s: not a regular file", rel)
	}
	data, err := io.ReadAll(io.LimitReader(fh, v.maxSz+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", rel, err)
	}
	if int64(len(data)) > v.maxSz {
		return "", fmt.Errorf("%s (grew past cap %d): %w", rel, v.maxSz, ErrTooLarge)
	}
	sum := sha256.Sum256(data)
	c := &content{size: fi.Size(), modTime: fi.ModTime(), hash: hex.EncodeToString(sum[:]), binary: ignore.LooksBinary(data)}
	if !c.binary {
		c.text = string(data)
	}
	v.mu.Lock()
	if old, ok := v.cache[rel]; ok {
		v.cached -= int64(len(old.text))
	}
	v.useSeq++
	c.lastUse = v.useSeq
	v.cache[rel] = c
	v.cached += int64(len(c.text))
	v.evictLocked()
	v.mu.Unlock()
	return c.result(rel)
}

func (c *content) result(rel string) (string, error) {
	if c.binary {
		return "", fmt.Errorf("%s: %w", rel, ErrBinary)
	}
	return c.text, nil
}

// evictLocked drops the least recently used contents while the cache is
// over its cap (maxCachedBytes). Precondition: v.mu is held.
func (v *View) evictLocked() {
	for v.cached > v.cacheCap && len(v.cache) > 1 {
		var oldest string
		var min uint64
		for p, c := range v.cache {
			if oldest == "" || c.lastUse < min {
				oldest, min = p, c.lastUse
			}
		}
		v.cached -= int64(len(v.cache[oldest].text))
		delete(v.cache, oldest)
	}
}

// onChange runs on the tree's goroutine after each batch: it drops stale
// contents and notes open files whose disk copy now differs from the buffer.
func (v *View) onChange(changes []watch.Change) {
	v.syms.changed(changes)
	v.mu.Lock()
	for _, c := range changes {
		if old, ok := v.cache[c.Path]; ok {
			v.cached -= int64(len(old.text))
			delete(v.cache, c.Path)
		}
	}
	v.mu.Unlock()
	if h := v.fs.hooks.DiskChanged; h != nil && len(changes) > 0 {
		out := make([]DiskChange, len(changes))
		for i, c := range changes {
			out[i] = DiskChange{URI: FileURI(v.abs(c.Path)), Op: c.Op}
		}
		h(out)
	}
	b := v.fs.hooks.Buffers
	if b == nil {
		return
	}
	for _, c := range changes {
		uri := FileURI(v.abs(c.Path))
		text, open := b.Buffer(uri)
		if !open {
			continue
		}
		var differs bool
		if c.Op == watch.Removed {
			differs = true
		} else {
			disk, err := v.readDisk(c.Path)
			// Unreadable (too large, binary, gone again): we cannot tell it
			// is a save, so it is a change.
			differs = err != nil || disk != text
		}
		v.mu.Lock()
		was := v.conflict[c.Path]
		if differs {
			v.conflict[c.Path] = true
		} else {
			delete(v.conflict, c.Path)
		}
		v.mu.Unlock()
		if differs && !was {
			// Debug, not Info: a git checkout or a formatter changes
			// open files on disk as a matter of course, and the editor
			// reloads them (a didChange follows); an INFO line after
			// every checkout told the user nothing (issue 33 item 20).
			v.log.Debug("file changed on disk while open in the editor; keeping the editor's text, not merging",
				"path", c.Path, "change", c.Op.String())
			if h := v.fs.hooks.ChangedOnDisk; h != nil {
				h(uri)
			}
		}
	}
}

// File is the result of ReadFile: the text the model may see.
type File struct {
	// Path is workspace-relative and slash-separated.
	Path string
	URI  URI
	// Language is the LSP language id guessed from the name ("go", "python"…).
	Language string
	Text     string
	// Open is set when Text came from the editor's buffer.
	Open bool
}

// ReadFile is the read_file tool's access to the workspace: target is a file
// URI, an absolute path or a workspace-relative path (as Resolve takes). An
// open buffer wins over the disk copy. Ignored files (node_modules/…) may be
// read: the model may need a dependency's declarations. It refuses, with
// wrapped errors:
// paths outside the workspace (ErrOutsideWorkspace), secret files even when
// open (ErrSecret; the user is told once through Hooks.SecretNotice), files
// over the size cap (ErrTooLarge) and binary files (ErrBinary).
func (f *Folders) ReadFile(target string) (File, error) {
	lexical, err := f.lexical(target)
	if err != nil {
		return File{}, err
	}
	real, folder, err := f.Resolve(lexical)
	if err != nil {
		return File{}, err
	}
	// The name the user sees is the lexical one; the real one is checked too.
	disp, ok := f.RelPath(lexical)
	if !ok {
		disp, _ = f.RelPath(real)
	}
	sec := f.secretSet()
	if sec.IsSecret(f.secretKey(lexical)) || sec.IsSecret(f.secretKey(real)) {
		sec.Refused(disp)
		return File{}, fmt.Errorf("%s: %w", disp, ErrSecret)
	}
	out := File{Path: disp, URI: FileURI(lexical), Language: LanguageOf(lexical)}
	if b := f.hooks.Buffers; b != nil {
		text, open := b.Buffer(out.URI)
		if !open && real != lexical {
			text, open = b.Buffer(FileURI(real))
		}
		if open {
			if max := f.options().MaxFileSize; int64(len(text)) > max {
				return File{}, fmt.Errorf("%s (%d bytes, cap %d): %w", disp, len(text), max, ErrTooLarge)
			}
			out.Text, out.Open = text, true
			return out, nil
		}
	}
	var v *View
	for _, cand := range f.Views() {
		if cand.folder == folder {
			v = cand
		}
	}
	if v == nil {
		return File{}, fmt.Errorf("%s: %w", disp, ErrOutsideWorkspace)
	}
	rel, _ := within(folder.Real, real)
	text, err := v.readDisk(rel)
	if err != nil {
		return File{}, err
	}
	out.Text = text
	return out, nil
}
