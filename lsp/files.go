package lsp

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// buffers adapts the document store to workspace.Buffers.
type buffers struct{ docs *workspace.Documents }

func (b buffers) Buffer(uri workspace.URI) (string, bool) {
	s, ok := b.docs.Snapshot(uri)
	if !ok {
		return "", false
	}
	return s.Text(), true
}

// isSecretURI reports whether uri names a secrets file, by its name or by
// the file it resolves to, whatever its scheme (workspace.Folders.IsSecretURI). Answers are kept
// per URI (codeAction asks on every request; glob matching dominated its
// cost) until the configuration changes or the document is opened again.
func (s *Server) isSecretURI(uri workspace.URI) bool {
	return s.secrets.isSecret(uri, s.folders.IsSecretURI) // any scheme: untitled:, git:, vscode-remote:…
}

// secretFiles is the part of the server that knows the secret files:
// isSecretURI's memo and the files the user was told about. It is safe for
// concurrent use.
type secretFiles struct {
	// memo is isSecretURI's bounded memo, cleared on configuration
	// changes.
	memo secretMemo
	// told remembers the secret files the user was told about.
	told sync.Map
}

// isSecret answers from the memo, or asks check and keeps its answer.
func (f *secretFiles) isSecret(uri workspace.URI, check func(workspace.URI) bool) bool {
	if v, ok := f.memo.load(uri); ok {
		return v
	}
	secret := check(uri)
	f.memo.store(uri, secret)
	return secret
}

// opened forgets uri's answer: a document opened again may be a link that
// now points elsewhere.
func (f *secretFiles) opened(uri workspace.URI) { f.memo.forget(uri) }

// configChanged drops every answer (the secret globs may have changed).
func (f *secretFiles) configChanged() { f.memo.Clear() }

// firstNotice reports whether the user is yet to be told about uri, and
// records that they are now.
func (f *secretFiles) firstNotice(uri workspace.URI) bool {
	_, told := f.told.LoadOrStore(uri, true)
	return !told
}

// maxSecretMemo bounds isSecretURI's memo.
const maxSecretMemo = 4096

// secretMemo is isSecretURI's memo: URI → secret. It holds at most max
// entries (maxSecretMemo when zero); when full, storing evicts an entry
// at random (Go's map order), so a session that touches many files keeps
// a bounded memo. It is safe for concurrent use.
type secretMemo struct {
	mu  sync.Mutex
	m   map[workspace.URI]bool
	max int
}

func (c *secretMemo) load(uri workspace.URI) (secret, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	secret, ok = c.m[uri]
	return secret, ok
}

func (c *secretMemo) store(uri workspace.URI, secret bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[workspace.URI]bool)
	}
	limit := c.max
	if limit <= 0 {
		limit = maxSecretMemo
	}
	for k := range c.m {
		if len(c.m) < limit {
			break
		}
		delete(c.m, k)
	}
	c.m[uri] = secret
}

// forget drops uri's answer: a document opened again may be a link that
// now points elsewhere.
func (c *secretMemo) forget(uri workspace.URI) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, uri)
}

// Clear drops every answer (the secret globs changed).
func (c *secretMemo) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = nil
}

// noteSecret tells the user, once per file, why kimi-lsp does nothing with
// a secrets file.
func (s *Server) noteSecret(ctx context.Context, uri workspace.URI) {
	if !s.secrets.firstNotice(uri) {
		return
	}
	s.showMessage(ctx, protocol.MessageTypeInfo, "kimi-lsp: "+s.displayPath(uri)+" looks like a secrets file (.env, keys, credentials); it is never sent to the model and no AI action is offered for it.")
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

// docView is the open documents as they were when a request arrived: the
// read loop takes it before the request's goroutine starts, so a didChange
// read after the request cannot shift the request's ranges (notifications
// apply in order on the read loop, requests run concurrently on the view they
// took: docs/ARCHITECTURE.md, "lsp/").
type docView struct {
	all []*workspace.Snapshot // sorted by URI
	// seq numbers the views in the order the read loop took them, that is
	// the order the requests arrived in (their goroutines may start in
	// another).
	seq uint64
}

// Snapshot returns the document's snapshot in the view.
func (v docView) Snapshot(uri workspace.URI) (*workspace.Snapshot, bool) {
	i := sort.Search(len(v.all), func(i int) bool { return v.all[i].URI >= uri })
	if i < len(v.all) && v.all[i].URI == uri {
		return v.all[i], true
	}
	return nil, false
}

// All returns every snapshot of the view, sorted by URI.
func (v docView) All() []*workspace.Snapshot { return v.all }

// takeView returns the open documents as they are now, numbered after
// every view taken before (docView.seq). The read loop takes the view of
// a request of snapshotMethods when it reads the request and passes it to
// the handler (request.view).
func (s *Server) takeView() docView {
	return s.views.take(s.docs)
}

// docViews numbers the document views of requests (docView.seq). It is
// safe for concurrent use.
type docViews struct {
	seq atomic.Uint64
}

// take returns the open documents of docs as they are now, numbered after
// every view taken before.
func (v *docViews) take(docs *workspace.Documents) docView {
	return docView{all: docs.All(), seq: v.seq.Add(1)}
}

// snapshotMethods are the requests that read documents: their view is
// taken on the read loop when they arrive.
var snapshotMethods = map[string]bool{
	"textDocument/codeAction":  true,
	"workspace/executeCommand": true,
	"textDocument/diagnostic":  true,
	methodInlineCompletion:     true,
	methodCompletion:           true,
	methodCopilotInlineEdit:    true,
}
