package watch

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultFileDebounce is how long a File waits for its path to be quiet
// before it reports a change: an editor's save (write a temporary file,
// rename it over the old one) is one change.
const DefaultFileDebounce = 100 * time.Millisecond

// FileOptions configure a File.
type FileOptions struct {
	// OnChange is called on the File's goroutine once the file changed
	// (created, written, replaced, removed, or the target of its link
	// changed) and its directory was quiet for Debounce. A panic in it is
	// logged and fails that call alone.
	OnChange func()
	// Debounce is the quiet time before OnChange; 0 means
	// DefaultFileDebounce.
	Debounce time.Duration
	// Logger receives the File's problems; nil means slog.Default().
	Logger *slog.Logger
	// Since, if set, is the path's identity when its reader last read it
	// (Identify, taken before the read): a change made between then and
	// NewFile is reported, after Debounce, as one made once the File
	// runs. Without it the File reports changes from NewFile on.
	Since *Identity
}

// Identity is a path's identity at one moment (see File): what Identify
// returns, for FileOptions.Since.
type Identity struct{ id fileID }

// Identify returns path's identity now: a readlink and a stat, no open.
func Identify(path string) *Identity {
	return &Identity{(&File{path: filepath.Clean(path)}).identity()}
}

// File watches one file by its path with fsnotify, as a configuration
// file is watched: fsnotify watches directories, so File watches the
// directory that holds the path (or, while it does not exist, its nearest
// existing parent, and the directory once it appears) and, when the path is
// a symbolic link, the directory of the file it points to. A change is
// reported only when the file's identity (its inode, size, modification
// time, link target, or its existence) differs from what was last seen, so
// the events of the directory's other files cost a stat each and nothing
// more. File never opens the file: the reader does (a FIFO put in its
// place cannot block it). Close stops it.
type File struct {
	path   string
	opts   FileOptions
	log    *slog.Logger
	w      *fsnotify.Watcher
	done   chan struct{}
	ended  chan struct{}
	closer sync.Once

	// watched are the directories watched now; only the loop touches it
	// after NewFile.
	watched map[string]bool
	last    fileID
}

// fileID is what File compares to tell a change: the link target when the
// path is a link, and the file reached through it.
type fileID struct {
	link string
	info fs.FileInfo
}

func (a fileID) same(b fileID) bool {
	if a.link != b.link || (a.info == nil) != (b.info == nil) {
		return false
	}
	if a.info == nil {
		return true
	}
	return os.SameFile(a.info, b.info) && a.info.Size() == b.info.Size() &&
		a.info.ModTime().Equal(b.info.ModTime()) && a.info.Mode() == b.info.Mode()
}

// NewFile starts watching path (absolute). It fails only when fsnotify
// cannot start (no inotify descriptor left).
func NewFile(path string, opts FileOptions) (*File, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", path, err)
	}
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultFileDebounce
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	f := &File{path: filepath.Clean(path), opts: opts, log: log, w: w,
		done: make(chan struct{}), ended: make(chan struct{}), watched: map[string]bool{}}
	f.last = f.identity()
	changed := false
	if opts.Since != nil && !opts.Since.id.same(f.last) {
		// Reported by the loop after the pause, as a change seen now.
		f.last, changed = opts.Since.id, true
	}
	f.rearm()
	go f.loop(changed)
	return f, nil
}

// Close stops watching and returns once the File's goroutine has ended
// (an OnChange running then is waited for). It is safe to call more than
// once.
func (f *File) Close() error {
	f.closer.Do(func() { close(f.done) })
	<-f.ended
	return nil
}

// identity is the path's identity now.
func (f *File) identity() fileID {
	var id fileID
	if target, err := os.Readlink(f.path); err == nil {
		id.link = target
	}
	if info, err := os.Stat(f.path); err == nil {
		id.info = info
	}
	return id
}

// wanted returns the directories to watch: the nearest existing directory
// at or above the path's, and, for a link, that of its target.
func (f *File) wanted() map[string]bool {
	out := map[string]bool{}
	paths := []string{f.path}
	if target, err := filepath.EvalSymlinks(f.path); err == nil && target != f.path {
		paths = append(paths, target)
	} else if link, err := os.Readlink(f.path); err == nil {
		// A dangling link: watch where its target would appear.
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(f.path), link)
		}
		paths = append(paths, link)
	}
	for _, p := range paths {
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			if info, err := os.Stat(d); err == nil && info.IsDir() {
				out[d] = true
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return out
}

// rearm brings the watched directories in line with wanted.
func (f *File) rearm() {
	want := f.wanted()
	for d := range f.watched {
		if !want[d] {
			f.w.Remove(d)
			delete(f.watched, d)
		}
	}
	for d := range want {
		if f.watched[d] {
			continue
		}
		if err := f.w.Add(d); err != nil {
			f.log.Warn("cannot watch the directory of a configuration file", "path", f.path, "dir", d, "error", err)
			continue
		}
		f.watched[d] = true
	}
}

// loop is the File's only goroutine; changed says the path changed since
// FileOptions.Since.
func (f *File) loop(changed bool) {
	defer close(f.ended)
	defer f.w.Close()
	defer func() {
		if r := recover(); r != nil {
			f.log.Error("panic in the configuration file's watcher; it stopped", "path", f.path, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	if changed {
		timer.Reset(f.opts.Debounce)
	}
	for {
		select {
		case <-f.done:
			timer.Stop()
			return
		case _, ok := <-f.w.Events:
			if !ok {
				return
			}
			timer.Reset(f.opts.Debounce)
		case err, ok := <-f.w.Errors:
			if !ok {
				return
			}
			// A queue overflow loses events: look again after the pause.
			f.log.Debug("configuration file watch", "path", f.path, "error", err)
			timer.Reset(f.opts.Debounce)
		case <-timer.C:
			f.rearm()
			if id := f.identity(); !id.same(f.last) {
				f.last = id
				f.changed()
			}
		}
	}
}

// changed calls OnChange under recover.
func (f *File) changed() {
	if f.opts.OnChange == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			f.log.Error("panic in a watcher callback", "callback", "configuration file changed", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	f.opts.OnChange()
}
