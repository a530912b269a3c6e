package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// maxFixTitles bounds the per-diagnostic Fix actions; more diagnostics get
// one "fix all" action only.
const maxFixTitles = 3

// handleCodeAction lists our actions for a range. It never touches the
// network or the disk: it reads the configuration and the request, and,
// when the request carries no diagnostics, asks the helper language
// server for its own under the range (at most helperDiagnosticsWait).
func handleCodeAction(s *Server, ctx context.Context, req *request) (any, error) {
	var p codeActionParams
	if err := decodeParams("textDocument/codeAction", req.params, &p); err != nil {
		return nil, err
	}
	uri, err := workspace.ParseURI(p.TextDocument.URI)
	if err != nil {
		return nil, rpcError(-32602, "textDocument/codeAction: %v", err)
	}
	snap, ok := req.view.Snapshot(uri)
	if !ok {
		return []any{}, nil
	}
	if s.isSecretURI(uri) {
		// No action may send this file to the provider; say why once.
		s.noteSecret(ctx, uri)
		return []any{}, nil
	}
	rng := p.Range
	// A range of one character or none is a cursor: Helix always selects
	// the character under its cursor, and a generic Fix of one character
	// is no choice anyone makes.
	selection := !isCursor(rng)
	// Eglot without a region sends the expression at point (or point
	// itself), which is no choice of code to review or fix: there, Review
	// and Fix act on the whole buffer (D98).
	wholeFile := s.isEglot() && rng.Start.Line == rng.End.Line
	if wholeFile {
		selection = false // a lightbulb request there is one at a cursor (D57)
	}
	// The review's findings have their own quick fixes (reviewActions).
	findings := s.reviewActions(uri, snap, rng)
	diags := distinctDiagnostics(p.Context.Diagnostics)
	p.Context.Diagnostics = diags
	// A next-edit suggestion on these lines comes first, whoever asks: it
	// is a fix of this very place.
	next := s.nextEditActions(snap, rng)
	if !selection && len(p.Context.Diagnostics) == 0 && len(findings) == 0 && len(next) == 0 && !s.invokedByUser(p.Context.TriggerKind, p.Context.Only) {
		// A client asking on its own at a bare cursor (to light a bulb):
		// nothing of ours applies there more than anywhere else.
		return []any{}, nil
	}
	if len(diags) == 0 && wantsFix(p.Context.Only) {
		// The editor sent none (Neovim sends a server only its own, eglot
		// none at all): the helper language server's, if it answers soon.
		diags = distinctDiagnostics(s.helperDiagnostics(ctx, snap, rng))
	}
	cfg := s.config()
	base := commandArgs{URI: string(uri), Range: &rng}
	actions := append(next, findings...)
	for _, a := range cfg.Actions() {
		cmd, kind := actionCommand(a)
		switch a.Name {
		case config.ActionFix:
			switch {
			case len(diags) == 0 && wholeFile:
				actions = append(actions, fixFileAction(cmd, kind, uri, snap, s.encoding()))
			case selection || len(diags) > 0:
				actions = append(actions, fixActions(cmd, kind, base, diags)...)
			}
		default:
			args := base
			if cmd == cmdAction {
				args.Name = a.Name
			}
			actions = append(actions, codeAction{
				Title:   a.Title,
				Kind:    kind,
				Command: &protocol.Command{Title: a.Title, Command: cmd, Arguments: []any{args}},
			})
		}
	}
	if wholeFile {
		actions = append(actions, reviewAction(uri, protocol.Range{Start: rng.Start, End: rng.Start}))
	} else {
		actions = append(actions, reviewAction(uri, rng))
	}
	actions = filterOnly(actions, p.Context.Only)
	caps := s.clientCaps()
	if caps.TextDocument.CodeAction == nil || caps.TextDocument.CodeAction.CodeActionLiteralSupport == nil {
		// Clients without literals get plain Commands.
		cmds := make([]*protocol.Command, len(actions))
		for i, a := range actions {
			cmds[i] = a.Command
		}
		return cmds, nil
	}
	if !caps.TextDocument.CodeAction.IsPreferredSupport {
		for i := range actions {
			actions[i].IsPreferred = false
		}
	}
	return actions, nil
}

// helperDiagnosticsWait bounds a code action request's wait for the
// helper language server's diagnostics: a warm helper answers in tens of
// milliseconds (bench/README.md); a helper still starting is left to
// start, and the request answers without them.
const helperDiagnosticsWait = 2 * time.Second

// helperDiagnostics returns the helper's errors and warnings under rng of
// snap, as LSP diagnostics of the client's position encoding; nil when
// verification is off, the language has no helper, or it does not
// answer within helperDiagnosticsWait.
func (s *Server) helperDiagnostics(ctx context.Context, snap *workspace.Snapshot, rng protocol.Range) []json.RawMessage {
	enc := s.encoding()
	start, end := snap.RangeOffsets(fromProtocolRange(rng), enc)
	ctx, cancel := context.WithTimeout(ctx, helperDiagnosticsWait)
	defer cancel()
	found, res := s.engine.HelperDiagnostics(ctx, snap.URI, snap.Text(), start, end)
	if !res.Verified && !res.None {
		s.log.Debug("no helper diagnostics for Fix", "uri", snap.URI, "reason", res.Reason)
	}
	var out []json.RawMessage
	for _, d := range found {
		if d.Severity > cache.SeverityWarning {
			continue
		}
		b, err := json.Marshal(diagnostic{
			diagnosticHead: diagnosticHead{Severity: int(d.Severity), Message: d.Message},
			Range:          toProtocolRange(snap.OffsetRange(d.Start, d.End, enc)),
			Source:         d.Source,
		})
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}

// wantsFix reports whether a code action request's only filter admits
// Fix's kind (quickfix).
func wantsFix(only []string) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if o == "" || o == "quickfix" || strings.HasPrefix("quickfix", o+".") {
			return true
		}
	}
	return false
}

// invokedByUser reports whether a code action request comes from the user
// opening the menu, rather than from the client asking on its own (for a
// lightbulb, VS Code's and lsp-mode's): triggerKind 1. A request without
// triggerKind (clients before LSP 3.17) counts as the user's when it names
// the kinds it wants (only: eglot's eglot-code-action-rewrite), comes
// from Neovim before 0.8, whose code action requests are all the user's
// (vim.lsp.buf.code_action(); 0.8 and later send triggerKind), or comes
// from eglot, whose M-x eglot-code-actions never sends one (its automatic
// requests, eglot-code-action-indications since 1.17, send triggerKind 2).
func (s *Server) invokedByUser(triggerKind int, only []string) bool {
	switch triggerKind {
	case triggerInvoked:
		return true
	case triggerAutomatic:
		return false
	}
	if len(only) > 0 {
		return true
	}
	client := s.client.client()
	switch client.Name {
	case "Neovim":
		return versionBefore(client.Version, 0, 8)
	}
	return s.isEglot()
}

// isEglot reports whether the client is eglot: it names itself "Eglot",
// or, as eglot 1.9 (Debian 12's) does, sends no clientInfo and marks its
// capabilities with an empty "experimental" object.
func (s *Server) isEglot() bool {
	switch s.client.client().Name {
	case "Eglot":
		return true
	case "":
		var mark map[string]json.RawMessage
		return json.Unmarshal(s.clientCaps().Experimental, &mark) == nil && mark != nil && len(mark) == 0
	}
	return false
}

// versionBefore reports whether a "major.minor[.patch]" version (a leading
// "v" allowed) is before major.minor; false when it cannot be read.
func versionBefore(version string, major, minor int) bool {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma < major || ma == major && mi < minor
}

// isCursor reports whether rng is a cursor: empty, or one character of one
// line (what Helix sends at its cursor).
func isCursor(rng protocol.Range) bool {
	return rng.Start == rng.End || rng.Start.Line == rng.End.Line && rng.End.Character == rng.Start.Character+1
}

// distinctDiagnostics drops, from a code action request's diagnostics, our
// own (the findings and the next edit have their own actions) and the
// repeats of one problem: the same message on the same range, which an
// editor may send twice (two sources of one server, two servers), would
// give two identical Fix entries and a "fix all 2" for one problem.
func distinctDiagnostics(in []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	seen := map[string]bool{}
	for _, d := range in {
		if isReviewDiagnostic(d) || isNextEditDiagnostic(d) {
			continue
		}
		var h struct {
			Range   protocol.Range `json:"range"`
			Message string         `json:"message"`
		}
		_ = json.Unmarshal(d, &h)
		key := fmt.Sprintf("%d:%d-%d:%d %s", h.Range.Start.Line, h.Range.Start.Character, h.Range.End.Line, h.Range.End.Character, strings.TrimSpace(h.Message))
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, d)
	}
	return out
}

// fixActions offers Fix for the diagnostics of the request's context: one
// action per diagnostic (titled with its message) up to maxFixTitles, and
// one for all of them when there are several. Without diagnostics (the
// caller offers Fix then only for a selection), a plain Fix asks the model
// to find and fix the problem in the range. The single
// Fix of a lone error is preferred: it is the obvious choice in the menu.
func fixActions(cmd, kind string, base commandArgs, diags []json.RawMessage) []codeAction {
	mk := func(title string, ds []json.RawMessage, preferred bool) codeAction {
		args := base
		args.Diagnostics = ds
		return codeAction{
			Title:       title,
			Kind:        kind,
			Diagnostics: ds,
			IsPreferred: preferred,
			Command:     &protocol.Command{Title: title, Command: cmd, Arguments: []any{args}},
		}
	}
	if len(diags) == 0 {
		return []codeAction{mk("Kimi: Fix", nil, false)}
	}
	var out []codeAction
	if len(diags) <= maxFixTitles {
		for _, d := range diags {
			msg, sev := diagnosticSummary(d)
			out = append(out, mk("Kimi: Fix “"+msg+"”", []json.RawMessage{d}, len(diags) == 1 && sev == 1))
		}
	}
	if len(diags) > 1 {
		out = append(out, mk(fmt.Sprintf("Kimi: Fix all %d problems here", len(diags)), diags, false))
	}
	return out
}

// fixFileAction is Kimi: Fix File, a Fix of the whole of snap (no
// diagnostics): what eglot gets at point, where it sends no region.
func fixFileAction(cmd, kind string, uri workspace.URI, snap *workspace.Snapshot, enc workspace.Encoding) codeAction {
	whole := protocol.Range{End: toProtocolRange(workspace.Range{End: snap.OffsetPosition(snap.Len(), enc)}).End}
	title := "Kimi: Fix File"
	return codeAction{
		Title:   title,
		Kind:    kind,
		Command: &protocol.Command{Title: title, Command: cmd, Arguments: []any{commandArgs{URI: string(uri), Range: &whole}}},
	}
}

// diagnosticSummary returns a diagnostic's first message line, shortened
// for a menu title, and its severity (0 if absent).
func diagnosticSummary(raw json.RawMessage) (string, int) {
	var d diagnosticHead
	_ = json.Unmarshal(raw, &d)
	msg, _, _ := strings.Cut(strings.TrimSpace(d.Message), "\n")
	if utf8.RuneCountInString(msg) > 60 {
		msg = string([]rune(msg)[:59]) + "…"
	}
	if msg == "" {
		msg = "problem"
	}
	return msg, d.Severity
}

// filterOnly keeps the actions whose kind matches one of only: equal to it
// or below it in the kind hierarchy ("refactor" matches
// "refactor.rewrite"). An empty only keeps everything.
func filterOnly(actions []codeAction, only []string) []codeAction {
	if len(only) == 0 {
		return actions
	}
	out := actions[:0:0]
	for _, a := range actions {
		for _, o := range only {
			if o == "" || a.Kind == o || strings.HasPrefix(a.Kind, o+".") {
				out = append(out, a)
				break
			}
		}
	}
	return out
}
