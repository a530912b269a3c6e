package lsp

import (
	"context"
	"sync"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// The kimi diagnostics of a document come from more than one surface — Kimi:
// Review's findings (review.go), the next-edit suggestion (nextedit.go) —
// and go out as one list: a publishDiagnostics replaces every diagnostic
// the server sent for the document, and a pull answer is one report, so two
// senders would erase each other's. The publisher is that one list's
// sender; each surface is a diagnosticSource and says when its part of a
// document changed (diagnosticsChanged). A surface added next adds a source
// to Server.diagnosticSources.

// diagnosticSource is one surface's part of a document's kimi diagnostics.
type diagnosticSource interface {
	// diagnostics returns the surface's diagnostics of uri in snap (nil:
	// the document is not open); ok is false when they are not for
	// snap's version (a didChange is being applied: it marks the document
	// changed again).
	diagnostics(uri workspace.URI, snap *workspace.Snapshot) (_ []outDiagnostic, ok bool)
}

// diagnosticsPublisher holds the documents whose kimi diagnostics changed
// and wakes the sender (diagnosticsSender).
type diagnosticsPublisher struct {
	once sync.Once
	wake chan struct{}

	// mu guards dirty and pushed.
	mu    sync.Mutex
	dirty map[workspace.URI]bool
	// pushed are the documents not open whose diagnostics were pushed to a
	// client that pulls (sendDiagnostics): cleared once they open.
	pushed map[workspace.URI]bool
}

// setPushed notes whether uri has pushed diagnostics now, and returns
// whether it had.
func (p *diagnosticsPublisher) setPushed(uri workspace.URI, now bool) (had bool) {
	p.init()
	p.mu.Lock()
	defer p.mu.Unlock()
	had = p.pushed[uri]
	if now {
		p.pushed[uri] = true
	} else {
		delete(p.pushed, uri)
	}
	return had
}

func (p *diagnosticsPublisher) init() {
	p.once.Do(func() {
		p.dirty = map[workspace.URI]bool{}
		p.pushed = map[workspace.URI]bool{}
		p.wake = make(chan struct{}, 1)
	})
}

// changed marks uri's diagnostics to be sent again. It never blocks; a
// source may call it with its own lock held.
func (p *diagnosticsPublisher) changed(uri workspace.URI) {
	p.init()
	p.mu.Lock()
	p.dirty[uri] = true
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// take returns the documents marked since the last take.
func (p *diagnosticsPublisher) take() map[workspace.URI]bool {
	p.init()
	p.mu.Lock()
	defer p.mu.Unlock()
	dirty := p.dirty
	p.dirty = map[workspace.URI]bool{}
	return dirty
}

// reviewDiagnosticsSource is Kimi: Review's findings as a source.
type reviewDiagnosticsSource struct{ s *Server }

func (r reviewDiagnosticsSource) diagnostics(uri workspace.URI, snap *workspace.Snapshot) ([]outDiagnostic, bool) {
	return r.s.reviewDiagnostics(uri, snap)
}

// nextEditDiagnosticsSource is the next-edit suggestion as a source.
type nextEditDiagnosticsSource struct{ s *Server }

func (n nextEditDiagnosticsSource) diagnostics(_ workspace.URI, snap *workspace.Snapshot) ([]outDiagnostic, bool) {
	if snap == nil {
		return nil, true
	}
	return n.s.nextEditDiagnostics(snap), true
}

// diagnosticSources are the surfaces whose diagnostics make a document's
// kimi diagnostics, in the order of the list: the review's findings, then
// the next-edit suggestion.
func (s *Server) diagnosticSources() []diagnosticSource {
	return []diagnosticSource{reviewDiagnosticsSource{s}, nextEditDiagnosticsSource{s}}
}

// kimiDiagnostics is every kimi diagnostic of uri in snap, in one list
// (diagnosticSources' order). One publishDiagnostics (or pull answer)
// carries them all, so that none erases another. ok is false when a
// source's are not for snap's version.
func (s *Server) kimiDiagnostics(uri workspace.URI, snap *workspace.Snapshot) ([]outDiagnostic, bool) {
	diags := []outDiagnostic{}
	for _, src := range s.diagnosticSources() {
		d, ok := src.diagnostics(uri, snap)
		if !ok {
			return nil, false
		}
		diags = append(diags, d...)
	}
	return diags, true
}

// diagnosticsChanged marks uri's kimi diagnostics to be sent again (the
// sender goroutine does it). It never blocks.
func (s *Server) diagnosticsChanged(uri workspace.URI) {
	s.diagnostics.changed(uri)
}

// diagnosticsSender sends what changed in the kimi diagnostics, one file
// at a time, until the session ends. A panic while one batch is sent
// loses that batch alone (the files' next change sends them again).
func (s *Server) diagnosticsSender(ctx context.Context) {
	s.diagnostics.init()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.diagnostics.wake:
		}
		s.guard("send kimi diagnostics", func() { s.sendDiagnostics(ctx) })
	}
}

// sendDiagnostics sends the diagnostics of the files whose diagnostics
// changed, or asks a client that pulls them to refresh.
func (s *Server) sendDiagnostics(ctx context.Context) {
	dirty := s.diagnostics.take()
	caps := s.clientCaps()
	if pullsDiagnostics(caps) {
		s.sendPulled(ctx, dirty)
		return
	}
	for uri := range dirty {
		snap, open := s.docs.Snapshot(uri)
		if !open {
			snap = nil
		}
		diags, ok := s.kimiDiagnostics(uri, snap)
		if !ok {
			continue // a didChange is being applied: it marks the file again
		}
		p := publishDiagnosticsParams{URI: string(uri), Diagnostics: diags}
		if snap != nil {
			v := snap.Version
			p.Version = &v
		}
		s.notify(ctx, "textDocument/publishDiagnostics", p)
	}
}

// sendPulled is sendDiagnostics for a client that pulls: it asks for the
// open documents' again (workspace/diagnostic/refresh), but a client pulls
// only what it has open (VS Code), so the findings of a file not open — a
// review of changes — are pushed, and cleared by an empty push once the
// file opens (its pull answers then: no copy stays beside it).
func (s *Server) sendPulled(ctx context.Context, dirty map[workspace.URI]bool) {
	refresh := false
	for uri := range dirty {
		if _, open := s.docs.Snapshot(uri); open {
			refresh = true
			if s.diagnostics.setPushed(uri, false) {
				s.notify(ctx, "textDocument/publishDiagnostics", publishDiagnosticsParams{URI: string(uri), Diagnostics: []outDiagnostic{}})
			}
			continue
		}
		diags, ok := s.kimiDiagnostics(uri, nil)
		if !ok {
			continue
		}
		if had := s.diagnostics.setPushed(uri, len(diags) > 0); !had && len(diags) == 0 {
			continue // nothing was pushed, nothing to clear
		}
		s.notify(ctx, "textDocument/publishDiagnostics", publishDiagnosticsParams{URI: string(uri), Diagnostics: diags})
	}
	if refresh {
		_ = s.call(ctx, "workspace/diagnostic/refresh", nil, nil)
	}
}
