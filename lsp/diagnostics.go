package lsp

import (
	"context"
	"slices"
	"sync"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// This file is the one publisher of kimi's diagnostics. Every surface that
// marks places in a document (next-edit suggestions; review findings)
// registers a diagSource under its code; the publisher merges what every
// source says about a document into one list, so that one
// publishDiagnostics never erases another source's diagnostics.
//
// Delivery: a client that pulls diagnostics (textDocument.diagnostic) and
// accepts workspace/diagnostic/refresh gets diagnosticProvider and pulls
// them (a refresh tells it when they changed); every other client gets
// textDocument/publishDiagnostics. Never both: VS Code would show each
// diagnostic twice.
//
// A source is asked for its list when the document is published, against
// the document as it is then; a source calls Server.diagnosticsChanged
// when its list for a document changed. Publishing runs on one goroutine
// of its own (never the read loop, which must not wait on the editor), in
// order, always with the newest lists.

// diagSource returns a source's diagnostics for the document snap.
type diagSource func(snap *workspace.Snapshot) []kimiDiagnostic

// diagPublisher merges and sends the diagnostics of every source.
type diagPublisher struct {
	s *Server

	mu      sync.Mutex
	sources []namedSource
	dirty   map[workspace.URI]bool
	shown   map[workspace.URI]bool // the last push had diagnostics
	wake    chan struct{}
	started bool
}

type namedSource struct {
	code string
	fn   diagSource
}

func newDiagPublisher(s *Server) *diagPublisher {
	return &diagPublisher{s: s, dirty: map[workspace.URI]bool{}, shown: map[workspace.URI]bool{}, wake: make(chan struct{}, 1)}
}

// addSource registers fn as the source of diagnostics with code.
func (p *diagPublisher) addSource(code string, fn diagSource) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sources = append(p.sources, namedSource{code, fn})
}

// pulls reports whether the client pulls diagnostics (see the file's
// comment); it is decided at initialize and advertised then.
func (s *Server) pullsDiagnostics(pe initializeCaps) bool {
	return pe.TextDocument.Diagnostic != nil && pe.Workspace.Diagnostics != nil && pe.Workspace.Diagnostics.RefreshSupport
}

// diagnosticsChanged marks uri's kimi diagnostics for publishing. It never
// blocks: the read loop calls it.
func (s *Server) diagnosticsChanged(uri workspace.URI) {
	p := s.diags
	p.mu.Lock()
	p.dirty[uri] = true
	if !p.started {
		p.started = true
		go p.run(s.baseCtx)
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// collect returns every source's diagnostics for snap, merged.
func (p *diagPublisher) collect(snap *workspace.Snapshot) []kimiDiagnostic {
	p.mu.Lock()
	sources := slices.Clone(p.sources)
	p.mu.Unlock()
	out := []kimiDiagnostic{}
	for _, src := range sources {
		out = append(out, src.fn(snap)...)
	}
	return out
}

// run publishes what is marked until ctx ends.
func (p *diagPublisher) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		select {
		case <-p.s.replied:
		case <-ctx.Done():
			return
		}
		p.mu.Lock()
		uris := make([]workspace.URI, 0, len(p.dirty))
		for u := range p.dirty {
			uris = append(uris, u)
		}
		clear(p.dirty)
		p.mu.Unlock()
		slices.Sort(uris)
		if p.s.pull.Load() {
			if err := p.s.call(ctx, "workspace/diagnostic/refresh", nil, nil); err != nil {
				p.s.log.Debug("diagnostic refresh", "error", err)
			}
			continue
		}
		for _, uri := range uris {
			p.push(ctx, uri)
		}
	}
}

// push sends uri's merged diagnostics, unless there are none now and the
// last push had none either.
func (p *diagPublisher) push(ctx context.Context, uri workspace.URI) {
	params := publishDiagnosticsParams{URI: string(uri), Diagnostics: []kimiDiagnostic{}}
	if snap, ok := p.s.docs.Snapshot(uri); ok {
		params.Diagnostics = p.collect(snap)
		v := snap.Version
		params.Version = &v
	}
	p.mu.Lock()
	had := p.shown[uri]
	if len(params.Diagnostics) > 0 {
		p.shown[uri] = true
	} else {
		delete(p.shown, uri)
	}
	p.mu.Unlock()
	if len(params.Diagnostics) == 0 && !had {
		return
	}
	p.s.notify(ctx, "textDocument/publishDiagnostics", &params)
}

// handleDocumentDiagnostic answers textDocument/diagnostic (clients that
// pull) with the merged list, for the document as the request found it.
func handleDocumentDiagnostic(s *Server, ctx context.Context, req *request) (any, error) {
	var p documentDiagnosticParams
	if err := decodeParams(methodDiagnostic, req.params, &p); err != nil {
		return nil, err
	}
	out := documentDiagnosticReport{Kind: "full", Items: []kimiDiagnostic{}}
	uri, err := workspace.ParseURI(p.TextDocument.URI)
	if err != nil {
		return out, nil
	}
	if snap, ok := req.view.Snapshot(uri); ok {
		out.Items = s.diags.collect(snap)
	}
	return out, nil
}

// methodDiagnostic is the pull request of diagnostics.
const methodDiagnostic = "textDocument/diagnostic"
