package assist

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// Bounds of the explanation store: it keeps the newest MaxExplanations
// files, none older than MaxExplanationAge. Older files (and temporary
// files a killed write left behind) are deleted when the store opens and
// after every Store.
const (
	MaxExplanations   = 200
	MaxExplanationAge = 30 * 24 * time.Hour
)

// explanationName matches the files the store writes (see path): the
// pruning never touches anything else.
var explanationName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^.+-[0-9a-f]{12}\.md$`) })

// Explanations keeps the explanations the model wrote, as Markdown files in
// the user's cache directory, so an explanation asked again for the same
// code is served at once and the editor can open the file. Files are
// written through a workspace.Writer rooted at the store's directory, and
// the store is bounded (MaxExplanations, MaxExplanationAge). It is safe
// for concurrent use.
type Explanations struct {
	dir string
	w   *workspace.Writer

	maxFiles int           // MaxExplanations; lowered by tests
	maxAge   time.Duration // MaxExplanationAge
	now      func() time.Time

	// mu guards known: explanation key → file path, and serialises writes
	// and pruning.
	mu    sync.Mutex
	known map[string]string
}

// NewExplanations returns a store writing into dir, or, when dir is "",
// into os.UserCacheDir()/kimi-lsp/explanations. The directory is created
// with mode 0700 and files with 0600 (explanations quote the user's code).
// Explanations beyond the store's bounds are deleted at once.
func NewExplanations(dir string) (*Explanations, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("no user cache directory: %w", err)
		}
		dir = filepath.Join(base, "kimi-lsp", "explanations")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the explanation directory: %w", err)
	}
	w, err := workspace.NewWriter(dir, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the explanation directory: %w", err)
	}
	x := &Explanations{dir: w.Dir(), w: w, maxFiles: MaxExplanations, maxAge: MaxExplanationAge, now: time.Now, known: make(map[string]string)}
	x.mu.Lock()
	x.pruneLocked()
	x.mu.Unlock()
	return x, nil
}

// ExplanationKey identifies an explanation: the model, the instruction, the
// file, the selected text and the whole file text (an explanation of an
// unchanged selection in a changed file may read differently).
func ExplanationKey(model, instruction, file, selection, text string) string {
	h := sha256.New()
	for _, s := range []string{model, instruction, file, selection, text} {
		fmt.Fprintf(h, "%d:%s\n", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// path returns the file an explanation with key is (or would be) written to.
// The file's base name starts with the explained file's name, for the
// editor's tab title.
func (x *Explanations) path(key, file string) string {
	base := strings.TrimSuffix(path.Base(file), path.Ext(file))
	if base == "" || base == "." || base == "/" {
		base = "explanation"
	}
	if len(base) > 100 { // file names are limited to 255 bytes
		base = strings.ToValidUTF8(base[:100], "")
	}
	return filepath.Join(x.dir, base+"-"+key[:12]+".md")
}

// Lookup returns a stored explanation and the path of its file.
func (x *Explanations) Lookup(key string) (text, file string, ok bool) {
	if x == nil {
		return "", "", false
	}
	x.mu.Lock()
	p, ok := x.known[key]
	x.mu.Unlock()
	if !ok {
		return "", "", false
	}
	b, _, err := x.w.ReadFile(p)
	if err != nil {
		return "", "", false
	}
	_, body, _ := strings.Cut(string(b), "\n\n")
	return body, p, true
}

// Store writes the explanation of file (a workspace-relative path) and
// remembers it under key, then prunes the store to its bounds. It returns
// the path of the Markdown file.
func (x *Explanations) Store(key, file, text string) (string, error) {
	if x == nil {
		return "", errors.New("no explanation store")
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	p := x.path(key, file)
	if err := x.w.WriteFile(p, []byte("<!-- kimi-lsp explanation of "+file+" -->\n\n"+text)); err != nil {
		return "", err
	}
	x.known[key] = p
	x.pruneLocked()
	return p, nil
}

// staleTemp is how old a temporary file of the writer must be to be taken
// for one a killed process left behind.
const staleTemp = time.Hour

// pruneLocked deletes the explanations beyond the newest maxFiles or
// older than maxAge, and stale temporary files, and forgets the keys of
// deleted files. Errors are ignored: pruning is retried after the next
// Store. Precondition: x.mu is held.
func (x *Explanations) pruneLocked() {
	entries, err := x.w.List("")
	if err != nil {
		return
	}
	now := x.now()
	var files []os.FileInfo
	removed := map[string]bool{}
	remove := func(name string) {
		if x.w.Remove(name) == nil {
			removed[filepath.Join(x.dir, name)] = true
		}
	}
	for _, fi := range entries {
		switch {
		case !fi.Mode().IsRegular():
		case strings.HasPrefix(fi.Name(), ".") && strings.Contains(fi.Name(), ".kimi-"):
			if now.Sub(fi.ModTime()) > staleTemp {
				remove(fi.Name())
			}
		case !explanationName().MatchString(fi.Name()):
		case now.Sub(fi.ModTime()) > x.maxAge:
			remove(fi.Name())
		default:
			files = append(files, fi)
		}
	}
	if len(files) > x.maxFiles {
		sort.Slice(files, func(i, j int) bool { return files[i].ModTime().After(files[j].ModTime()) })
		for _, fi := range files[x.maxFiles:] {
			remove(fi.Name())
		}
	}
	for k, p := range x.known {
		if removed[p] {
			delete(x.known, k)
		}
	}
}

// writeCacheFile writes data to the file p in the user's cache directory
// (its directory is created with mode 0700), through a workspace.Writer
// rooted at that directory: never through a link, never into a FIFO, and
// atomically.
func writeCacheFile(p string, data []byte) error {
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	w, err := workspace.NewWriter(dir, 0o600)
	if err != nil {
		return err
	}
	defer w.Close()
	return w.WriteFile(filepath.Base(p), data)
}
