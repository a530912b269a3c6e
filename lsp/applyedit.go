package lsp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/redact"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// ErrRefused is returned when the client does not apply an edit.
var ErrRefused = errors.New("the editor did not apply the edit")

// applyEditTimeout bounds the wait for the editor's answer to an edit once
// it is sent — even when the job is cancelled meanwhile: the editor may
// have applied it, and the user must be told which. An edit to confirm
// hunk by hunk waits for a person instead (confirmTimeout, confirm.go).
var applyEditTimeout = 30 * time.Second

// applyChanges sends the checked changes of a job as one workspace/applyEdit
// and returns a one-line summary. The edits are computed against the
// documents as they are when they land (assist.Lander: one edit at a time
// per document, rebased over the user's typing and our own earlier edits
// when those do not touch the edited lines, refused otherwise). sent
// reports whether the edit went to the editor: once it did, the answer is
// awaited (at most applyEditTimeout) even if ctx is cancelled, and err
// says what the editor did. status hears the job's progress while it waits
// for an earlier edit of the same documents.
func (s *Server) applyChanges(ctx context.Context, label string, out *assist.Outcome, status func(string)) (summary string, sent bool, err error) {
	caps := s.clientCaps()
	if !caps.Workspace.ApplyEdit {
		return "", false, errors.New("the editor does not support workspace/applyEdit")
	}
	plan, err := s.lander.Plan(ctx, out.Changes, label, status)
	if err != nil {
		return "", false, err
	}
	defer plan.End()
	edit, err := s.workspaceEdit(plan)
	if err != nil {
		return "", false, err
	}
	if plan.Edits == 0 {
		return "the model's edit changes nothing", false, nil
	}
	var hunks []hunkFile
	if s.wantsConfirmation(plan) {
		hunks = s.annotate(&edit, plan)
	}
	if err := context.Cause(ctx); err != nil {
		return "", false, err
	}
	wait := applyEditTimeout
	if hunks != nil {
		wait = confirmTimeout
		status("waiting for you to review the hunks")
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
	defer cancel()
	if hunks != nil {
		defer context.AfterFunc(ctx, cancel)()
	}
	var res applyEditResult
	if err := s.call(actx, "workspace/applyEdit", applyEditParams{Label: label, Edit: edit}, &res); err != nil {
		if hunks != nil && context.Cause(ctx) != nil {
			return "", true, errors.New("the editor was still asking you to confirm it; what you accept there now is your own change")
		}
		if actx.Err() != nil {
			return "", true, fmt.Errorf("the editor did not answer within %v; the edit may or may not be applied", wait)
		}
		return "", true, err
	}
	if !res.Applied {
		reason := res.FailureReason
		if reason == "" {
			reason = "no reason given (the buffer may have changed meanwhile)"
		}
		return "", true, fmt.Errorf("%w: %s", ErrRefused, reason)
	}
	if hunks != nil {
		applied, total := s.checkHunks(ctx, hunks)
		if applied == 0 {
			// Every hunk unticked in the editor's preview: nothing landed
			// (a finding this fixes stays).
			return "", true, fmt.Errorf("none of the %d %s was kept (confirmed hunk by hunk)", total, plural(total, "hunk", "hunks"))
		}
		if applied == total {
			plan.Landed()
			if total == 1 {
				return "the hunk applied (confirmed hunk by hunk)", true, nil
			}
			return fmt.Sprintf("all %d hunks applied (confirmed hunk by hunk)", total), true, nil
		}
		// "N of M" only when hunks were left out (unticked in the preview).
		return fmt.Sprintf("%d of %d %s applied (confirmed hunk by hunk)", applied, total, plural(total, "hunk", "hunks")), true, nil
	}
	plan.Landed()
	return landedSummary(plan.Hunks, plan.Touched), true, nil
}

// landedSummary words a landed edit in what the user reads in a diff:
// "1 hunk in 1 file applied" (issue 33 item 18); a rename alone changes
// no line.
func landedSummary(hunks, files int) string {
	if hunks == 0 {
		return fmt.Sprintf("%d %s renamed", files, plural(files, "file", "files"))
	}
	return fmt.Sprintf("%d %s in %d %s applied", hunks, plural(hunks, "hunk", "hunks"), files, plural(files, "file", "files"))
}

// workspaceEdit converts a plan to the WorkspaceEdit the client can apply:
// versioned documentChanges with resource operations where it supports
// them, else a plain changes map.
func (s *Server) workspaceEdit(plan *assist.EditPlan) (workspaceEdit, error) {
	caps := s.clientCaps()
	docChanges := caps.Workspace.WorkspaceEdit != nil && caps.Workspace.WorkspaceEdit.DocumentChanges
	var ops []string
	if caps.Workspace.WorkspaceEdit != nil {
		ops = caps.Workspace.WorkspaceEdit.ResourceOperations
	}
	canDo := func(op string, uri workspace.URI) error {
		if !docChanges || !slices.Contains(ops, op) {
			return fmt.Errorf("the edit %ss %s, but the editor cannot %s files through LSP", op, s.displayPath(uri), op)
		}
		return nil
	}
	enc := s.encoding()
	edit := workspaceEdit{}
	if !docChanges {
		edit.Changes = map[string][]protocol.TextEdit{}
	}
	for _, f := range plan.Files {
		uri := string(f.URI)
		switch f.Kind {
		case assist.EditModify:
			tes := textEdits(f, enc)
			if docChanges {
				edit.DocumentChanges = append(edit.DocumentChanges, textDocumentEdit{TextDocument: versionedID{URI: uri, Version: f.Version}, Edits: tes})
			} else {
				edit.Changes[uri] = tes
			}
		case assist.EditCreate:
			if err := canDo("create", f.URI); err != nil {
				return edit, err
			}
			edit.DocumentChanges = append(edit.DocumentChanges, createFile{Kind: "create", URI: uri})
			if f.Text != "" {
				edit.DocumentChanges = append(edit.DocumentChanges, textDocumentEdit{
					TextDocument: versionedID{URI: uri},
					Edits:        []protocol.TextEdit{{NewText: f.Text}},
				})
			}
		case assist.EditDelete:
			if err := canDo("delete", f.URI); err != nil {
				return edit, err
			}
			edit.DocumentChanges = append(edit.DocumentChanges, deleteFile{Kind: "delete", URI: uri})
		case assist.EditRename:
			if err := canDo("rename", f.OldURI); err != nil {
				return edit, err
			}
			edit.DocumentChanges = append(edit.DocumentChanges, renameFile{Kind: "rename", OldURI: string(f.OldURI), NewURI: uri})
			if len(f.Edits) > 0 {
				// The renamed document has no version the server knows.
				edit.DocumentChanges = append(edit.DocumentChanges, textDocumentEdit{TextDocument: versionedID{URI: uri}, Edits: textEdits(f, enc)})
			}
		}
	}
	return edit, nil
}

// textEdits maps a planned file's byte-offset edits to LSP text edits with
// its base text's mapper.
func textEdits(f assist.PlannedFile, enc workspace.Encoding) []protocol.TextEdit {
	out := make([]protocol.TextEdit, len(f.Edits))
	for i, e := range f.Edits {
		out[i] = protocol.TextEdit{Range: toProtocolRange(f.Base.OffsetRange(e.Start, e.End, enc)), NewText: e.NewText}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// redact removes the API key (and bearer tokens) from text meant for the
// editor: Options.Redact, else the one redactor (assist/redact) with the
// configured key.
func (s *Server) redact(text string) string {
	if s.opts.Redact != nil {
		return s.opts.Redact(text)
	}
	key, _ := s.config().Key()
	return redact.String(text, key)
}
