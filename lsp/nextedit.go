package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/complete"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/jobs"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// This file is the LSP face of next-edit suggestions (assist/complete's
// NextEdits): after an edit burst and a pause, the change that comes next
// elsewhere in the file, delivered in every editor through standard LSP:
//
//   - a Hint diagnostic at its range, source "kimi", code "next-edit",
//     message "Kimi: next edit — <summary>" and, on the lines after, the
//     change as a diff ("- " a replaced line, "+ " a new one:
//     nextEditMessage), its data the suggestion (nextEditData) for
//     plugins that show it in place;
//   - code actions there: "Kimi: Apply next edit" (quickfix, preferred,
//     its edit one versioned WorkspaceEdit: one undo step) and "Kimi:
//     Dismiss next edit"; clients without code action literals get the
//     commands kimi.nextEdit.apply (one versioned workspace/applyEdit,
//     landed like a job's edit) and kimi.nextEdit.dismiss;
//   - textDocument/inlineCompletion, when the cursor is on the
//     suggestion's first line: one item with the suggestion's range.
//
// A suggestion counts as accepted when a didChange turns the document
// into its result, whichever way it was applied (the code action's edit,
// the command, the editor's inline completion, or typed by hand).

// Commands of next edits (rows of the command table).
const (
	cmdNextEditApply   = "kimi.nextEdit.apply"
	cmdNextEditDismiss = "kimi.nextEdit.dismiss"
)

// codeNextEdit is the diagnostic code of a next-edit suggestion.
const codeNextEdit = "next-edit"

// nextEditTitlePrefix starts the message of a next-edit diagnostic.
const nextEditTitlePrefix = "Kimi: next edit — "

func newNextEdits(s *Server) *complete.NextEdits {
	return complete.NewNextEdits(complete.NextOptions{
		Config:   s.config,
		Services: s.surfaces,
		Logger:   s.log,
		Changed:  func(key string) { s.diagnosticsChanged(workspace.URI(key)) },
		Busy:     func(key string) bool { return s.lander.Queue.Busy(workspace.URI(key)) },
		Allow:    s.backgroundAllowed,
		// The gate's undo and reload rules and the helper's check (D79).
		Landed: func(key string) []string {
			var texts []string
			for _, e := range s.lander.Queue.History(workspace.URI(key)) {
				texts = append(texts, e.Before, e.After)
			}
			return texts
		},
		SameAsDisk: func(key, text string) bool { return sameAsDisk(workspace.URI(key), text) },
		Check:      s.checkNextEdit,
		Warm:       func(key string) { s.engine.WarmHelper(workspace.URI(key)) },
	})
}

// sameAsDisk reports whether text is uri's file on disk: read only when
// the sizes agree.
func sameAsDisk(uri workspace.URI, text string) bool {
	p, err := uri.Path()
	if err != nil {
		return false
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(text)) {
		return false
	}
	b, err := os.ReadFile(p)
	return err == nil && string(b) == text
}

// checkNextEdit is next edits' Check: the engine's verifier checks the
// suggestion as it checks an edit (assist.Engine.CheckSuggestion, whose
// new errors are Verification.Decide's), where a helper already runs for
// the file and verification is on.
func (s *Server) checkNextEdit(ctx context.Context, key, before, after string) error {
	r, checked := s.engine.CheckSuggestion(ctx, workspace.URI(key), before, after)
	switch {
	case !checked:
		return complete.ErrUnchecked
	case r.NewErrors():
		return fmt.Errorf("%w: %s", complete.ErrBreaks, r.Line())
	}
	return nil
}

// backgroundAllowed is asked before every provider request that the user
// did not ask for (next edits). The budget cap is not decided here: the
// one ledger (provider.Ledger.Background) stops next edits as it stops
// inline completion, and records each request they send.
func (s *Server) backgroundAllowed() bool {
	return true
}

// nextEditEdited hands a document's edit to next edits; the read loop
// calls it after the change is applied, prev being the text before, edits
// the didChange's changes and whole whether it was one ranged change of
// the whole text.
func (s *Server) nextEditEdited(uri workspace.URI, prev *workspace.Snapshot, edits []workspace.Edit, whole bool) {
	snap, ok := s.docs.Snapshot(uri)
	if !ok {
		return
	}
	req := complete.NextRequest{
		Key: string(uri), Path: s.displayPath(uri), Language: snap.LanguageID,
		Doc: snap, Prev: prev, Folders: s.folders, Open: s.docs.All(),
		Changes: edits, Whole: whole,
		// The one secret check, by name and by the file a link resolves
		// to now, for every scheme; asked when the pause ends.
		Eligible: func() bool { return !s.folders.IsSecretURI(uri) },
	}
	if req.Language == "" {
		req.Language = workspace.LanguageOf(string(uri))
	}
	if l := s.folders.List(); len(l) > 0 {
		req.Project = l[0].Name
	}
	s.nextEdit.Edited(req)
}

// nextEditFor returns uri's suggestion when it is placed on snap's
// version.
func (s *Server) nextEditFor(snap *workspace.Snapshot) *complete.NextSuggestion {
	sug := s.nextEdit.Current(string(snap.URI))
	if sug == nil || sug.Version != snap.Version || sug.End > snap.Len() {
		return nil
	}
	return sug
}

// nextEditRange is the range sug replaces in snap, in the session's
// position encoding: what every delivery of a suggestion (its diagnostic,
// inline item, Copilot's inline edit) sends with its text.
func (s *Server) nextEditRange(snap *workspace.Snapshot, sug *complete.NextSuggestion) protocol.Range {
	return toProtocolRange(snap.OffsetRange(sug.Start, sug.End, s.encoding()))
}

// nextEditDiagnostics is the next-edit part of the document's kimi
// diagnostics (nextEditDiagnosticsSource, diagnostics.go).
func (s *Server) nextEditDiagnostics(snap *workspace.Snapshot) []outDiagnostic {
	sug := s.nextEditFor(snap)
	if sug == nil {
		return nil
	}
	r := s.nextEditRange(snap, sug)
	// The summary is the model's text shown as prose: cleaned as a review
	// finding's message is (no bidi or control characters). NewText is
	// code and stays verbatim: it is the edit that was checked and that
	// Apply lands (a character the model wrote in a string or comment is
	// the user's to see and judge in the editor, not ours to drop).
	return []outDiagnostic{{
		Range: r, Severity: severityHint, Code: codeNextEdit, Source: "kimi",
		Message: nextEditMessage(snap.Text(), sug),
		Data:    nextEditData{ID: sug.ID, Version: sug.Version, Range: r, NewText: sug.NewText},
	}}
}

// Bounds of the diff in a next-edit diagnostic's message.
const (
	nextEditPreviewLines = 8   // lines of the diff shown
	nextEditPreviewWidth = 120 // characters of a line shown
)

// nextEditMessage is the message of sug's diagnostic, text being the
// document it is placed on: the summary on the first line, then the
// change as a diff, each line it replaces "- " and each new line "+ ",
// edit by edit (at most nextEditPreviewLines, then how many more). An
// editor that shows only the diagnostic — Helix's inline diagnostics,
// Emacs's Flymake, Neovim or VS Code without the plugin — thus previews
// which lines Apply replaces and with what (D77). The first line is all
// a plugin that draws the suggestion itself shows. Each line is cleaned
// as the summary is (no bidi or control characters) but keeps its
// indentation; the edit itself stays verbatim (nextEditData, the actions).
func nextEditMessage(text string, sug *complete.NextSuggestion) string {
	var b strings.Builder
	b.WriteString(nextEditTitlePrefix + assist.CleanMessage(sug.Summary))
	shown, more := 0, 0
	add := func(sign, s string) {
		if s == "" {
			return
		}
		for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			if shown == nextEditPreviewLines {
				more++
				continue
			}
			l = config.CleanLines(sign + l)
			if utf8.RuneCountInString(l) > nextEditPreviewWidth {
				l = string([]rune(l)[:nextEditPreviewWidth-1]) + "…"
			}
			b.WriteString("\n" + l)
			shown++
		}
	}
	for _, e := range sug.Edits {
		if e.Start < 0 || e.End > len(text) || e.Start > e.End {
			continue
		}
		add("- ", text[e.Start:e.End])
		add("+ ", e.NewText)
	}
	switch {
	case more == 1:
		b.WriteString("\n… 1 more line")
	case more > 1:
		fmt.Fprintf(&b, "\n… %d more lines", more)
	}
	return b.String()
}

// nextEditEdit is the suggestion as one WorkspaceEdit of snap: versioned
// documentChanges where the client supports them.
func (s *Server) nextEditEdit(snap *workspace.Snapshot, sug *complete.NextSuggestion) *workspaceEdit {
	enc := s.encoding()
	tes := make([]protocol.TextEdit, 0, len(sug.Edits))
	for _, e := range sug.Edits {
		tes = append(tes, protocol.TextEdit{Range: toProtocolRange(snap.OffsetRange(e.Start, e.End, enc)), NewText: e.NewText})
	}
	caps := s.clientCaps()
	if caps.Workspace.WorkspaceEdit != nil && caps.Workspace.WorkspaceEdit.DocumentChanges {
		v := snap.Version
		return &workspaceEdit{DocumentChanges: []any{textDocumentEdit{TextDocument: versionedID{URI: string(snap.URI), Version: &v}, Edits: tes}}}
	}
	return &workspaceEdit{Changes: map[string][]protocol.TextEdit{string(snap.URI): tes}}
}

// nextEditActions returns the code actions of snap's suggestion when the
// range rng (of a code action request) is on its lines.
func (s *Server) nextEditActions(snap *workspace.Snapshot, rng protocol.Range) []codeAction {
	sug := s.nextEditFor(snap)
	if sug == nil {
		return nil
	}
	enc := s.encoding()
	r := snap.OffsetRange(sug.Start, sug.End, enc)
	last := r.End.Line
	if r.End.Character == 0 && r.End.Line > r.Start.Line {
		last-- // the range ends at the start of the line after its last
	}
	if rng.End.Line < r.Start.Line || rng.Start.Line > last {
		return nil
	}
	args := commandArgs{URI: string(snap.URI), ID: sug.ID}
	// Cleaned as the diagnostic's message; the edit stays verbatim
	// (nextEditDiagnostics).
	title := "Kimi: Apply next edit — " + assist.CleanMessage(sug.Summary)
	apply := codeAction{Title: title, Kind: "quickfix", IsPreferred: true}
	if caps := s.clientCaps(); caps.TextDocument.CodeAction == nil || caps.TextDocument.CodeAction.CodeActionLiteralSupport == nil {
		// A client of plain Commands: the command sends the edit.
		apply.Command = &protocol.Command{Title: title, Command: cmdNextEditApply, Arguments: []any{args}}
	} else {
		// The editor applies the edit itself; its didChange accepts it.
		apply.Edit = s.nextEditEdit(snap, sug)
	}
	return []codeAction{
		apply,
		{
			Title: "Kimi: Dismiss next edit", Kind: "quickfix",
			Command: &protocol.Command{Title: "Kimi: Dismiss next edit", Command: cmdNextEditDismiss, Arguments: []any{args}},
		},
	}
}

// nextEditApply answers kimi.nextEdit.apply: the suggestion goes out as
// one versioned workspace/applyEdit, landed like a job's edit (one edit at
// a time per document, never against a stale version). It answers at once;
// a suggestion already applied (the code action's edit ran first, and its
// didChange accepted it) or gone is no error: applied is false.
func (s *Server) nextEditApply(args commandArgs) any {
	uri, err := workspace.ParseURI(args.URI)
	if err != nil {
		return nextEditReply{}
	}
	snap, ok := s.docs.Snapshot(uri)
	if !ok {
		return nextEditReply{}
	}
	sug := s.nextEditFor(snap)
	if sug == nil || args.ID != 0 && sug.ID != args.ID {
		return nextEditReply{}
	}
	path, err := uri.Path()
	if err != nil {
		// Not a file (untitled:): the code action's own edit applies it.
		return nextEditReply{}
	}
	before := snap.Text()
	after := before[:sug.Start] + sug.NewText + before[sug.End:]
	edit := assist.DocumentEdit(path, before, after, snap.Version)
	// A job of the engine, as a Fix's edit lands: the engine owns its
	// goroutine (its Close waits for it) and recovers a panic in it, which
	// fails this edit alone. The zero key supersedes nothing: two applies
	// land one after the other, as the edit queue orders them.
	_, err = s.jobs.Start(s.life.context(), jobs.Spec{
		Title:   nextEditJobTitle,
		OnPanic: func(error) { s.nextEditPanicked() },
	}, func(ctx context.Context, j *jobs.Job) {
		s.hook("nextEdit.apply", j)
		if _, _, err := s.applyChanges(ctx, nextEditJobTitle, edit, nil); err != nil {
			s.log.Info("next edit not applied", "path", s.displayPath(uri), "error", s.redact(err.Error()))
		}
	})
	if err != nil { // the engine is closed: the session is ending
		s.log.Debug("next edit not applied", "path", s.displayPath(uri), "error", err)
		return nextEditReply{}
	}
	return nextEditReply{Applied: true}
}

// nextEditJobTitle is the title of the job that lands a next edit
// (kimi.stats lists it while it lands) and the label of its edit.
const nextEditJobTitle = "Kimi: next edit"

// nextEditPanicked reports a next edit whose job panicked (the engine
// logged the panic and its stack): that edit is not applied.
func (s *Server) nextEditPanicked() {
	s.showMessage(s.life.context(), protocol.MessageTypeError, "kimi-lsp: "+nextEditJobTitle+": "+internalErrorOutcome)
}

// nextEditDismiss answers kimi.nextEdit.dismiss.
func (s *Server) nextEditDismiss(args commandArgs) any {
	uri, err := workspace.ParseURI(args.URI)
	if err != nil {
		return nextEditReply{}
	}
	return nextEditReply{Dismissed: s.nextEdit.Dismiss(string(uri), args.ID)}
}

// nextEditInline returns the inline completion item of the suggestion when
// pos is on its first line, or nil.
func (s *Server) nextEditInline(view docView, uriStr string, pos protocol.Position) *inlineCompletionItem {
	uri, err := workspace.ParseURI(uriStr)
	if err != nil {
		return nil
	}
	snap, ok := view.Snapshot(uri)
	if !ok {
		return nil
	}
	sug := s.nextEditFor(snap)
	if sug == nil {
		return nil
	}
	r := s.nextEditRange(snap, sug)
	if pos.Line != r.Start.Line {
		return nil
	}
	return &inlineCompletionItem{InsertText: sug.NewText, Range: &r}
}

// nextEditReply is the answer of the kimi.nextEdit.* commands.
type nextEditReply struct {
	Applied   bool `json:"applied,omitempty"`
	Dismissed bool `json:"dismissed,omitempty"`
}

// isNextEditDiagnostic reports whether a diagnostic of a code action
// request is a next-edit suggestion (offered by nextEditActions, never as
// a plain Fix).
func isNextEditDiagnostic(raw json.RawMessage) bool {
	var d struct {
		Source string          `json:"source"`
		Code   json.RawMessage `json:"code"`
	}
	return json.Unmarshal(raw, &d) == nil && d.Source == "kimi" && string(d.Code) == `"`+codeNextEdit+`"`
}
