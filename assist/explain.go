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

// explanationDir matches the directories the store writes (see path), and
// legacyName the files earlier versions wrote at the top (NAME-KEY.md): the
// pruning never touches anything else.
var (
	explanationDir = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{12}$`) })
	legacyName     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^.+-[0-9a-f]{12}\.md$`) })
)

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

// path returns the file an explanation with key is (or would be) written
// to: DIR/KEY12/TITLE.md. The editor names its tab after the base name, so
// that is the readable title ("main.go L16-30 — explanation.md"); the
// directory, named by the key, keeps two explanations of the same range
// apart.
func (x *Explanations) path(key, title string) string {
	base := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' || r == 0x7f {
			return '_'
		}
		return r
	}, strings.TrimSpace(title))
	if base == "" || base == "." || base == ".." {
		base = "explanation"
	}
	if len(base) > 120 { // file names are limited to 255 bytes
		base = strings.ToValidUTF8(base[:120], "")
	}
	return filepath.Join(x.dir, key[:12], base+".md")
}

// ExplanationTitle is the title an explanation's file is named by: the
// explained file's base name, the selected lines (1-based, inclusive; none
// when start is 0) and what the document is ("explanation", "answer").
func ExplanationTitle(file string, start, end int, what string) string {
	t := path.Base(file)
	if t == "" || t == "." || t == "/" {
		t = "selection"
	}
	switch {
	case start <= 0:
	case end <= start:
		t += fmt.Sprintf(" L%d", start)
	default:
		t += fmt.Sprintf(" L%d-%d", start, end)
	}
	return t + " — " + what
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
	return string(b), p, true
}

// Store writes an explanation under the file name title (see
// ExplanationTitle) and remembers it under key, then prunes the store to
// its bounds. The file holds the text alone, nothing an editor would show
// before it. It returns the path of the Markdown file.
func (x *Explanations) Store(key, title, text string) (string, error) {
	if x == nil {
		return "", errors.New("no explanation store")
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	p := x.path(key, title)
	if err := x.w.WriteFile(p, []byte(text)); err != nil {
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
	type item struct {
		name  string // below x.dir
		files []string
		mod   time.Time
	}
	var items []item
	removed := map[string]bool{}
	remove := func(it item) {
		for _, f := range it.files {
			if x.w.Remove(f) == nil {
				removed[filepath.Join(x.dir, f)] = true
			}
		}
		if it.name != "" {
			x.w.RemoveDir(it.name) // empty now, unless something not ours is in it
		}
	}
	stale := func(fi os.FileInfo) bool {
		return strings.HasPrefix(fi.Name(), ".") && strings.Contains(fi.Name(), ".kimi-") && now.Sub(fi.ModTime()) > staleTemp
	}
	for _, fi := range entries {
		switch {
		case fi.Mode().IsRegular() && stale(fi):
			remove(item{files: []string{fi.Name()}})
		case fi.Mode().IsRegular() && legacyName().MatchString(fi.Name()):
			items = append(items, item{files: []string{fi.Name()}, mod: fi.ModTime()})
		case fi.IsDir() && explanationDir().MatchString(fi.Name()):
			inner, err := x.w.List(fi.Name())
			if err != nil {
				continue
			}
			it := item{name: fi.Name(), mod: fi.ModTime()}
			for _, f := range inner {
				switch {
				case !f.Mode().IsRegular():
				case stale(f):
					remove(item{files: []string{filepath.Join(fi.Name(), f.Name())}})
				case strings.HasSuffix(f.Name(), ".md"):
					it.files = append(it.files, filepath.Join(fi.Name(), f.Name()))
					if f.ModTime().After(it.mod) {
						it.mod = f.ModTime()
					}
				}
			}
			items = append(items, it)
		}
	}
	var keep []item
	for _, it := range items {
		if now.Sub(it.mod) > x.maxAge {
			remove(it)
		} else {
			keep = append(keep, it)
		}
	}
	if len(keep) > x.maxFiles {
		sort.Slice(keep, func(i, j int) bool { return keep[i].mod.After(keep[j].mod) })
		for _, it := range keep[x.maxFiles:] {
			remove(it)
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
