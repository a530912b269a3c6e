// Package watch keeps an index of the files of one workspace folder (path,
// size, modification time, type; never contents) fresh with fsnotify.
//
// fsnotify is not recursive: a Tree adds a watch for every directory it
// discovers, before reading it (so a file created meanwhile is not missed),
// and drops the watches of directories that go away or move. Ignored
// directories (package ignore) are neither indexed nor watched.
//
// Events are not applied one by one. They mark paths dirty; a batch is
// applied once the folder has been quiet for Options.Debounce (at most
// Options.MaxDelay after the first event). A batch of more than
// Options.RescanThreshold paths, a kernel queue overflow, or a change of an
// ignore file becomes one full rescan: a `git checkout` of thousands of files
// costs one walk, not thousands of updates.
//
// When the kernel refuses a watch for lack of room (ENOSPC: the inotify
// watch limit, fs.inotify.max_user_watches), the Tree closes its watcher,
// logs one warning and calls Options.OnDegraded, whose answer chooses the
// fallback: the client watches (ModeClient; the caller registers
// workspace/didChangeWatchedFiles and feeds the events to Notify) or the Tree
// rescans every Options.PollInterval (ModePoll).
//
// Symbolic links are indexed as links and never followed, so a link loop
// cannot hang a walk. Every walk stops promptly when it is cancelled: New's
// walk by its context, later rescans by Close. Close stops the goroutine and
// releases the inotify descriptor.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/kimi-lsp/kimi-lsp/workspace/ignore"
)

// Entry describes one indexed file (regular file or symbolic link).
type Entry struct {
	// Path is slash-separated and relative to the Tree's root.
	Path    string
	Size    int64
	ModTime time.Time
	// Mode holds the type bits: 0 for a regular file, fs.ModeSymlink for a link.
	Mode fs.FileMode
}

// Op says what happened to a path.
type Op uint8

const (
	// Created: the file is new in the index.
	Created Op = iota + 1
	// Modified: its size, modification time or type changed.
	Modified
	// Removed: it left the index (deleted, renamed away, now ignored or a directory).
	Removed
)

// String returns "created", "modified" or "removed".
func (o Op) String() string {
	switch o {
	case Created:
		return "created"
	case Modified:
		return "modified"
	case Removed:
		return "removed"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Change is one file's change in an applied batch.
type Change struct {
	Path string // slash-separated, relative to the root
	Op   Op
}

// Mode says how a Tree learns about changes.
type Mode int32

const (
	// ModeNative: fsnotify watches every indexed directory.
	ModeNative Mode = iota
	// ModeClient: the editor watches and reports through Notify.
	ModeClient
	// ModePoll: the Tree rescans every PollInterval.
	ModePoll
)

// String returns "native", "client" or "poll".
func (m Mode) String() string {
	switch m {
	case ModeClient:
		return "client"
	case ModePoll:
		return "poll"
	}
	return "native"
}

// Options configures a Tree. The zero value is usable.
type Options struct {
	// Ignore decides what is left out; nil means ignore.New(root, ignore.Options{}).
	Ignore *ignore.Matcher
	// Debounce is the quiet time after the last event before a batch is
	// applied. Default 50ms.
	Debounce time.Duration
	// MaxDelay bounds how long a batch waits while events keep coming.
	// Default 500ms.
	MaxDelay time.Duration
	// RescanThreshold is the number of dirty paths above which a batch is
	// applied as one full rescan. Default 256.
	RescanThreshold int
	// PollInterval is the period of rescans in ModePoll. Default 10s.
	PollInterval time.Duration
	// MaxFiles caps the index; files past it are left out with one warning.
	// Default 200,000.
	MaxFiles int
	// OnChange, if set, is called from the Tree's goroutine after each
	// applied batch that changed the index, with the changes sorted by path.
	// It must not call Close.
	OnChange func([]Change)
	// OnDegraded, if set, is called once when the kernel refuses a watch for
	// lack of room (possibly during New); it returns true if the caller will
	// feed the editor's file events to Notify (ModeClient), false for
	// periodic rescans (ModePoll). It is called from inside a walk: it must
	// return at once (ask the editor from another goroutine, and call
	// FallBackToPolling if that fails) and must not call Close.
	OnDegraded func(err error) (clientWatches bool)
	// Logger receives warnings and debug logs; nil means slog.Default().
	Logger *slog.Logger

	// startMode forces a mode from the start (tests and benchmarks).
	startMode Mode
	// onDir, if set, is called by a walk before it reads each directory
	// (tests: cancel or block at a known point).
	onDir func(ctx context.Context, rel string)
}

// ErrClosed is returned by methods of a closed Tree.
var ErrClosed = errors.New("watch: tree closed")

// Tree is the index of one folder, kept fresh. It is safe for concurrent use.
type Tree struct {
	root string
	opts Options
	log  *slog.Logger
	ign  *ignore.Matcher

	// Owned by the loop goroutine (and by New before it starts).
	w         *fsnotify.Watcher
	truncated bool
	// orphans are directories that moved or went away during the current
	// batch: their watches are gone, their files are still indexed.
	orphans map[string]struct{}

	notifyCh chan struct{} // a pending Notify or Rescan
	done     chan struct{}
	stopped  chan struct{}
	close    sync.Once
	// cancel stops a walk in progress (the loop's context); called by Close.
	cancel context.CancelFunc

	mu        sync.RWMutex
	files     map[string]Entry
	dirs      map[string]struct{} // indexed directories ("" is the root)
	mode      Mode
	gen       uint64
	batches   int
	rescans   int
	overflows int
	pending   []string // paths from Notify, absolute
	rescanReq bool
}

// New indexes the folder at root (an absolute directory path) and starts
// watching it. The initial walk runs before New returns; if ctx is
// cancelled meanwhile, the walk stops within a directory or a few hundred
// entries, and New releases what it took and returns ctx's error.
func New(ctx context.Context, root string, opts Options) (*Tree, error) {
	root = filepath.Clean(root)
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("watch %s: not a directory", root)
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 50 * time.Millisecond
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = 500 * time.Millisecond
	}
	if opts.MaxDelay < opts.Debounce {
		opts.MaxDelay = opts.Debounce
	}
	if opts.RescanThreshold <= 0 {
		opts.RescanThreshold = 256
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 10 * time.Second
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = 200_000
	}
	t := &Tree{
		root:     root,
		opts:     opts,
		log:      opts.Logger,
		ign:      opts.Ignore,
		notifyCh: make(chan struct{}, 1),
		done:     make(chan struct{}),
		stopped:  make(chan struct{}),
		files:    make(map[string]Entry),
		dirs:     make(map[string]struct{}),
		mode:     opts.startMode,
		orphans:  make(map[string]struct{}),
	}
	if t.log == nil {
		t.log = slog.Default()
	}
	t.log = t.log.With("folder", root)
	if t.ign == nil {
		t.ign = ignore.New(root, ignore.Options{})
	}
	if t.mode == ModeNative {
		w, err := fsnotify.NewBufferedWatcher(4096)
		if err != nil {
			// No inotify instance left (fs.inotify.max_user_instances) is
			// the same situation as no watch left.
			t.degrade(err)
		} else {
			t.w = w
		}
	}
	files, dirs, err := t.walk(ctx, "", nil, opts.MaxFiles)
	if err != nil {
		if t.w != nil {
			t.w.Close()
		}
		t.log.Debug("scan stopped", "files", len(files), "dirs", len(dirs), "err", err)
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	t.files, t.dirs = files, dirs
	t.watchInfoDir()
	lctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	go t.loop(lctx)
	return t, nil
}

// Root returns the folder's absolute path.
func (t *Tree) Root() string { return t.root }

// Mode returns how the Tree currently learns about changes.
func (t *Tree) Mode() Mode {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.mode
}

// Generation counts applied batches that changed the index; it starts at 0.
func (t *Tree) Generation() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.gen
}

// Stats are counters of a Tree's work, for logs, `kimi-lsp doctor` and tests.
type Stats struct {
	Files, Dirs int
	Mode        Mode
	// Batches counts applied batches (changed or not), Rescans the full
	// rescans among them, Overflows the kernel queue overflows seen.
	Batches, Rescans, Overflows int
}

// Stats returns the Tree's counters.
func (t *Tree) Stats() Stats {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return Stats{Files: len(t.files), Dirs: len(t.dirs), Mode: t.mode,
		Batches: t.batches, Rescans: t.rescans, Overflows: t.overflows}
}

// Lookup returns the entry of the file at the slash-separated path rel.
func (t *Tree) Lookup(rel string) (Entry, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	e, ok := t.files[rel]
	return e, ok
}

// IsDir reports whether rel is an indexed (so watched, not ignored) directory;
// "" is the root.
func (t *Tree) IsDir(rel string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	_, ok := t.dirs[rel]
	return ok
}

// Entries returns every indexed file, sorted by path.
func (t *Tree) Entries() []Entry {
	t.mu.RLock()
	out := make([]Entry, 0, len(t.files))
	for _, e := range t.files {
		out = append(out, e)
	}
	t.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Dir returns the files directly in the directory rel ("" for the root),
// sorted by path.
func (t *Tree) Dir(rel string) []Entry {
	prefix := ""
	if rel != "" {
		prefix = rel + "/"
	}
	t.mu.RLock()
	var out []Entry
	for p, e := range t.files {
		if strings.HasPrefix(p, prefix) && !strings.Contains(p[len(prefix):], "/") {
			out = append(out, e)
		}
	}
	t.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Len returns the number of indexed files.
func (t *Tree) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.files)
}

// Dirs returns the number of indexed directories, the root included (in
// ModeNative, the number of watches).
func (t *Tree) Dirs() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.dirs)
}

// Notify reports paths (absolute, or relative to the root) that the editor
// says changed: the client-side watching of ModeClient. It never blocks;
// the paths are applied with the next batch. Paths outside the root are
// dropped.
func (t *Tree) Notify(paths ...string) {
	t.mu.Lock()
	t.pending = append(t.pending, paths...)
	t.mu.Unlock()
	t.kick()
}

// FallBackToPolling switches a Tree that relies on the editor's file events
// (ModeClient) to periodic rescans (ModePoll): the caller learned that the
// editor will not report changes after all (its registration failed). It
// does nothing in the other modes.
func (t *Tree) FallBackToPolling() {
	t.mu.Lock()
	client := t.mode == ModeClient
	if client {
		t.mode = ModePoll
	}
	t.mu.Unlock()
	if client {
		t.log.Warn("the editor does not watch the folder's files; rescanning every " + t.opts.PollInterval.String() + " instead")
		t.Rescan()
	}
}

// Rescan asks for a full rescan with the next batch.
func (t *Tree) Rescan() {
	t.mu.Lock()
	t.rescanReq = true
	t.mu.Unlock()
	t.kick()
}

func (t *Tree) kick() {
	select {
	case t.notifyCh <- struct{}{}:
	default:
	}
}

// Close stops watching and waits for the Tree's goroutine to end; a rescan
// in progress stops within a directory or a few hundred entries. It is safe
// to call more than once.
func (t *Tree) Close() error {
	t.close.Do(func() {
		close(t.done)
		t.cancel()
	})
	<-t.stopped
	return nil
}

// guard runs one of the owner's callbacks (what names it): a panic in it is
// logged with its stack and fails that call alone; the watching goes on.
func (t *Tree) guard(what string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			t.log.Error("panic in a watcher callback", "callback", what, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	fn()
}

// loop is the Tree's only goroutine: it collects events and applies batches.
// ctx is cancelled by Close.
func (t *Tree) loop(ctx context.Context) {
	defer close(t.stopped)
	defer func() {
		// A panic of our own ends this folder's watching alone.
		if r := recover(); r != nil {
			t.log.Error("panic in the folder's watcher; it stopped", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	defer func() {
		if t.w != nil {
			t.w.Close()
			t.w = nil
		}
	}()

	b := &batch{dirty: make(map[string]struct{}), timer: time.NewTimer(time.Hour),
		debounce: t.opts.Debounce, maxDelay: t.opts.MaxDelay}
	b.timer.Stop()
	var poll <-chan time.Time
	var ticker *time.Ticker
	setPoll := func() {
		if ticker == nil && t.Mode() == ModePoll {
			ticker = time.NewTicker(t.opts.PollInterval)
			poll = ticker.C
		}
	}
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	setPoll()

	for {
		var events <-chan fsnotify.Event
		var errs <-chan error
		if t.w != nil {
			events, errs = t.w.Events, t.w.Errors
		}
		select {
		case <-t.done:
			b.timer.Stop()
			return
		case ev, ok := <-events:
			if !ok {
				t.w = nil
				continue
			}
			t.onEvent(ev, b.dirty)
			b.arm()
		case err, ok := <-errs:
			if !ok {
				t.w = nil
				continue
			}
			t.onError(err, b)
		case <-t.notifyCh:
			t.takeNotified(b)
		case <-poll:
			b.fullRescan = true
			b.arm()
		case <-b.timer.C:
			changes, ok := t.applyBatch(ctx, b)
			if !ok {
				return // closed mid-walk: the index is dropped with the Tree
			}
			setPoll()
			t.announce(changes)
		}
	}
}

// batch is what loop collects between two applied batches: the paths made
// dirty (relative), whether the whole tree is rescanned instead, and the
// debounce timer that ends it.
type batch struct {
	dirty      map[string]struct{}
	fullRescan bool
	timer      *time.Timer
	armed      bool      // the timer runs for this batch
	first      time.Time // when the batch's first change arrived
	// debounce and maxDelay are the Tree's Options.Debounce and MaxDelay.
	debounce, maxDelay time.Duration
}

// arm (re)starts the batch's timer for a change that arrived now: the
// batch ends debounce after its last change, and at most maxDelay after
// its first.
func (b *batch) arm() {
	now := time.Now()
	if !b.armed {
		b.first = now
		b.armed = true
		b.timer.Reset(b.debounce)
		return
	}
	wait := b.debounce
	if left := b.maxDelay - now.Sub(b.first); left < wait {
		wait = max(left, 0)
	}
	b.timer.Reset(wait)
}

// onError handles an error of the watcher: a kernel queue overflow makes
// the batch a full rescan (counted); another is logged.
func (t *Tree) onError(err error, b *batch) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		t.log.Debug("fsnotify queue overflow; rescanning")
		t.mu.Lock()
		t.overflows++
		t.mu.Unlock()
		b.fullRescan = true
		b.arm()
		return
	}
	t.log.Debug("fsnotify error", "err", err)
}

// takeNotified moves what Notify and Rescan left for the loop into the
// batch: the paths named (those inside the tree made dirty), a full rescan
// asked for.
func (t *Tree) takeNotified(b *batch) {
	t.mu.Lock()
	pending := t.pending
	t.pending = nil
	if t.rescanReq {
		b.fullRescan = true
		t.rescanReq = false
	}
	t.mu.Unlock()
	for _, p := range pending {
		if rel, ok := t.rel(p); ok {
			b.dirty[rel] = struct{}{}
		}
	}
	b.arm()
}

// applyBatch applies the batch whose timer fired: the dirty paths, or the
// whole tree rescanned when they are many or a rule file (.gitignore, …)
// is among them; the counts updated and the batch emptied. It returns the
// changes found, and false when ctx ended during the walk (the index is
// then left as the walk left it, to be dropped with the Tree).
func (t *Tree) applyBatch(ctx context.Context, b *batch) ([]Change, bool) {
	b.armed = false
	if len(b.dirty) > t.opts.RescanThreshold {
		b.fullRescan = true
	}
	for p := range b.dirty {
		if ignore.IsRuleFile(p) {
			b.fullRescan = true
			t.ign.Reset()
			break
		}
	}
	var changes []Change
	if b.fullRescan {
		changes = t.rescan(ctx)
	} else {
		changes = t.applyDirty(ctx, b.dirty)
	}
	if ctx.Err() != nil {
		return nil, false
	}
	clear(b.dirty)
	clear(t.orphans)
	t.mu.Lock()
	t.batches++
	if b.fullRescan {
		t.rescans++
	}
	t.mu.Unlock()
	b.fullRescan = false
	return changes, true
}

// announce hands a batch's changes, sorted by path, to OnChange, and moves
// the index's generation on; an empty batch is not announced.
func (t *Tree) announce(changes []Change) {
	if len(changes) == 0 {
		return
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	t.mu.Lock()
	t.gen++
	t.mu.Unlock()
	if t.opts.OnChange != nil {
		t.guard("OnChange", func() { t.opts.OnChange(changes) })
	}
}

// onEvent marks the event's path dirty. A directory that moves away keeps
// its inotify watches under the old names (fsnotify drops only the moved
// directory's own), so the watches of everything below it are dropped now;
// the new name arrives as a Create and is walked afresh.
func (t *Tree) onEvent(ev fsnotify.Event, dirty map[string]struct{}) {
	rel, ok := t.rel(ev.Name)
	if !ok {
		return
	}
	dirty[rel] = struct{}{}
	if !ev.Has(fsnotify.Rename) && !ev.Has(fsnotify.Remove) {
		return
	}
	var below []string
	t.mu.Lock()
	for d := range t.dirs {
		if d == rel || strings.HasPrefix(d, rel+"/") {
			delete(t.dirs, d)
			t.orphans[d] = struct{}{}
			if d != rel {
				below = append(below, d)
			}
		}
	}
	t.mu.Unlock()
	for _, d := range below {
		t.unwatch(d)
	}
}

// rel converts an absolute path (or one relative to the root) to a clean,
// slash-separated path relative to the root; false if it is outside.
func (t *Tree) rel(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(t.root, p)
	}
	r, err := filepath.Rel(t.root, filepath.Clean(p))
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	if r == "." {
		return "", true
	}
	return filepath.ToSlash(r), true
}

func (t *Tree) abs(rel string) string {
	if rel == "" {
		return t.root
	}
	return filepath.Join(t.root, filepath.FromSlash(rel))
}

// watch adds an inotify watch for the directory rel. On ENOSPC (or EMFILE,
// no instance) it degrades.
func (t *Tree) watch(rel string) {
	if t.w == nil {
		return
	}
	err := t.w.Add(t.abs(rel))
	if err == nil {
		return
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
		t.degrade(err)
		return
	}
	// Gone already, or unreadable: the walk finds out too.
	t.log.Debug("cannot watch directory", "dir", rel, "err", err)
}

func (t *Tree) unwatch(rel string) {
	if t.w != nil {
		_ = t.w.Remove(t.abs(rel)) // already gone is fine
	}
}

// watchInfoDir watches .git/info, which is ignored and so not walked, for
// changes of .git/info/exclude.
func (t *Tree) watchInfoDir() {
	if t.w == nil {
		return
	}
	info := t.abs(".git/info")
	if fi, err := os.Stat(info); err == nil && fi.IsDir() {
		if err := t.w.Add(info); err != nil {
			t.log.Debug("cannot watch .git/info", "err", err)
		}
	}
}

// degrade closes the watcher after the kernel refused a watch, logs one
// warning and switches to the fallback the caller chooses.
func (t *Tree) degrade(cause error) {
	if t.w != nil {
		t.w.Close()
		t.w = nil
	}
	client := false
	if t.opts.OnDegraded != nil {
		t.guard("OnDegraded", func() { client = t.opts.OnDegraded(cause) })
	}
	mode := ModePoll
	how := fmt.Sprintf("rescanning every %s instead", t.opts.PollInterval)
	if client {
		mode = ModeClient
		how = "relying on the editor's file watching (workspace/didChangeWatchedFiles) instead"
	}
	t.mu.Lock()
	t.mode = mode
	t.mu.Unlock()
	t.log.Warn("cannot watch the folder's files: the kernel's inotify watch limit is reached "+
		"(raise it with: sysctl fs.inotify.max_user_watches=524288); "+how, "err", cause)
}

// walkBatch is how many directory entries a walk reads at a time; it checks
// for cancellation between batches and between directories.
const walkBatch = 256

// walk indexes the directory rel and everything below it that is not
// ignored, adding watches for new directories (those not in known) before
// reading them. Precondition: rel itself is not ignored. It returns the
// files and directories found, rel included, and ctx's error if it was
// cancelled before the end (the maps then hold what was found so far).
// At most budget files are indexed.
func (t *Tree) walk(ctx context.Context, rel string, known map[string]struct{}, budget int) (map[string]Entry, map[string]struct{}, error) {
	files := make(map[string]Entry)
	dirs := make(map[string]struct{})
	stack := []string{rel}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return files, dirs, err
		}
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if t.opts.onDir != nil {
			t.opts.onDir(ctx, d)
		}
		if _, ok := known[d]; !ok {
			t.watch(d)
		}
		err := readDir(ctx, t.abs(d), func(de fs.DirEntry) {
			p := de.Name()
			if d != "" {
				p = d + "/" + p
			}
			typ := de.Type()
			isDir := typ.IsDir()
			if t.ign.IgnoredEntry(p, isDir) {
				return
			}
			if isDir {
				stack = append(stack, p)
				return
			}
			if !typ.IsRegular() && typ&fs.ModeSymlink == 0 {
				return // sockets, pipes, devices
			}
			if len(files) >= budget {
				if !t.truncated {
					t.truncated = true
					t.log.Warn("too many files in folder; the rest are left out of the index", "max", t.opts.MaxFiles)
				}
				return
			}
			info, err := de.Info()
			if err != nil {
				return // gone meanwhile
			}
			files[p] = Entry{Path: p, Size: info.Size(), ModTime: info.ModTime(), Mode: info.Mode().Type()}
		})
		switch {
		case err == nil:
			dirs[d] = struct{}{}
		case ctx.Err() != nil:
			return files, dirs, ctx.Err()
		case d == rel && errors.Is(err, fs.ErrNotExist):
			return files, dirs, nil
		default:
			t.log.Debug("cannot read directory", "dir", d, "err", err)
			if d != rel {
				// An unreadable directory is still a directory.
				dirs[d] = struct{}{}
			}
		}
	}
	return files, dirs, nil
}

// readDir calls fn for every entry of the directory dir, in directory
// order, reading walkBatch entries at a time and stopping with ctx's error
// when ctx is done. Entries seen before an error are kept.
func readDir(ctx context.Context, dir string, fn func(fs.DirEntry)) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(walkBatch)
		for _, de := range ents {
			fn(de)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// rescan walks the whole folder and replaces the index, returning what
// changed. A cancelled rescan changes nothing.
func (t *Tree) rescan(ctx context.Context) []Change {
	t.mu.RLock()
	known := t.dirs
	t.mu.RUnlock()
	if t.w == nil {
		known = nil
	}
	t.truncated = false
	files, dirs, err := t.walk(ctx, "", known, t.opts.MaxFiles)
	if err != nil {
		return nil
	}
	t.watchInfoDir()
	for d := range known {
		if _, ok := dirs[d]; !ok {
			t.unwatch(d)
		}
	}
	t.mu.Lock()
	old := t.files
	t.files, t.dirs = files, dirs
	t.mu.Unlock()
	return diff(old, files, nil)
}

// applyDirty brings the dirty paths up to date one by one, until ctx is done.
func (t *Tree) applyDirty(ctx context.Context, dirty map[string]struct{}) []Change {
	paths := make([]string, 0, len(dirty))
	for p := range dirty {
		paths = append(paths, p)
	}
	// Parents before children: a new directory's walk covers its contents.
	sort.Strings(paths)
	var changes []Change
	for _, p := range paths {
		if ctx.Err() != nil {
			return nil
		}
		changes = append(changes, t.applyPath(ctx, p)...)
	}
	return changes
}

func (t *Tree) applyPath(ctx context.Context, rel string) []Change {
	if rel == "" {
		// The root itself changed (attributes): nothing to index.
		return nil
	}
	t.mu.RLock()
	_, parentKnown := t.dirs[parentOf(rel)]
	_, wasDir := t.dirs[rel]
	oldEntry, wasFile := t.files[rel]
	t.mu.RUnlock()
	_, orphan := t.orphans[rel]
	if orphan {
		// Watched no more, whatever it is now.
		wasDir = false
	}

	fi, err := os.Lstat(t.abs(rel))
	gone := err != nil
	isDir := !gone && fi.IsDir()
	if !gone && (!parentKnown || t.ign.Ignored(rel, isDir)) {
		gone = true // not ours to index
	}
	if gone || !isDir {
		var changes []Change
		if wasDir || orphan {
			changes = t.dropSubtree(rel)
		}
		if gone {
			if wasFile {
				t.mu.Lock()
				delete(t.files, rel)
				t.mu.Unlock()
				changes = append(changes, Change{Path: rel, Op: Removed})
			}
			return changes
		}
		if !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
			return changes
		}
		e := Entry{Path: rel, Size: fi.Size(), ModTime: fi.ModTime(), Mode: fi.Mode().Type()}
		t.mu.Lock()
		t.files[rel] = e
		t.mu.Unlock()
		switch {
		case !wasFile:
			changes = append(changes, Change{Path: rel, Op: Created})
		case !oldEntry.same(e):
			changes = append(changes, Change{Path: rel, Op: Modified})
		}
		return changes
	}

	// A directory: (re)walk it and reconcile what is below it.
	var changes []Change
	if wasFile {
		t.mu.Lock()
		delete(t.files, rel)
		t.mu.Unlock()
		changes = append(changes, Change{Path: rel, Op: Removed})
	}
	t.mu.RLock()
	known := make(map[string]struct{})
	if t.w != nil {
		for d := range t.dirs {
			if d == rel || strings.HasPrefix(d, rel+"/") {
				known[d] = struct{}{}
			}
		}
	}
	t.mu.RUnlock()
	if !wasDir {
		delete(known, rel)
	}
	t.mu.RLock()
	budget := t.opts.MaxFiles - len(t.files)
	for p := range t.files {
		if strings.HasPrefix(p, rel+"/") {
			budget++
		}
	}
	t.mu.RUnlock()
	files, dirs, err := t.walk(ctx, rel, known, budget)
	if err != nil {
		return nil // closing: the index is dropped with the Tree
	}
	prefix := rel + "/"
	var unwatch []string
	t.mu.Lock()
	old := make(map[string]Entry)
	for p, e := range t.files {
		if strings.HasPrefix(p, prefix) {
			old[p] = e
			delete(t.files, p)
		}
	}
	for d := range t.dirs {
		if d == rel || strings.HasPrefix(d, prefix) {
			if _, ok := dirs[d]; !ok {
				unwatch = append(unwatch, d)
			}
			delete(t.dirs, d)
		}
	}
	for p, e := range files {
		t.files[p] = e
	}
	for d := range dirs {
		t.dirs[d] = struct{}{}
	}
	t.mu.Unlock()
	for _, d := range unwatch {
		t.unwatch(d)
	}
	return append(changes, diff(old, files, nil)...)
}

// dropSubtree removes the directory rel and everything below it.
func (t *Tree) dropSubtree(rel string) []Change {
	prefix := rel + "/"
	var changes []Change
	var gone []string
	t.mu.Lock()
	for p := range t.files {
		if strings.HasPrefix(p, prefix) {
			delete(t.files, p)
			changes = append(changes, Change{Path: p, Op: Removed})
		}
	}
	for d := range t.dirs {
		if d == rel || strings.HasPrefix(d, prefix) {
			delete(t.dirs, d)
			gone = append(gone, d)
		}
	}
	t.mu.Unlock()
	for _, d := range gone {
		t.unwatch(d)
	}
	return changes
}

func (e Entry) same(o Entry) bool {
	return e.Path == o.Path && e.Size == o.Size && e.Mode == o.Mode && e.ModTime.Equal(o.ModTime)
}

// diff lists the changes from old to cur.
func diff(old, cur map[string]Entry, changes []Change) []Change {
	for p, e := range cur {
		o, ok := old[p]
		switch {
		case !ok:
			changes = append(changes, Change{Path: p, Op: Created})
		case !o.same(e):
			changes = append(changes, Change{Path: p, Op: Modified})
		}
	}
	for p := range old {
		if _, ok := cur[p]; !ok {
			changes = append(changes, Change{Path: p, Op: Removed})
		}
	}
	return changes
}

func parentOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}
