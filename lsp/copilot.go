package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist/complete"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// This file is next edits in the shape of Copilot's language server, for
// the editors' next-edit UIs built on it (Neovim's copilot-lsp and
// sidekick.nvim, Emacs's copilot.el copilot-nes-mode):
//
//   - textDocument/copilotInlineEdit {textDocument: {uri, version},
//     position, …} answers {edits: [{text, textDocument: {uri, version},
//     range, command}]}: the document's suggestion (nextedit.go), waited
//     for while the pause after the user's last edit, or the request it
//     started, is under way (NextEdits.Await: it never asks the provider
//     itself, so one request per burst holds); no edits when the version
//     asked about is not the document's (then, or once the wait is over);
//   - textDocument/didShowInlineEdit {item: {command}}: the editor
//     displayed it (kimi.stats nextEdit.displayed);
//   - the edit's command, kimi.nextEdit.accepted {uri, id}, which the
//     editor runs after applying the edit (as a request, or as a
//     notification: copilot.el sends it so): the suggestion counts as
//     accepted, once, however the editor's didChanges applied it.
//
// Positions are in the session's encoding, as every other method's: a
// client that applies them as UTF-16 whatever it negotiated (copilot-lsp)
// offers only utf-16 (editors/neovim/README.md).

// Methods of Copilot's next edits.
const (
	methodCopilotInlineEdit = "textDocument/copilotInlineEdit"
	methodDidShowInlineEdit = "textDocument/didShowInlineEdit"
)

// cmdNextEditAccepted is the command of a Copilot inline edit: the editor
// applied it. Copilot's own is github.copilot.didAcceptNextEditSuggestionItem;
// the clients run whatever command the edit names (D78).
const cmdNextEditAccepted = "kimi.nextEdit.accepted"

// copilotInlineEditParams are copilotInlineEdit's params; what else a
// client sends (sidekick.nvim's context: {triggerKind}) is ignored.
type copilotInlineEditParams struct {
	TextDocument struct {
		URI string `json:"uri"`
		// Version is the editor's version of the document; absent: the
		// server's current one.
		Version *int32 `json:"version"`
	} `json:"textDocument"`
	Position *protocol.Position `json:"position"`
}

// copilotInlineEditResult is copilotInlineEdit's answer.
type copilotInlineEditResult struct {
	Edits []copilotInlineEdit `json:"edits"`
}

// copilotInlineEdit is one edit of the answer: text replaces range in the
// document's version; command is run by the editor once it applied it.
type copilotInlineEdit struct {
	Text         string            `json:"text"`
	TextDocument versionedID       `json:"textDocument"`
	Range        protocol.Range    `json:"range"`
	Command      *protocol.Command `json:"command"`
}

// copilotAcceptedReply is kimi.nextEdit.accepted's answer.
type copilotAcceptedReply struct {
	Accepted bool `json:"accepted"`
}

// handleCopilotInlineEdit answers textDocument/copilotInlineEdit. It
// waits for the document's pending next edit at most
// complete.StreamTimeout, like the completion requests, and is cancelled
// by $/cancelRequest (sidekick.nvim cancels when the user types again).
func handleCopilotInlineEdit(s *Server, ctx context.Context, req *request) (any, error) {
	var p copilotInlineEditParams
	if err := decodeParams(methodCopilotInlineEdit, req.params, &p); err != nil {
		return nil, err
	}
	uri, err := workspace.ParseURI(p.TextDocument.URI)
	if err != nil {
		return nil, rpcError(jsonrpc2.InvalidParams, "%s: textDocument.uri: %v", methodCopilotInlineEdit, err)
	}
	if p.Position == nil {
		return nil, rpcError(jsonrpc2.InvalidParams, "%s: missing position", methodCopilotInlineEdit)
	}
	none := copilotInlineEditResult{Edits: []copilotInlineEdit{}}
	snap, ok := req.view.Snapshot(uri)
	if !ok || p.TextDocument.Version != nil && *p.TextDocument.Version != snap.Version {
		return none, nil // not open, or the editor asks about another version
	}
	wait, cancel := context.WithTimeout(ctx, complete.StreamTimeout)
	s.nextEdit.Await(wait, string(uri))
	cancel()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// The document now: an edit during the wait makes the version asked
	// about stale.
	cur, ok := s.docs.Snapshot(uri)
	if !ok || cur.Version != snap.Version {
		return none, nil
	}
	sug := s.nextEditFor(cur)
	if sug == nil {
		return none, nil
	}
	v := cur.Version
	return copilotInlineEditResult{Edits: []copilotInlineEdit{{
		Text:         sug.NewText,
		TextDocument: versionedID{URI: string(uri), Version: &v},
		Range:        s.nextEditRange(cur, sug),
		Command: &protocol.Command{
			Title: "Kimi: next edit accepted", Command: cmdNextEditAccepted,
			Arguments: []any{commandArgs{URI: string(uri), ID: sug.ID}},
		},
	}}}, nil
}

// inlineEditCommand is the command of a Copilot inline edit as the editor
// sends it back (didShowInlineEdit's item, the accept command).
type inlineEditCommand struct {
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments"`
}

// suggestionOf returns the document and suggestion id the command of one
// of our inline edits names; ok is false for another command (a client
// may send other servers' items, or none).
func (c inlineEditCommand) suggestionOf() (uri workspace.URI, id uint64, ok bool) {
	if c.Command != cmdNextEditAccepted || len(c.Arguments) == 0 {
		return "", 0, false
	}
	var args commandArgs
	if json.Unmarshal(c.Arguments[0], &args) != nil {
		return "", 0, false
	}
	uri, err := workspace.ParseURI(args.URI)
	if err != nil || args.ID == 0 {
		return "", 0, false
	}
	return uri, args.ID, true
}

// handleDidShowInlineEdit takes in textDocument/didShowInlineEdit
// {item: {command}}: the editor displayed the suggestion. It runs on the
// read loop and does no I/O.
func handleDidShowInlineEdit(s *Server, _ context.Context, params json.RawMessage) error {
	var p struct {
		Item struct {
			Command *inlineEditCommand `json:"command"`
		} `json:"item"`
	}
	if err := decodeParams(methodDidShowInlineEdit, params, &p); err != nil {
		return err
	}
	if p.Item.Command == nil {
		return nil
	}
	if uri, id, ok := p.Item.Command.suggestionOf(); ok {
		s.nextEdit.Displayed(string(uri), id)
	}
	return nil
}

// nextEditAccepted answers kimi.nextEdit.accepted {uri, id}: the editor
// applied the suggestion (NextEdits.Accepted).
func (s *Server) nextEditAccepted(args commandArgs) any {
	uri, err := workspace.ParseURI(args.URI)
	if err != nil {
		return copilotAcceptedReply{}
	}
	return copilotAcceptedReply{Accepted: s.nextEdit.Accepted(string(uri), args.ID)}
}

// handleExecuteCommandNotification takes in workspace/executeCommand sent
// as a notification (copilot.el sends its accept command so): it runs a
// command of the table marked notification (memory only: it runs on the
// read loop), its answer dropped; any other is logged and ignored, for a
// job's id would have nowhere to go.
func handleExecuteCommandNotification(s *Server, _ context.Context, params json.RawMessage) error {
	var p executeCommandParams
	if err := decodeParams("workspace/executeCommand", params, &p); err != nil {
		return err
	}
	cmd, ok := lookupCommand(p.Command)
	if !ok || !cmd.notification {
		s.log.Debug("command sent as a notification ignored", "command", p.Command)
		return nil
	}
	var args commandArgs
	if len(p.Arguments) > 0 {
		if err := json.Unmarshal(p.Arguments[0], &args); err != nil {
			return rpcError(jsonrpc2.InvalidParams, "%s: the argument must be an object {uri, id}: %v", p.Command, err)
		}
	}
	cmd.answer(s, args)
	return nil
}
