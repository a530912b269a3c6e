package lsp

import (
	"context"
	"fmt"
	"io/fs"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// jobFiles is the patch.Files a job reads through: open documents from the
// snapshot taken when the job started (so an edit is computed against the
// text the prompt showed), other files from the workspace's disk view, with
// the workspace's confinement and secret rules.
type jobFiles struct {
	folders *workspace.Folders
	open    map[workspace.URI]*workspace.Snapshot
}

var _ patch.Files = (*jobFiles)(nil)

func newJobFiles(folders *workspace.Folders, open []*workspace.Snapshot) *jobFiles {
	m := make(map[workspace.URI]*workspace.Snapshot, len(open))
	for _, s := range open {
		m[s.URI] = s
	}
	return &jobFiles{folders: folders, open: m}
}

// Resolve confines path to the workspace folders (symlinks resolved).
func (f *jobFiles) Resolve(path string) (string, error) {
	if f.folders == nil {
		return "", fmt.Errorf("%s: %w (no workspace folder is open)", path, patch.ErrOutside)
	}
	abs, _, err := f.folders.Resolve(path)
	if err != nil {
		return "", fmt.Errorf("%w: %w", patch.ErrOutside, err)
	}
	return abs, nil
}

// Read returns the snapshot's text for an open document, else the disk
// text. Secret files are refused even when open.
func (f *jobFiles) Read(path string) (string, int32, error) {
	if f.folders != nil && f.folders.IsSecret(path) {
		return "", 0, fmt.Errorf("%s: %w", path, workspace.ErrSecret)
	}
	if s, ok := f.open[workspace.FileURI(path)]; ok {
		return s.Text(), s.Version, nil
	}
	if f.folders == nil {
		return "", 0, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	file, err := f.folders.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	return file.Text, patch.NoVersion, nil
}

// buffers adapts the document store to workspace.Buffers.
type buffers struct{ docs *workspace.Documents }

func (b buffers) Buffer(uri workspace.URI) (string, bool) {
	s, ok := b.docs.Snapshot(uri)
	if !ok {
		return "", false
	}
	return s.Text(), true
}

// isSecretURI reports whether uri names a secrets file.
func (s *Server) isSecretURI(uri workspace.URI) bool {
	p, err := uri.Path()
	if err != nil {
		return false
	}
	if s.folders != nil {
		return s.folders.IsSecret(p)
	}
	return workspace.IsSecret(p)
}

// noteSecret tells the user, once per file, why kimi-lsp does nothing with
// a secrets file.
func (s *Server) noteSecret(ctx context.Context, uri workspace.URI) {
	if _, told := s.toldSecret.LoadOrStore(uri, true); told {
		return
	}
	s.notify(ctx, "window/showMessage", &protocol.ShowMessageParams{
		Type:    protocol.MessageTypeInfo,
		Message: "kimi-lsp: " + s.displayPath(uri) + " looks like a secrets file (.env, keys, credentials); it is never sent to the model and no AI action is offered for it.",
	})
}

// recentFiles remembers recently closed documents, most recent first, as
// "recently viewed" context.
type recentFiles struct {
	mu   sync.Mutex
	uris []workspace.URI
}

const maxRecent = 20

func (r *recentFiles) add(u workspace.URI) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []workspace.URI{u}
	for _, x := range r.uris {
		if x != u && len(out) < maxRecent {
			out = append(out, x)
		}
	}
	r.uris = out
}

func (r *recentFiles) list() []workspace.URI {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]workspace.URI(nil), r.uris...)
}
