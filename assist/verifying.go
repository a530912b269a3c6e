package assist

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/verify"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/watch"
)

// Verification is what the helper language server said of an edit
// (assist/verify): Outcome.Verification.
type Verification struct {
	// Result is the last check, of the edit as it lands.
	Result verify.Result
	// Repaired is set when the first check found new errors and the
	// model was asked once to repair them; First is that check.
	Repaired bool
	First    verify.Result
	// Restated is set when the repair was the whole change written again
	// against the original text, which replaced the first edit of its
	// files (patch.EditSet.ApplyDiffToOriginal).
	Restated bool
}

// NewErrors reports whether the edit, as it lands, brings errors: the
// errors a helper found count also when another helper could not check
// its files.
func (v *Verification) NewErrors() bool {
	return v != nil && len(v.Result.NewErrors) > 0
}

// Line is the verification in a few words for the end of a job: "verified
// by gopls: no new errors", "verified by gopls: 1 new error after repair:
// undefined: x", "not verified (no gopls found)", or "" when no file of
// the edit has a helper. A restricted check says so as Result.By does; a
// restated repair says "after repair (the repair restated the whole
// change)".
func (v *Verification) Line() string {
	if v == nil || v.Result.None {
		return ""
	}
	r := v.Result
	if !r.Verified && len(r.Helpers) == 0 {
		return r.Line()
	}
	by := r.By()
	after := " after repair"
	if v.Restated {
		after += " (the repair restated the whole change)"
	}
	switch {
	case len(r.NewErrors) == 0 && v.Repaired:
		return by + "no new errors" + after + r.Unverified()
	case len(r.NewErrors) == 0:
		return by + "no new errors" + r.Unverified()
	case v.Repaired:
		n, noun := len(r.NewErrors), "new errors"
		if n == 1 {
			noun = "new error"
		}
		return by + strings.Replace(r.ErrorSummary(), noun, noun+after, 1) + r.Unverified()
	}
	return by + r.ErrorSummary() + r.Unverified()
}

// Verdict is what becomes of an edit after its verification and the repair
// round (Verification.Decide).
type Verdict struct {
	// Land is set when the edit is applied (written).
	Land bool
	// Line is the verification line with the choice made ("verified by
	// gopls: 1 new error: undefined: x (kept by your choice)"); "" when
	// no file of the edit has a helper.
	Line string
	// Failed is set when the setting refused the edit (the job fails).
	Failed bool
	// AskErr is why the surface could not ask (it answered with an
	// error, or not in time), when it could not; no one chose then.
	AskErr error
}

// Decide is the one new-errors policy: it applies onNewErrors
// (verify.onNewErrors) to an edit as verified — the repair round of
// "repair" has already run in the engine. An edit without new errors
// lands; "apply" lands it anyway and "refuse" does not (Failed); "repair"
// and "ask" ask the user with ask, whose true lands it. A surface that
// never asks passes a nil ask (the command line): the edit does not land.
// An error of ask while ctx lasts means the surface could not ask
// (AskErr); the edit does not land.
func (v *Verification) Decide(ctx context.Context, onNewErrors string, ask func(context.Context) (bool, error)) Verdict {
	line := v.Line()
	if !v.NewErrors() {
		return Verdict{Land: true, Line: line}
	}
	switch onNewErrors {
	case config.OnNewErrorsApply:
		return Verdict{Land: true, Line: line + " (applied: verify.onNewErrors = apply)"}
	case config.OnNewErrorsRefuse:
		return Verdict{Line: line + " (verify.onNewErrors = refuse)", Failed: true}
	}
	if ask == nil {
		return Verdict{Line: line + " (no one to ask; verify.onNewErrors = \"apply\" applies such edits)"}
	}
	apply, err := ask(ctx)
	switch {
	case apply:
		return Verdict{Land: true, Line: line + " (kept by your choice)"}
	case err != nil && ctx.Err() == nil:
		return Verdict{Line: line + " (the editor could not ask whether to apply it; verify.onNewErrors = \"apply\" applies such edits)", AskErr: err}
	}
	return Verdict{Line: line + " (discarded by your choice)"}
}

// VerifyFiles turns an edit's changes into the texts a check compares:
// each file before and after (a created file has no before, a deleted one
// no after, a rename both, under their two names).
func VerifyFiles(changes []patch.FileChange) (before, after []verify.File) {
	for _, c := range changes {
		uri := workspace.FileURI(c.Path)
		switch c.Kind {
		case patch.ModifyFile:
			before = append(before, verify.File{URI: uri, Text: c.Before})
			after = append(after, verify.File{URI: uri, Text: c.After})
		case patch.CreateFile:
			after = append(after, verify.File{URI: uri, Text: c.After})
		case patch.DeleteFile:
			before = append(before, verify.File{URI: uri, Text: c.Before})
		case patch.RenameFile:
			before = append(before, verify.File{URI: workspace.FileURI(c.OldPath), Text: c.Before})
			after = append(after, verify.File{URI: uri, Text: c.After})
		}
	}
	return before, after
}

// repairPrompt is the message that asks the model to repair the errors
// its edit brought; it quotes the helper's messages, as a prompt quotes
// diagnostics: at most MaxDiagnostics of them, each cut at
// maxDiagnosticBytes (a renamed type can bring hundreds, and a type
// checker's message can be kilobytes long).
func repairPrompt(r verify.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your edit is applied in the edit set, but %s reports %s it brings:\n", strings.Join(r.Helpers, ", "), plural(len(r.NewErrors), "a new error", fmt.Sprintf("%d new errors", len(r.NewErrors))))
	for _, e := range r.NewErrors[:min(len(r.NewErrors), MaxDiagnostics)] {
		msg := e.Message
		if len(msg) > maxDiagnosticBytes {
			cut := maxDiagnosticBytes
			for cut > 0 && !utf8.RuneStart(msg[cut]) {
				cut--
			}
			msg = msg[:cut] + "…"
		}
		fmt.Fprintf(&b, "\n- %s:%d: %s", e.URI.AnyPath(), e.Line+1, msg)
	}
	if n := len(r.NewErrors); n > MaxDiagnostics {
		fmt.Fprintf(&b, "\n- … and %d more", n-MaxDiagnostics)
	}
	b.WriteString("\n\nRepair them with further edit tool calls on the files as they are now (your edit included; read_file shows them), keeping the rest of your change. " +
		"If an error cannot be repaired without undoing the change, say so in one sentence instead.")
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// VerifyStats counts the verified edits of a session (kimi.stats).
type VerifyStats struct {
	// Verified edits were checked and brought no new errors (repaired ones
	// included); Repaired edits needed the repair round for that.
	Verified int64 `json:"verified"`
	Repaired int64 `json:"repaired"`
	// WithErrors edits were checked and still brought new errors.
	WithErrors int64 `json:"withNewErrors"`
	// Unverified edits had a helper language but could not be checked (no
	// helper found, it did not answer).
	Unverified int64 `json:"unverified"`
	// RepairTokens are the prompt and completion tokens of repair rounds.
	RepairTokens int64 `json:"repairTokens"`
	// ContextActions are the actions whose context the helper's
	// definitions chose (Engine.Run); DefinitionNames the selection's
	// names they asked for, DefinitionsLocated those the helper located.
	ContextActions     int64 `json:"contextActions"`
	DefinitionNames    int64 `json:"definitionNames"`
	DefinitionsLocated int64 `json:"definitionsLocated"`
}

type verifyCounters struct {
	verified, repaired, withErrors, unverified, repairTokens atomic.Int64
	contextActions, names, located                           atomic.Int64
}

func (c *verifyCounters) add(v *Verification) {
	switch {
	case v == nil || v.Result.None:
	case len(v.Result.NewErrors) > 0:
		c.withErrors.Add(1)
	case !v.Result.Verified:
		c.unverified.Add(1)
	default:
		c.verified.Add(1)
		if v.Repaired {
			c.repaired.Add(1)
		}
	}
}

func (c *verifyCounters) snapshot() VerifyStats {
	return VerifyStats{Verified: c.verified.Load(), Repaired: c.repaired.Load(), WithErrors: c.withErrors.Load(),
		Unverified: c.unverified.Load(), RepairTokens: c.repairTokens.Load(),
		ContextActions: c.contextActions.Load(), DefinitionNames: c.names.Load(), DefinitionsLocated: c.located.Load()}
}

// VerifyStats returns the session's verification counts.
func (e *Engine) VerifyStats() VerifyStats { return e.verifyCounts.snapshot() }

// DiskChanged passes the workspace folders' disk changes (the watcher's
// batches, workspace.Hooks.DiskChanged) to the helper language servers,
// which do not watch the disk, and returns what they were told (nil when
// edits are not verified).
func (e *Engine) DiskChanged(changes []workspace.DiskChange) []verify.FileChange {
	if e.verifier == nil {
		return nil
	}
	out := make([]verify.FileChange, 0, len(changes))
	for _, c := range changes {
		typ := verify.FileChanged
		switch c.Op {
		case watch.Created:
			typ = verify.FileCreated
		case watch.Removed:
			typ = verify.FileDeleted
		}
		out = append(out, verify.FileChange{URI: c.URI, Type: typ})
	}
	e.verifier.FilesChanged(out)
	return out
}

// FoldersChanged tells the helper language servers that the workspace
// folders changed (verify.Verifier.FoldersChanged): they learn the folders
// at their next operation, and those that cannot be told are stopped now.
func (e *Engine) FoldersChanged() {
	if e.verifier != nil {
		e.verifier.FoldersChanged()
	}
}

// verifying reports whether edits are verified under cfg.
func (e *Engine) verifying(cfg config.Config) bool {
	return e.verifier != nil && cfg.Verify.Enable != config.VerifyOff
}

// VerifierOptions are a configuration's verify settings as the verifier
// takes them.
func VerifierOptions(cfg config.Config) (map[string]verify.Command, time.Duration) {
	var servers map[string]verify.Command
	if len(cfg.Verify.Servers) > 0 {
		servers = make(map[string]verify.Command, len(cfg.Verify.Servers))
		for lang, argv := range cfg.Verify.Servers {
			servers[lang] = verify.Command(argv)
		}
	}
	return servers, time.Duration(cfg.Verify.IdleMinutes) * time.Minute
}

// verifyHook is the tools.Loop Verify hook of an edit task: it checks the
// edit set's changes so far and, the first time they bring new errors
// under the repair policy, returns the message asking for the repair.
func (e *Engine) verifyHook(cfg config.Config, set *patch.EditSet, sc *streamingCompleter, sink Sink, out *Outcome) func(ctx context.Context, canRepair bool) string {
	return func(ctx context.Context, canRepair bool) string {
		changes, err := set.Changes()
		if err != nil || len(changes) == 0 {
			return ""
		}
		// No stream slot is held while the helper checks: a repair round
		// takes one again.
		sc.release()
		before, after := VerifyFiles(changes)
		e.readyHelpers(ctx, before, after, sink)
		r := e.verifier.Check(ctx, before, after)
		first := out.Verification == nil
		if first {
			out.Verification = &Verification{Result: r}
		} else {
			out.Verification.Result, out.Verification.Restated = r, set.Restated()
		}
		if !first || !canRepair || len(r.NewErrors) == 0 || cfg.Verify.OnNewErrors != config.OnNewErrorsRepair {
			return ""
		}
		out.Verification.Repaired, out.Verification.First = true, r
		sc.repairFrom = sc.rounds
		sc.repairNote = fmt.Sprintf("repairing: %s found %s", strings.Join(r.Helpers, ", "), r.ErrorSummary())
		sink.Status(fmt.Sprintf("%s: %s; asking the model to repair it", strings.Join(r.Helpers, ", "), r.ErrorSummary()))
		return set.Relative(repairPrompt(r))
	}
}

// readyHelpers says on sink what a check of the files before and after
// waits for: a helper's start ("starting gopls (first start indexes the
// module, can take 10–20 s)"), waited for here, then "verifying the edit",
// which says when the helper's first check still loads the workspace.
func (e *Engine) readyHelpers(ctx context.Context, before, after []verify.File, sink Sink) {
	var uris []workspace.URI
	for _, f := range append(append([]verify.File(nil), before...), after...) {
		uris = append(uris, f.URI)
	}
	starting, loading := e.verifier.Readiness(uris)
	if len(starting) > 0 {
		sink.Status(fmt.Sprintf("starting %s (first start indexes %s, can take 10–20 s)", strings.Join(starting, ", "), indexedBy(starting)))
		e.verifier.Ready(ctx, uris)
		sink.Status("verifying the edit")
		return
	}
	if len(loading) > 0 {
		sink.Status(fmt.Sprintf("verifying the edit (%s: still indexing %s; the first check can take 10–20 s)", strings.Join(loading, ", "), indexedBy(loading)))
		return
	}
	sink.Status("verifying the edit")
}

// indexedBy is what the helpers named index at their start: gopls a
// module, the others the workspace.
func indexedBy(helpers []string) string {
	if len(helpers) == 1 && helpers[0] == "gopls" {
		return "the module"
	}
	return "the workspace"
}

// HelperDiagnostic is a helper language server's diagnostic, with its
// byte range in the text it was computed on.
type HelperDiagnostic struct {
	cache.Diagnostic
	Start, End int
}

// HelperDiagnostics returns the helper language server's diagnostics of
// the document uri with text that touch the byte range [start, end] (the
// line of start when empty), for Fix where the editor sent none; none
// when verification is off or no helper answers (the Result says why).
func (e *Engine) HelperDiagnostics(ctx context.Context, uri workspace.URI, text string, start, end int) ([]HelperDiagnostic, verify.Result) {
	if !e.verifying(e.Config()) {
		return nil, verify.Result{None: true}
	}
	diags, r := e.verifier.Diagnostics(ctx, verify.File{URI: uri, Text: text}, start, end)
	out := make([]HelperDiagnostic, 0, len(diags))
	for _, d := range diags {
		sev := cache.Severity(d.Severity)
		if sev < cache.SeverityError || sev > cache.SeverityHint {
			sev = cache.SeverityError
		}
		endLine := d.Line + strings.Count(text[d.Start:d.End], "\n")
		out = append(out, HelperDiagnostic{Start: d.Start, End: d.End,
			Diagnostic: cache.Diagnostic{StartLine: d.Line, EndLine: endLine, Severity: sev, Source: d.Source, Message: d.Message}})
	}
	return out, r
}

// Close stops the helper language servers (within about 2 s).
func (e *Engine) Close() {
	if e.verifier != nil {
		_ = e.verifier.Close()
	}
}

// VerifyStartBound returns the bounds that shorten a helper's start to d
// (0: the default), for Options.VerifyBounds.
func VerifyStartBound(d time.Duration) verify.Bounds { return verify.Bounds{Start: d} }

// Helpers lists the helpers that would check edits under cfg in folder:
// per language, the program a check would start (found where a check
// looks: on the PATH list path less its relative entries and folder's
// insides), or what is missing (verify.Lookup).
func Helpers(cfg config.Config, folder, path string) []verify.Found {
	servers, _ := VerifierOptions(cfg)
	var folders []string
	if folder != "" {
		folders = []string{folder}
	}
	return verify.Lookup(servers, folders, []string{"PATH=" + path})
}

// HelperVersion is the version a helper found by Helpers reports
// (verify.Version), "" when it says none.
func HelperVersion(ctx context.Context, path string) string {
	return verify.Version(ctx, path, os.Environ())
}

// CheckSuggestion checks a suggestion the user has not asked for (a next
// edit) in the helper language server, as an edit is checked (the same
// Check, Verification's new errors): uri's text before and after it.
// checked is false, and nothing waits, when verification is off, the file
// has no helper, or its helper does not run yet (it is started for the
// next one, WarmHelper): a suggestion never waits for a helper to start.
func (e *Engine) CheckSuggestion(ctx context.Context, uri workspace.URI, before, after string) (v Verification, checked bool) {
	if !e.verifying(e.Config()) {
		return Verification{}, false
	}
	if !e.verifier.Running(uri) {
		e.verifier.Warm(uri)
		return Verification{}, false
	}
	r := e.verifier.Check(ctx, []verify.File{{URI: uri, Text: before}}, []verify.File{{URI: uri, Text: after}})
	return Verification{Result: r}, r.Verified || len(r.NewErrors) > 0
}

// WarmHelper starts uri's helper language server in the background when
// verification is on (a next edit's check finds it running).
func (e *Engine) WarmHelper(uri workspace.URI) {
	if e.verifying(e.Config()) && !e.verifier.Running(uri) {
		e.verifier.Warm(uri)
	}
}
