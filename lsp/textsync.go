package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// The text synchronisation notifications run on the read loop, in order, so
// a request that follows a didChange always sees the change.

func handleDidOpen(s *Server, ctx context.Context, raw json.RawMessage) error {
	var p didOpenParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("didOpen: %w", err)
	}
	uri, err := workspace.ParseURI(p.TextDocument.URI)
	if err != nil {
		return fmt.Errorf("didOpen: %w", err)
	}
	s.secrets.opened(uri)
	if err := s.docs.Open(uri, p.TextDocument.LanguageID, p.TextDocument.Version, p.TextDocument.Text); err != nil {
		return err
	}
	if snap, ok := s.docs.Snapshot(uri); ok {
		s.reviews.opened(uri, snap)
		s.nextEdit.Opened(string(uri), snap) // its edit log begins here
	}
	return nil
}

func handleDidChange(s *Server, ctx context.Context, raw json.RawMessage) error {
	var p didChangeParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("didChange: %w", err)
	}
	uri, err := workspace.ParseURI(p.TextDocument.URI)
	if err != nil {
		return fmt.Errorf("didChange: %w", err)
	}
	changes := make([]workspace.Change, len(p.ContentChanges))
	for i, c := range p.ContentChanges {
		changes[i].Text = c.Text
		if c.Range != nil {
			r := fromProtocolRange(*c.Range)
			changes[i].Range = &r
		}
	}
	prev, _ := s.docs.Snapshot(uri)
	edits, err := s.docs.ChangeEdits(uri, p.TextDocument.Version, changes, s.encoding())
	if err == nil {
		s.reviews.apply(uri, p.TextDocument.Version, edits)
		// One ranged change of the whole text is a reload (a rangeless
		// one is a full-sync client's every change).
		whole := len(changes) == 1 && changes[0].Range != nil && prev != nil && prev.Len() > 0 &&
			len(edits) == 1 && edits[0].Start == 0 && edits[0].End == prev.Len()
		s.nextEditEdited(uri, prev, edits, whole)
	}
	return err
}

// handleWillSave takes in a document's willSave: the changes until its
// didSave are the save's (a format on save), not the user's typing.
func handleWillSave(s *Server, ctx context.Context, raw json.RawMessage) error {
	var p willSaveParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("willSave: %w", err)
	}
	uri, err := workspace.ParseURI(p.TextDocument.URI)
	if err != nil {
		return fmt.Errorf("willSave: %w", err)
	}
	s.nextEdit.WillSave(string(uri))
	return nil
}

func handleDidClose(s *Server, ctx context.Context, raw json.RawMessage) error {
	var p didCloseParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("didClose: %w", err)
	}
	uri, err := workspace.ParseURI(p.TextDocument.URI)
	if err != nil {
		return fmt.Errorf("didClose: %w", err)
	}
	if uri.IsFile() {
		s.recent.add(uri)
	}
	s.completion.completer.Forget(string(uri))
	s.nextEdit.Forget(string(uri))
	// Closed first: a review ending meanwhile then keeps nothing for it.
	err = s.docs.Close(uri)
	s.reviews.clear(uri)
	return err
}

func handleDidSave(s *Server, ctx context.Context, raw json.RawMessage) error {
	var p didSaveParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("didSave: %w", err)
	}
	uri, err := workspace.ParseURI(p.TextDocument.URI)
	if err != nil {
		return fmt.Errorf("didSave: %w", err)
	}
	if path, err := uri.Path(); err == nil && filepath.Base(path) == config.WorkspaceFileName {
		// The user saved a workspace configuration file in the editor.
		s.reloadWorkspaceConfig()
	}
	s.nextEdit.Saved(string(uri))
	return s.docs.Save(uri, p.Text)
}

func fromProtocolRange(r protocol.Range) workspace.Range {
	return workspace.Range{
		Start: workspace.Position{Line: r.Start.Line, Character: r.Start.Character},
		End:   workspace.Position{Line: r.End.Line, Character: r.End.Character},
	}
}

func toProtocolRange(r workspace.Range) protocol.Range {
	return protocol.Range{
		Start: protocol.Position{Line: r.Start.Line, Character: r.Start.Character},
		End:   protocol.Position{Line: r.End.Line, Character: r.End.Character},
	}
}
