package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// Wire types of a WorkspaceEdit with resource operations (the library's
// WorkspaceEdit.DocumentChanges holds TextDocumentEdits only).

type versionedID struct {
	URI string `json:"uri"`
	// Version is null for a file that is not open in the editor.
	Version *int32 `json:"version"`
}

type textDocumentEdit struct {
	TextDocument versionedID         `json:"textDocument"`
	Edits        []protocol.TextEdit `json:"edits"`
}

type createFile struct {
	Kind    string `json:"kind"` // "create"
	URI     string `json:"uri"`
	Options struct {
		Overwrite      bool `json:"overwrite"`
		IgnoreIfExists bool `json:"ignoreIfExists"`
	} `json:"options"`
}

type renameFile struct {
	Kind   string `json:"kind"` // "rename"
	OldURI string `json:"oldUri"`
	NewURI string `json:"newUri"`
}

type deleteFile struct {
	Kind string `json:"kind"` // "delete"
	URI  string `json:"uri"`
}

type workspaceEdit struct {
	Changes         map[string][]protocol.TextEdit `json:"changes,omitempty"`
	DocumentChanges []any                          `json:"documentChanges,omitempty"`
}

type applyEditParams struct {
	Label string        `json:"label,omitempty"`
	Edit  workspaceEdit `json:"edit"`
}

// ErrRefused is returned when the client does not apply an edit.
var ErrRefused = errors.New("the editor did not apply the edit")

// applyChanges sends the checked changes of a job as one workspace/applyEdit
// and returns a one-line summary. An open document's edit is versioned: it
// is computed against the version the job read, rebased onto the current
// text when the user's typing since did not touch the edited lines, and
// refused otherwise. Files not open are edited through the same request
// (version null), never written behind the editor's back.
func (s *Server) applyChanges(ctx context.Context, label string, changes []patch.FileChange) (string, error) {
	caps := s.clientCaps()
	if !caps.Workspace.ApplyEdit {
		return "", errors.New("the editor does not support workspace/applyEdit")
	}
	docChanges := caps.Workspace.WorkspaceEdit != nil && caps.Workspace.WorkspaceEdit.DocumentChanges
	var ops []string
	if caps.Workspace.WorkspaceEdit != nil {
		ops = caps.Workspace.WorkspaceEdit.ResourceOperations
	}
	enc := s.encoding()
	edit := workspaceEdit{}
	if !docChanges {
		edit.Changes = map[string][]protocol.TextEdit{}
	}
	edits, files := 0, 0
	for _, c := range changes {
		uri := string(workspace.FileURI(c.Path))
		switch c.Kind {
		case patch.ModifyFile:
			id, tes, err := s.modifyEdits(c, enc)
			if err != nil {
				return "", err
			}
			if len(tes) == 0 {
				continue
			}
			if docChanges {
				edit.DocumentChanges = append(edit.DocumentChanges, textDocumentEdit{TextDocument: id, Edits: tes})
			} else {
				edit.Changes[uri] = tes
			}
			edits += len(tes)
		case patch.CreateFile:
			if !docChanges || !slices.Contains(ops, "create") {
				return "", fmt.Errorf("the edit creates %s, but the editor cannot create files through LSP", s.displayPath(workspace.URI(uri)))
			}
			cf := createFile{Kind: "create", URI: uri}
			edit.DocumentChanges = append(edit.DocumentChanges, cf)
			if c.After != "" {
				edit.DocumentChanges = append(edit.DocumentChanges, textDocumentEdit{
					TextDocument: versionedID{URI: uri},
					Edits:        []protocol.TextEdit{{NewText: c.After}},
				})
			}
			edits++
		case patch.DeleteFile:
			if !docChanges || !slices.Contains(ops, "delete") {
				return "", fmt.Errorf("the edit deletes %s, but the editor cannot delete files through LSP", s.displayPath(workspace.URI(uri)))
			}
			edit.DocumentChanges = append(edit.DocumentChanges, deleteFile{Kind: "delete", URI: uri})
			edits++
		case patch.RenameFile:
			if !docChanges || !slices.Contains(ops, "rename") {
				return "", fmt.Errorf("the edit renames %s, but the editor cannot rename files through LSP", s.displayPath(workspace.FileURI(c.OldPath)))
			}
			edit.DocumentChanges = append(edit.DocumentChanges, renameFile{Kind: "rename", OldURI: string(workspace.FileURI(c.OldPath)), NewURI: uri})
			edits++
			if c.Before != c.After {
				// After the rename the document lives at the new URI; its
				// text is the old file's, edited.
				old := c
				old.Path = c.OldPath
				id, tes, err := s.modifyEdits(old, enc)
				if err != nil {
					return "", err
				}
				id.URI = uri
				id.Version = nil
				edit.DocumentChanges = append(edit.DocumentChanges, textDocumentEdit{TextDocument: id, Edits: tes})
				edits += len(tes)
			}
		}
		files++
	}
	if edits == 0 {
		return "the model's edit changes nothing", nil
	}
	var res struct {
		Applied       bool   `json:"applied"`
		FailureReason string `json:"failureReason,omitempty"`
	}
	// The library's Client.ApplyEdit decodes the answer into a bool and
	// fails (PITFALLS #9): call it ourselves.
	if err := s.call(ctx, "workspace/applyEdit", applyEditParams{Label: label, Edit: edit}, &res); err != nil {
		return "", err
	}
	if !res.Applied {
		reason := res.FailureReason
		if reason == "" {
			reason = "no reason given (the buffer may have changed meanwhile)"
		}
		return "", fmt.Errorf("%w: %s", ErrRefused, reason)
	}
	return fmt.Sprintf("%d %s applied to %d %s", edits, plural(edits, "edit", "edits"), files, plural(files, "file", "files")), nil
}

// modifyEdits returns the versioned identifier and the minimal text edits
// that turn the file's current text into c.After.
func (s *Server) modifyEdits(c patch.FileChange, enc workspace.Encoding) (versionedID, []protocol.TextEdit, error) {
	uri := workspace.FileURI(c.Path)
	id := versionedID{URI: string(uri)}
	var cur *workspace.Snapshot
	if snap, ok := s.docs.Snapshot(uri); ok {
		cur = snap
		v := snap.Version
		id.Version = &v
	} else {
		// Not open (now): the editor edits the file on disk.
		b, err := os.ReadFile(c.Path)
		if err != nil {
			return id, nil, fmt.Errorf("reading %s: %w", s.displayPath(uri), err)
		}
		cur = workspace.NewSnapshot(uri, "", 0, string(b))
	}
	edits := patch.LineEdits(c.Before, c.After)
	text := cur.Text()
	if text != c.Before {
		// The user typed (or the file changed on disk) since the job read
		// it: move the edits over those changes if they do not touch the
		// edited lines.
		var err error
		edits, err = patch.Rebase(c.Before, text, edits)
		if err != nil {
			return id, nil, fmt.Errorf("%s changed where the edit applies since it was requested; not applied (%w)", s.displayPath(uri), err)
		}
	}
	out := make([]protocol.TextEdit, len(edits))
	for i, e := range edits {
		out[i] = protocol.TextEdit{Range: toProtocolRange(cur.OffsetRange(e.Start, e.End, enc)), NewText: e.NewText}
	}
	return id, out, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// redact removes the API key from text meant for the editor.
func (s *Server) redact(text string) string {
	if s.opts.Redact != nil {
		return s.opts.Redact(text)
	}
	if key, err := s.config().Key(); err == nil && key != "" {
		text = strings.ReplaceAll(text, key, "[REDACTED]")
	}
	return text
}
