package workspace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/kimi-lsp/kimi-lsp/workspace/ignore"
	"github.com/kimi-lsp/kimi-lsp/workspace/watch"
)

// Folder is one workspace folder.
type Folder struct {
	// URI is the folder's canonical file URI.
	URI URI
	// Name is unique among the folders: the client's name, else the base
	// name, with "~2", "~3"… added on a clash. With several folders,
	// workspace-relative paths start with it.
	Name string
	// Path is the absolute path, as the client named it (cleaned).
	Path string
	// Real is Path with symbolic links resolved; confinement compares real paths.
	Real string
}

// Buffers is what the disk view needs to know about the editor's open
// documents: whether a document is open and its current text. The lsp
// layer wires the document store to it.
type Buffers interface {
	// Buffer returns the current text of the open document uri; ok is
	// false if it is not open.
	Buffer(uri URI) (text string, ok bool)
}

// Hooks connect Folders to the rest of the server. Every field is optional.
type Hooks struct {
	// Buffers answers which documents are open; nil means none.
	Buffers Buffers
	// Logger receives the logs; nil means slog.Default().
	Logger *slog.Logger
	// SecretNotice is called once per Folders, the first time a secret
	// file is kept out of a prompt or a read, with its workspace-relative
	// path: the lsp layer turns it into one window/showMessage.
	SecretNotice func(path string)
	// WatchDegraded is called once per folder when the kernel's inotify
	// watch limit is reached, from inside the folder's scan; it returns at
	// once: true if the lsp layer will register
	// workspace/didChangeWatchedFiles with the client and feed the events to
	// DidChangeWatchedFiles (if that registration later fails, it calls
	// FallBackToPolling), false to let the folder rescan periodically.
	WatchDegraded func(folder Folder, err error) (clientWatches bool)
	// ChangedOnDisk is called when a file that is open in the editor changed
	// (or went away) on disk with different text. The buffer is kept: the
	// disk copy is never merged into it.
	ChangedOnDisk func(uri URI)
	// DiskChanged is called after each batch of disk changes a folder's
	// view applied (files created, modified or removed, open or not), from
	// the view's goroutine: it must return quickly. The lsp layer passes
	// them to the helper language servers (assist/verify).
	DiskChanged func(changes []DiskChange)
}

// DiskChange is one file's change on disk (Hooks.DiskChanged).
type DiskChange struct {
	URI URI
	Op  watch.Op
}

// Folders is the set of workspace folders, each with its disk view. The
// lsp layer calls Add for every folder of initialize (workspaceFolders,
// else rootUri) and Add/Remove on workspace/didChangeWorkspaceFolders. It
// is safe for concurrent use.
type Folders struct {
	hooks   Hooks
	log     *slog.Logger
	secrets *Secrets

	mu    sync.RWMutex
	opts  Options
	views []*View // in the order added

	langs languageMemo // see Languages

	// closing counts views being closed in the background (Remove,
	// SetOptions, Close); Close waits for them. Add is called with mu held
	// and only while closed is false.
	closing sync.WaitGroup
	closed  bool
}

// NewFolders returns an empty set of folders.
func NewFolders(opts Options, hooks Hooks) *Folders {
	opts = opts.withDefaults()
	log := hooks.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Folders{
		hooks:   hooks,
		log:     log,
		secrets: NewSecrets(opts.SecretGlobs, hooks.SecretNotice),
		opts:    opts,
	}
}

// Errors of Add.
var (
	// ErrNotDir: the folder is not a directory.
	ErrNotDir = errors.New("not a directory")
	// ErrClosed: the Folders were closed (the session is ending).
	ErrClosed = errors.New("workspace closed")
)

// Add adds the folder uri (name may be empty) and starts its disk view:
// the first scan runs in the background, so Add returns at once; Ready
// waits for it. Adding a folder twice is no error.
func (f *Folders) Add(uri URI, name string) error {
	p, err := uri.Path()
	if err != nil {
		return fmt.Errorf("add workspace folder: %w", err)
	}
	p = filepath.Clean(p)
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("add workspace folder: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("add workspace folder %s: %w", p, ErrNotDir)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("add workspace folder: %w", err)
	}
	if name == "" {
		name = filepath.Base(p)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("add workspace folder %s: %w", p, ErrClosed)
	}
	for _, v := range f.views {
		if v.folder.Real == real {
			return nil
		}
	}
	folder := Folder{URI: FileURI(p), Name: f.uniqueNameLocked(name), Path: p, Real: real}
	v := newView(folder, f, f.opts)
	f.views = append(f.views, v)
	f.log.Info("workspace folder added", "folder", p)
	return nil
}

// uniqueNameLocked returns name, or name~N if a folder already has it.
// Precondition: f.mu is held.
func (f *Folders) uniqueNameLocked(name string) string {
	taken := func(n string) bool {
		for _, v := range f.views {
			if v.folder.Name == n {
				return true
			}
		}
		return false
	}
	if !taken(name) {
		return name
	}
	for i := 2; ; i++ {
		if n := fmt.Sprintf("%s~%d", name, i); !taken(n) {
			return n
		}
	}
}

// Remove removes the folder uri and stops watching it; it reports whether
// the folder was there. It never waits for the folder's scan or watcher:
// the folder leaves the list at once and its view is closed in the
// background (Close waits for that).
func (f *Folders) Remove(uri URI) bool {
	p, err := uri.Path()
	if err != nil {
		return false
	}
	p = filepath.Clean(p)
	f.mu.Lock()
	var gone *View
	for i, v := range f.views {
		if v.folder.Path == p || v.folder.URI == uri {
			gone = v
			f.views = append(f.views[:i:i], f.views[i+1:]...)
			f.closeLaterLocked([]*View{v})
			break
		}
	}
	f.mu.Unlock()
	if gone == nil {
		return false
	}
	f.log.Info("workspace folder removed", "folder", p)
	return true
}

// closeLaterLocked closes views in the background; Close waits for them.
// Precondition: f.mu is held.
func (f *Folders) closeLaterLocked(views []*View) {
	if f.closed {
		// Close is waiting already; it cannot wait for more.
		for _, v := range views {
			go v.close()
		}
		return
	}
	f.closing.Add(len(views))
	for _, v := range views {
		go func() {
			defer f.closing.Done()
			v.close()
		}()
	}
}

// List returns the folders in the order they were added.
func (f *Folders) List() []Folder {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]Folder, len(f.views))
	for i, v := range f.views {
		out[i] = v.folder
	}
	return out
}

// Views returns the disk views, in the order their folders were added.
func (f *Folders) Views() []*View {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return append([]*View(nil), f.views...)
}

// Owner returns the innermost folder containing the absolute path p
// (lexically, or after resolving symbolic links of the folders).
func (f *Folders) Owner(p string) (Folder, bool) {
	v, _, ok := f.owner(p)
	if !ok {
		return Folder{}, false
	}
	return v.folder, true
}

// owner returns the view of the innermost folder containing the absolute
// path p and p's slash-separated path relative to it.
func (f *Folders) owner(p string) (*View, string, bool) {
	p = filepath.Clean(p)
	f.mu.RLock()
	defer f.mu.RUnlock()
	var best *View
	var bestRel string
	bestLen := -1
	for _, v := range f.views {
		for _, base := range []string{v.folder.Path, v.folder.Real} {
			if rel, ok := within(base, p); ok && len(base) > bestLen {
				best, bestRel, bestLen = v, rel, len(base)
			}
		}
	}
	return best, bestRel, best != nil
}

// within reports whether p is base or below it, with p's slash-separated
// path relative to base ("" for base itself).
func within(base, p string) (string, bool) {
	if p == base {
		return "", true
	}
	prefix := base
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(p, prefix) {
		return "", false
	}
	return filepath.ToSlash(p[len(prefix):]), true
}

// RelPath returns the workspace-relative, slash-separated path of the
// absolute path p: relative to its folder, prefixed with the folder's name
// when there are several folders. ok is false outside every folder.
func (f *Folders) RelPath(p string) (string, bool) {
	v, rel, ok := f.owner(p)
	if !ok {
		return "", false
	}
	return f.display(v, rel), true
}

func (f *Folders) display(v *View, rel string) string {
	f.mu.RLock()
	multi := len(f.views) > 1
	f.mu.RUnlock()
	if !multi {
		return rel
	}
	if rel == "" {
		return v.folder.Name
	}
	return v.folder.Name + "/" + rel
}

// Ready waits until the first scan of every folder added so far is done.
func (f *Folders) Ready(ctx context.Context) error {
	for _, v := range f.Views() {
		if err := v.Ready(ctx); err != nil {
			return err
		}
	}
	return nil
}

// IsSecret reports whether path (absolute, a file URI, or workspace-relative)
// is a secret file, by DefaultSecretGlobs and the user's secret globs: by
// its name, or by the name of the file it resolves to through symbolic
// links (envlink.txt → .env is secret), wherever that is. A path whose
// links cannot be resolved (a loop, a directory that cannot be read) is
// taken as secret.
func (f *Folders) IsSecret(path string) bool {
	sec := f.secretSet()
	if sec.IsSecret(f.secretKey(path)) {
		return true
	}
	lexical, err := f.lexical(path)
	if err != nil {
		return false // not a path on disk (untitled:, …)
	}
	real, err := resolveLinks(lexical)
	if err != nil {
		return true
	}
	return real != lexical && sec.IsSecret(f.secretKey(real))
}

// IsSecretURI is the secret check of a document of any scheme. A file URI
// is IsSecret of its path. For every other scheme (untitled:, git:,
// vscode-remote:, vscode-vfs:, …) the rules apply to the URI's path
// (URI.AnyPath: VS Code's git: URIs carry the file's path there and JSON
// in the query): its last segment, the path itself, and, when the path
// maps into a workspace folder, the folder-relative path and the file it
// resolves to, as for a file. An untitled:/ws/.env.production buffer is as
// secret as the file it will be saved as. f may be nil (the default globs).
func (f *Folders) IsSecretURI(u URI) bool {
	if f == nil {
		p := u.AnyPath()
		return IsSecret(p) || IsSecret(path.Base(p)) || IsSecret(path.Base(rawRest(u)))
	}
	if u.IsFile() {
		p, err := u.Path()
		return err != nil || f.IsSecret(p)
	}
	sec := f.secretSet()
	if sec.IsSecret(path.Base(rawRest(u))) {
		return true
	}
	p := u.AnyPath()
	if p == "" {
		return false
	}
	if sec.IsSecret(path.Base(p)) || sec.IsSecret(p) {
		return true
	}
	if fp := filepath.FromSlash(p); filepath.IsAbs(fp) {
		if _, _, ok := f.owner(fp); ok {
			return f.IsSecret(fp)
		}
	}
	return false
}

// rawRest is what follows u's scheme, without query and fragment, unescaped
// where it can be: a second reading for a URI whose authority would hide the
// name from URI.AnyPath (x://.env).
func rawRest(u URI) string {
	rest := string(u)[len(u.Scheme())+1:]
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	if r, err := url.PathUnescape(rest); err == nil {
		rest = r
	}
	return rest
}

// secretKey returns the folder-relative path of path when it is inside a
// folder (so that user globs with a slash are anchored there), else path.
func (f *Folders) secretKey(path string) string {
	if u, err := ParseURI(path); err == nil && u.IsFile() && strings.HasPrefix(path, "file:") {
		if p, err := u.Path(); err == nil {
			path = p
		}
	}
	if filepath.IsAbs(path) {
		if _, rel, ok := f.owner(path); ok {
			return rel
		}
		return path
	}
	// Workspace-relative: drop a folder-name prefix if there is one.
	if v, rel, ok := f.splitNamed(path); ok && v != nil {
		return rel
	}
	return path
}

// DidChangeWatchedFiles feeds the client's file events (when the folder
// watches through the client, see Hooks.WatchDegraded) to the disk views.
// Events for folders that watch natively are applied too: they are cheap
// and harmless.
func (f *Folders) DidChangeWatchedFiles(uris []URI) {
	for _, u := range uris {
		p, err := u.Path()
		if err != nil {
			continue
		}
		if v, _, ok := f.owner(p); ok {
			v.notify(p)
		}
	}
}

// SetOptions applies new settings. Changed exclude settings restart the
// disk views (a rescan; the old views are closed in the background); the
// rest applies to the next selection or read.
func (f *Folders) SetOptions(opts Options) {
	opts = opts.withDefaults()
	f.mu.Lock()
	old := f.opts
	f.opts = opts
	f.secrets = NewSecrets(opts.SecretGlobs, f.hooks.SecretNotice)
	restart := old.NoDefaultExcludes != opts.NoDefaultExcludes || strings.Join(old.Exclude, "\x00") != strings.Join(opts.Exclude, "\x00")
	var views []*View
	if restart {
		views = f.views
		f.views = make([]*View, len(views))
		for i, v := range views {
			f.views[i] = newView(v.folder, f, opts)
		}
	}
	f.closeLaterLocked(views)
	f.mu.Unlock()
}

// Options returns the settings in use (with defaults filled in).
func (f *Folders) Options() Options {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.opts
}

func (f *Folders) options() Options { return f.Options() }

func (f *Folders) secretSet() *Secrets {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.secrets
}

// Close stops watching every folder, scans in progress included, and waits
// for the watchers to be released, those of removed folders too.
func (f *Folders) Close() error {
	f.mu.Lock()
	f.closeLaterLocked(f.views)
	f.views = nil
	f.closed = true
	f.mu.Unlock()
	f.closing.Wait()
	return nil
}

// FallBackToPolling makes the folder uri rescan periodically instead of
// relying on the editor's file events: for the lsp layer when the
// registration of workspace/didChangeWatchedFiles it promised in
// Hooks.WatchDegraded failed.
func (f *Folders) FallBackToPolling(uri URI) {
	for _, v := range f.Views() {
		if v.folder.URI == uri {
			v.fallBackToPolling()
		}
	}
}

// WatchStats returns each folder's watcher counters, by folder path, sorted.
func (f *Folders) WatchStats() []FolderStats {
	var out []FolderStats
	for _, v := range f.Views() {
		out = append(out, FolderStats{Folder: v.folder, Stats: v.Stats()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Folder.Path < out[j].Folder.Path })
	return out
}

// FolderStats pairs a folder with its watcher's counters.
type FolderStats struct {
	Folder Folder
	Stats  watch.Stats
}

func (f *Folders) ignoreOptions(opts Options) ignore.Options {
	return ignore.Options{Excludes: opts.Exclude, NoDefaults: opts.NoDefaultExcludes}
}

// IsIgnored reports whether the absolute path p is inside a folder and
// left out of it by the ignore rules (.gitignore, defaults, the user's
// excludes); false for a path outside every folder.
func (f *Folders) IsIgnored(p string) bool {
	v, rel, ok := f.owner(p)
	return ok && rel != "" && v.Ignored(rel)
}
