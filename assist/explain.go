package assist

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// Explanations keeps the explanations the model wrote, as Markdown files in
// the user's cache directory, so an explanation asked again for the same
// code is served at once and the editor can open the file. It is safe for
// concurrent use.
type Explanations struct {
	dir string

	// mu guards known: explanation key → file path.
	mu    sync.Mutex
	known map[string]string
}

// NewExplanations returns a store writing into dir, or, when dir is "",
// into os.UserCacheDir()/kimi-lsp/explanations. The directory is created
// with mode 0700 (explanations quote the user's code).
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
	return &Explanations{dir: dir, known: make(map[string]string)}, nil
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

// Path returns the file an explanation with key is (or would be) written to.
// The file's base name starts with the explained file's name, for the
// editor's tab title.
func (x *Explanations) path(key, file string) string {
	base := strings.TrimSuffix(path.Base(file), path.Ext(file))
	if base == "" || base == "." || base == "/" {
		base = "explanation"
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
	b, err := os.ReadFile(p)
	if err != nil {
		return "", "", false
	}
	_, body, _ := strings.Cut(string(b), "\n\n")
	return body, p, true
}

// Store writes the explanation of file (a workspace-relative path) and
// remembers it under key. It returns the path of the Markdown file.
func (x *Explanations) Store(key, file, text string) (string, error) {
	if x == nil {
		return "", errors.New("no explanation store")
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	p := x.path(key, file)
	if err := writeFileAtomic(p, []byte("<!-- kimi-lsp explanation of "+file+" -->\n\n"+text)); err != nil {
		return "", err
	}
	x.known[key] = p
	return p, nil
}

func writeFileAtomic(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), name)
}
