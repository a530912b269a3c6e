package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist/complete"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// This file is inline completion: textDocument/inlineCompletion (LSP 3.18)
// for clients that declare it, textDocument/completion items for those that
// do not (Helix, eglot, Kakoune), both answered by assist/complete. Unlike
// every other request, a completion waits for the model: that is its
// answer. It runs in its own goroutine like every request, is cancelled by
// $/cancelRequest (which hangs the provider stream up unless a newer request
// on the document waits for the same stream), and gives up after
// complete.StreamTimeout.

// Methods and notifications of completion.
const (
	methodInlineCompletion = "textDocument/inlineCompletion"
	methodCompletion       = "textDocument/completion"
	// notifyCompletionStatus tells clients that opted in (experimental
	// kimiCompletionStatus) what completion is doing: "ok", "error" (with
	// a message) or "noKey". It starts with $/ so that any other client
	// may ignore it.
	notifyCompletionStatus = "$/kimi/completionStatus"
)

// completionRegistration is the id of completionProvider's dynamic
// registration.
const completionRegistration = "kimi-completion"

// completionTriggers are the characters after which clients without inline
// completion ask at once (they also ask as an identifier is typed).
var completionTriggers = []string{".", "("}

// completionState is the server's completion machinery and what it told
// the user.
type completionState struct {
	completer *complete.Completer

	// mu guards the fields below.
	mu         sync.Mutex
	told       map[string]bool      // one-time messages already shown
	status     string               // last status sent ("" before any)
	logged     map[string]time.Time // when each failure was last logged
	static     bool                 // completionProvider advertised at initialize
	registered bool                 // completionProvider registered dynamically
	// kinds is how the client numbers trigger kinds: 0 until known,
	// kindsProposed or kindsFinal.
	kinds int
}

// Trigger kind numberings: LSP 3.18 has Invoked 1, Automatic 2; its
// 3.17 proposal, which vscode-languageclient 9 sends, had Invoked 0,
// Automatic 1.
const (
	kindsProposed = 1
	kindsFinal    = 2
)

// trigger maps a client's triggerKind. A 0 shows the proposal's numbering,
// a 2 the final one; until one is seen, 1 counts as Automatic, the safe
// reading (an explicit request waits for the debounce; as-you-type requests
// never skip it).
func (cs *completionState) trigger(kind int) complete.Trigger {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	switch kind {
	case 0:
		cs.kinds = kindsProposed
		return complete.Invoked
	case 2:
		cs.kinds = kindsFinal
		return complete.Automatic
	case 1:
		if cs.kinds == kindsFinal {
			return complete.Invoked
		}
	}
	return complete.Automatic
}

func newCompletionState(s *Server) *completionState {
	return &completionState{
		completer: complete.New(complete.Options{Config: s.config, Services: s.surfaces, Logger: s.log}),
		told:      map[string]bool{},
		logged:    map[string]time.Time{},
	}
}

// wantsItems reports whether textDocument/completion items are offered:
// completion.items "always", or "auto" for a client without inline
// completion.
func wantsItems(cfg config.Config, caps clientCapabilities) bool {
	switch cfg.Completion.Items {
	case config.ItemsAlways:
		return true
	case config.ItemsNever:
		return false
	}
	return caps.TextDocument.InlineCompletion == nil
}

// completionCapabilities adds inlineCompletionProvider for a client that
// declares textDocument.inlineCompletion, and completionProvider when
// completion.items wants items for this client.
func (s *Server) completionCapabilities(sc *serverCapabilities, caps clientCapabilities, cfg config.Config) {
	sc.InlineCompletionProvider = caps.TextDocument.InlineCompletion != nil
	if wantsItems(cfg, caps) {
		sc.CompletionProvider = &completionOptions{TriggerCharacters: completionTriggers}
		s.completion.mu.Lock()
		s.completion.static = true
		s.completion.mu.Unlock()
	}
}

// completionConfigChanged registers completionProvider with a client that
// allows dynamic registration when completion.items comes to want items
// after initialize, and unregisters what it registered when it no longer
// does. (Statically advertised items are answered with nothing instead.)
func (s *Server) completionConfigChanged(cfg config.Config) {
	if s.completion == nil || s.life.state() != stateInitialized {
		return
	}
	caps := s.clientCaps()
	if caps.TextDocument.Completion == nil || !caps.TextDocument.Completion.DynamicRegistration {
		return
	}
	cs := s.completion
	cs.mu.Lock()
	want := wantsItems(cfg, caps) && !cs.static
	change := want != cs.registered
	cs.registered = want
	cs.mu.Unlock()
	if !change {
		return
	}
	s.spawn("change the completion registration", func() {
		ctx := s.life.context() // the request ends with the session (call bounds it)
		var err error
		if want {
			err = s.call(ctx, "client/registerCapability", &protocol.RegistrationParams{Registrations: []protocol.Registration{{
				ID: completionRegistration, Method: methodCompletion,
				// A null documentSelector: the client's own, every document.
				RegisterOptions: &protocol.CompletionRegistrationOptions{TriggerCharacters: completionTriggers},
			}}}, nil)
		} else {
			err = s.call(ctx, "client/unregisterCapability", &protocol.UnregistrationParams{Unregisterations: []protocol.Unregistration{{
				ID: completionRegistration, Method: methodCompletion,
			}}}, nil)
		}
		if err != nil {
			s.log.Warn("completion items: could not change the registration", "error", err)
		}
	})
}

// handleInlineCompletion answers textDocument/inlineCompletion with at most
// one item: the suggestion, replacing what the user typed of it.
func handleInlineCompletion(s *Server, ctx context.Context, req *request) (any, error) {
	var p inlineCompletionParams
	if err := decodeParams(methodInlineCompletion, req.params, &p); err != nil {
		return nil, err
	}
	out := &inlineCompletionList{Items: []inlineCompletionItem{}}
	if p.Context.SelectedCompletionInfo != nil {
		// The editor's suggest widget has an item selected: an inline
		// suggestion would have to extend it. Stay quiet until it closes.
		return out, nil
	}
	if item := s.nextEditInline(req.view, p.TextDocument.URI, p.Position); item != nil {
		// The cursor is on the first line of a next-edit suggestion: it is
		// the answer, with no provider request.
		out.Items = append(out.Items, *item)
		return out, nil
	}
	snap, cursor, sug := s.suggest(ctx, req.view, p.TextDocument.URI, p.Position, s.completion.trigger(p.Context.TriggerKind))
	if sug == nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return out, nil
	}
	r := toProtocolRange(snap.OffsetRange(sug.Start, cursor, s.encoding()))
	out.Items = append(out.Items, inlineCompletionItem{InsertText: sug.Text, Range: &r})
	return out, nil
}

// handleCompletion answers textDocument/completion with the suggestion as
// one item, always isIncomplete so that the editor asks again as the user
// types (type-ahead answers those without a provider request). The item's
// textEdit replaces the identifier before the cursor (what the editor
// filters items by) with itself followed by the suggestion, so that it
// inserts exactly the suggestion.
func handleCompletion(s *Server, ctx context.Context, req *request) (any, error) {
	var p completionParams
	if err := decodeParams(methodCompletion, req.params, &p); err != nil {
		return nil, err
	}
	out := &completionList{IsIncomplete: true, Items: []completionItem{}}
	if !wantsItems(s.config(), s.clientCaps()) {
		return out, nil
	}
	snap, cursor, sug := s.suggest(ctx, req.view, p.TextDocument.URI, p.Position, complete.Automatic)
	if sug == nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return out, nil
	}
	lineStart := snap.LineStart(int(snap.OffsetPosition(cursor, workspace.UTF8).Line))
	start := min(wordStart(snap.Slice(lineStart, cursor))+lineStart, max(sug.Start, lineStart))
	text := snap.Slice(start, cursor) + sug.Insert
	label := firstLine(text)
	// Markdown and labelDetails only for a client that declared them
	// (eglot 1.9 declares neither and shows the raw fence).
	item := s.clientCaps().TextDocument.Completion.item()
	var doc any = text
	if slices.Contains(item.DocumentationFormat, "markdown") {
		doc = &markupContent{Kind: "markdown", Value: codeBlock(snap.LanguageID, text)}
	}
	var details *completionLabelDetail
	if item.LabelDetailsSupport {
		details = &completionLabelDetail{Description: "Kimi"}
	}
	out.Items = append(out.Items, completionItem{
		Label:            label,
		LabelDetails:     details,
		Kind:             completionKindText,
		Detail:           "Kimi suggestion",
		Documentation:    doc,
		FilterText:       strings.TrimLeft(strings.SplitN(text, "\n", 2)[0], " \t"),
		SortText:         "~kimi", // after the language server's items when scores tie
		InsertTextFormat: insertTextPlain,
		TextEdit: protocol.TextEdit{
			Range:   toProtocolRange(snap.OffsetRange(start, cursor, s.encoding())),
			NewText: text,
		},
	})
	return out, nil
}

// wordStart returns the offset in line where the identifier ending at its
// end starts.
func wordStart(line string) int {
	i := len(line)
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(line[:i])
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		i -= n
	}
	return i
}

// firstLine returns the first non-blank line of text, trimmed and
// shortened for a completion menu.
func firstLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if utf8.RuneCountInString(l) > 80 {
				l = string([]rune(l)[:79]) + "…"
			}
			return l
		}
	}
	return "…"
}

// suggest runs a completion request for the document uri of view at pos
// (view is the documents as the request found them) and returns
// the snapshot, the cursor offset and the suggestion, or a nil suggestion
// when there is none: completion is off, the document is not open, is a
// secrets file or is larger than context.maxFileSize, a newer request
// superseded this one, or it failed (the failure goes to the log and the
// status, never to a popup; a missing or refused key is told once).
func (s *Server) suggest(ctx context.Context, view docView, uriStr string, pos protocol.Position, trigger complete.Trigger) (*workspace.Snapshot, int, *complete.Suggestion) {
	cfg := s.config()
	if !cfg.Completion.Enable {
		return nil, 0, nil
	}
	uri, err := workspace.ParseURI(uriStr)
	if err != nil {
		return nil, 0, nil
	}
	snap, ok := view.Snapshot(uri)
	if !ok || int64(snap.Len()) > cfg.Context.MaxFileSize {
		return nil, 0, nil
	}
	// The one secret check, by name and by the file a link resolves to now
	// (not isSecretURI's memo: a link retargeted at .env and reloaded by
	// the editor must get nothing).
	if s.folders.IsSecretURI(uri) {
		return nil, 0, nil
	}
	cursor := snap.PositionOffset(workspace.Position{Line: pos.Line, Character: pos.Character}, s.encoding())
	req := complete.Request{
		Key: string(uri), Path: s.displayPath(uri), Language: snap.LanguageID,
		Doc: snap, Offset: cursor, Trigger: trigger, Order: view.seq,
		Folders: s.folders, Open: view.All(),
	}
	if req.Language == "" {
		req.Language = workspace.LanguageOf(string(uri))
	}
	if l := s.folders.List(); len(l) > 0 {
		req.Project = l[0].Name
	}
	sug, err := s.completion.completer.Complete(ctx, req)
	s.log.Debug("completion", "path", req.Path, "offset", cursor, "version", snap.Version, "suggestion", sug != nil,
		"reused", sug != nil && sug.Reused, "error", err)
	if err != nil {
		s.completionFailed(ctx, err)
		return nil, 0, nil
	}
	s.completionStatus(ctx, "ok", "")
	return snap, cursor, sug
}

// logEvery is how often the same completion failure is logged.
const logEvery = time.Minute

// completionFailed reports a failed completion: a missing or refused key
// once with window/showMessage, everything to the log (the same failure at
// most once a minute) and to the status.
func (s *Server) completionFailed(ctx context.Context, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return
	}
	msg := s.redact(err.Error())
	switch {
	case errors.Is(err, config.ErrNoAPIKey):
		s.completionTell(ctx, "noKey", "kimi-lsp: inline completion needs an API key: set KIMI_API_KEY, kimi.apiKey in your editor settings or apiKey in ~/.config/kimi-lsp/config.toml (or turn it off with completion.enable = false).")
		s.completionStatus(ctx, "noKey", msg)
		return
	case errors.Is(err, complete.ErrKeyRefused):
		s.completionTell(ctx, "badKey:"+msg, "kimi-lsp: inline completion stopped: "+msg)
	}
	cs := s.completion
	key := msg
	if i := strings.IndexAny(key, "(:"); i > 0 {
		key = key[:i]
	}
	cs.mu.Lock()
	quiet := time.Since(cs.logged[key]) < logEvery
	if !quiet {
		cs.logged[key] = time.Now()
	}
	cs.mu.Unlock()
	if errors.Is(err, provider.ErrBudget) {
		// The ledger told the user once (OnNotice); the status says it on.
		s.log.Debug("completion stopped", "error", msg)
		s.completionStatus(ctx, "budget", msg)
		return
	}
	if errors.Is(err, complete.ErrPaused) || quiet {
		s.log.Debug("completion failed", "error", msg)
	} else {
		s.log.Warn("completion failed", "error", msg)
	}
	s.completionStatus(ctx, "error", msg)
}

// completionTell shows msg once per session for key.
func (s *Server) completionTell(ctx context.Context, key, msg string) {
	cs := s.completion
	cs.mu.Lock()
	told := cs.told[key]
	cs.told[key] = true
	cs.mu.Unlock()
	if !told {
		s.notify(ctx, "window/showMessage", &protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: msg})
	}
}

// completionStatus sends the status to a client that opted in, when it
// changed.
func (s *Server) completionStatus(ctx context.Context, state, msg string) {
	var exp experimentalCaps
	if raw := s.clientCaps().Experimental; len(raw) == 0 || json.Unmarshal(raw, &exp) != nil || !exp.KimiCompletionStatus {
		return
	}
	cs := s.completion
	cs.mu.Lock()
	now := state + "\x00" + msg
	changed := cs.status != now
	cs.status = now
	cs.mu.Unlock()
	if changed {
		s.notify(ctx, notifyCompletionStatus, map[string]string{"state": state, "message": msg})
	}
}

// codeBlock is text as a Markdown code block in language lang: its fence
// is longer than any run of backticks in text (a suggestion holding a
// fence of its own, a Markdown file's, would close a shorter one), and the
// info string names the language where it is a plain identifier.
func codeBlock(lang, text string) string {
	run, longest := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	if strings.ContainsFunc(lang, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '+')
	}) {
		lang = ""
	}
	return fence + lang + "\n" + text + "\n" + fence
}
