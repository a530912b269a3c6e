package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/jobs"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// handleExecuteCommand answers at once: kimi.cancel and kimi.stats with
// their result, the others with the id of the job they start. The job's
// snapshot is the one taken on the read loop when the request arrived.
func handleExecuteCommand(s *Server, ctx context.Context, req *request) (any, error) {
	var p executeCommandParams
	if err := decodeParams("workspace/executeCommand", req.params, &p); err != nil {
		return nil, err
	}
	var args commandArgs
	if len(p.Arguments) > 0 {
		if err := json.Unmarshal(p.Arguments[0], &args); err != nil {
			return nil, rpcError(jsonrpc2.InvalidParams, "%s: the argument must be an object {uri, range, …}: %v", p.Command, err)
		}
	}
	cmd, ok := lookupCommand(p.Command)
	if !ok {
		return nil, rpcError(jsonrpc2.InvalidParams, "unknown command %q", p.Command)
	}
	if cmd.answer != nil {
		return cmd.answer(s, args), nil
	}
	if cmd.name == cmdReview && args.Diff {
		return s.startReviewDiff(req, p)
	}
	t, key, err := s.buildTask(ctx, req.view, cmd, args)
	if err != nil {
		return nil, err
	}
	run := &jobRun{task: t, clientToken: p.WorkDoneToken, uri: workspace.URI(key.Document), finding: args.Finding}
	if snap, ok := req.view.Snapshot(run.uri); ok && t.Action.Result == config.ResultReview {
		run.reviewed = snap.Text() // the whole text, of which the task may hold a window
	}
	j, err := s.jobs.Start(s.life.context(), jobs.Spec{
		Key:     key,
		Title:   t.Action.Title,
		Request: req.key,
		OnPanic: func(error) { s.jobPanicked(run) },
	}, func(ctx context.Context, j *jobs.Job) { s.runJob(ctx, j, run) })
	if err != nil {
		return nil, rpcError(jsonrpc2.InvalidRequest, "%s: %v", p.Command, err)
	}
	return jobReply{Job: j.ID}, nil
}

// buildTask converts the command's arguments to workspace terms, with the
// documents of view (taken when the request arrived), and has assist build
// the task.
// It also returns the job's supersession key.
func (s *Server) buildTask(ctx context.Context, view docView, cmd command, args commandArgs) (*assist.Task, jobs.Key, error) {
	command, name := cmd.name, cmd.actionName(args)
	if args.URI == "" {
		return nil, jobs.Key{}, rpcError(jsonrpc2.InvalidParams, "%s: missing uri", command)
	}
	uri, err := workspace.ParseURI(args.URI)
	if err != nil {
		return nil, jobs.Key{}, rpcError(jsonrpc2.InvalidParams, "%s: %v", command, err)
	}
	snap, ok := view.Snapshot(uri)
	if !ok {
		return nil, jobs.Key{}, rpcError(jsonrpc2.InvalidParams, "%s: %s is not open in the editor", command, uri)
	}
	req := assist.TaskRequest{
		Action:      name,
		Instruction: args.Instruction,
		Document:    snap,
		Diagnostics: convertDiagnostics(args.Diagnostics),
		Open:        view.All(),
		Recent:      s.recent.list(),
		Review:      cmd.action == config.ActionReview,
	}
	if args.Range != nil {
		req.Start, req.End = snap.RangeOffsets(fromProtocolRange(*args.Range), s.encoding())
	}
	if req.Review && req.Start == req.End {
		// No selection: the whole file.
		req.Start, req.End = 0, snap.Len()
	}
	t, err := s.engine.BuildTask(s.config(), s.folders, req)
	switch {
	case errors.Is(err, assist.ErrUnknownAction):
		return nil, jobs.Key{}, rpcError(jsonrpc2.InvalidParams, "%s: no action named %q is configured", command, name)
	case errors.Is(err, workspace.ErrSecret):
		s.noteSecret(ctx, uri)
		return nil, jobs.Key{}, rpcError(jsonrpc2.InvalidRequest, "%s: %s", command, err)
	case err != nil:
		return nil, jobs.Key{}, rpcError(jsonrpc2.InvalidRequest, "%s: %s", command, s.redact(err.Error()))
	}
	key := jobs.Key{Command: command, Document: string(uri), Start: req.Start, End: req.End}
	if command == cmdAction {
		key.Command += ":" + name
	}
	if req.Review {
		key.Start, key.End = 0, 0 // one review per file at a time
	}
	return t, key, nil
}

// jobRun is what a job's goroutine carries: its task and its progress.
type jobRun struct {
	task        *assist.Task
	clientToken json.RawMessage
	// progress is set by runJob once created; read only by the job's own
	// goroutine (OnPanic runs there too).
	progress *progress
	// uri is the job's document; finding, for a Fix of a review finding,
	// is the finding removed when the fix lands.
	uri     workspace.URI
	finding int
	// reviewDiff is set for the review of the uncommitted changes (task
	// is then only its title).
	reviewDiff bool
	// reviewed, for a review of a file, is the document's text reviewed,
	// the findings' lines' (task.Active.Text may be a window of it).
	reviewed string
}

// runJob runs a job to its end and reports every step to the editor.
func (s *Server) runJob(ctx context.Context, j *jobs.Job, r *jobRun) {
	t := r.task
	cfg := s.config()
	p := s.newProgress(ctx, r.clientToken, j, cfg.Progress.MaxReportsPerSecond, cfg.Progress.ShowThinking)
	r.progress = p
	j.SetTag(progressToken(p.Token()))
	s.hook("job", j)
	p.Begin(ctx, t.Action.Title, "asking "+t.Action.Model+"…")
	if t.Notice != "" {
		s.showMessage(ctx, protocol.MessageTypeInfo, "kimi-lsp: "+t.Notice+".")
	}
	if t.NeedsInstruction {
		t.Instruction = s.askRewriteInstruction(ctx)
	}
	var out *assist.Outcome
	var err error
	var reviewed string
	switch {
	case r.reviewDiff:
		reviewed, err = s.runReviewDiff(ctx, r, p)
	default:
		out, err = s.engine.Run(ctx, *t, p)
	}
	endCtx := context.WithoutCancel(ctx)
	switch {
	case ctx.Err() != nil:
		msg, failed := cancelOutcome(context.Cause(ctx))
		s.log.Info("job cancelled", "job", j.ID, "cause", msg)
		p.End(endCtx, msg, failed)
	case errors.Is(err, jobs.ErrInternal):
		p.End(endCtx, internalErrorOutcome, true)
	case errors.Is(err, provider.ErrNotSent):
		p.End(endCtx, "not sent: nothing left the machine", false)
	case t.Action.Result == config.ResultReview && err != nil:
		s.log.Warn("review failed", "job", j.ID, "error", err)
		p.End(endCtx, outcomeLine("failed: %s", s.redact(err.Error())), true)
	case r.reviewDiff:
		p.End(endCtx, outcomeLine("%s", reviewed), false)
	case t.Action.Result == config.ResultReview:
		p.End(endCtx, outcomeLine("%s", s.endReview(r.uri, r.reviewed, false, out)), false)
	case assist.Summarize(out, err).Kind == assist.LandNoChange:
		// The model explained why it made no change: show that.
		if s.showExplanation(ctx, t, out) {
			p.Answered()
		}
		p.End(endCtx, "no change proposed; see the model's answer", false)
	case err != nil:
		s.log.Warn("job failed", "job", j.ID, "action", t.Action.Name, "error", err)
		p.End(endCtx, outcomeLine("failed: %s", s.redact(err.Error())), true)
	case t.Action.Result == config.ResultExplain:
		if s.showExplanation(ctx, t, out) {
			p.Answered()
		}
		p.End(endCtx, explainOutcome(out), false)
	default:
		vd := s.decideVerified(ctx, cfg, t, out, p.Status)
		if ctx.Err() != nil && !vd.Land {
			// Cancelled while the editor asked about the new errors.
			msg, failed := cancelOutcome(context.Cause(ctx))
			p.End(endCtx, msg, failed)
			return
		}
		if !vd.Land {
			p.End(endCtx, outcomeLine("not applied: %s", vd.Line), vd.Failed)
			return
		}
		p.Status("applying the edit")
		msg, sent, err := s.applyChanges(ctx, t.Action.Title, out, p.Status)
		cancelled := ctx.Err() != nil
		switch {
		case cancelled && !sent:
			msg, failed := cancelOutcome(context.Cause(ctx))
			p.End(endCtx, msg, failed)
		case cancelled && err == nil:
			// Too late: the editor had the edit and applied it.
			p.End(endCtx, outcomeLine("cancelled after the edit was sent; the editor applied it: %s", msg), false)
		case cancelled:
			p.End(endCtx, outcomeLine("cancelled; not applied: %s", s.redact(err.Error())), false)
		case err != nil:
			s.log.Warn("edit not applied", "job", j.ID, "error", err)
			p.End(endCtx, outcomeLine("not applied: %s", s.redact(err.Error())), true)
		default:
			if r.finding != 0 {
				s.reviews.remove(r.uri, r.finding)
			}
			line := msg
			if vd.Line != "" {
				line += ", " + vd.Line
			}
			line += usageNote(out)
			if note := out.RedoneNote(); note != "" {
				line = outcomeLine("%s; %s", line, note)
			}
			p.End(endCtx, line, false)
		}
	}
}

// jobPanicked reports a job whose function panicked (jobs.Spec.OnPanic).
func (s *Server) jobPanicked(r *jobRun) {
	// The job's context is cancelled (by the panic): the report goes out
	// on the session's, uncancelled, as a job's end does.
	ctx := context.WithoutCancel(s.life.context())
	if r.progress != nil {
		r.progress.End(ctx, internalErrorOutcome, true)
		return
	}
	s.showMessage(ctx, protocol.MessageTypeError, "kimi-lsp: "+r.task.Action.Title+": "+internalErrorOutcome)
}

func explainOutcome(out *assist.Outcome) string {
	if out.Cached {
		return "explanation ready (unchanged code: the earlier answer, no model call)"
	}
	return "explanation ready" + usageNote(out)
}

// usageNote summarises a task's tokens for the end message.
func usageNote(out *assist.Outcome) string {
	u := out.Usage
	if u.PromptTokens == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d prompt tokens, %d%% cached)", u.PromptTokens, u.CachedTokens*100/u.PromptTokens)
}

// showExplanation opens the explanation's Markdown file with
// window/showDocument when the client can, else sends the whole text with
// window/showMessage; it reports whether it did the latter. The document
// is opened without taking focus, which is what opens it beside the code
// in the clients that tell the two apart (Helix: a vertical split, where
// takeFocus true replaces the code view; eglot: display-buffer, another
// window). Eglot is sent no takeFocus at all: eglot 1.17 (Emacs 30) reads
// a false one, :json-false in its Lisp, as true.
func (s *Server) showExplanation(ctx context.Context, t *assist.Task, out *assist.Outcome) (inMessage bool) {
	if out.File != "" && s.canShowDocument() {
		params := showDocumentParams{URI: string(workspace.FileURI(out.File))}
		if !s.isEglot() {
			params.TakeFocus = new(bool)
		}
		var res showDocumentResult
		err := s.call(ctx, "window/showDocument", params, &res)
		if err == nil && res.Success {
			return false
		}
		s.log.Info("showDocument failed; sending the explanation as a message", "error", err)
	}
	s.showMessage(ctx, protocol.MessageTypeInfo, t.Action.Title+" — "+t.Active.Path+"\n\n"+out.Text)
	return true
}

// canShowDocument reports whether window/showDocument can open a file in
// the client: it declares the request, or it is Helix, which answers it
// (since 24.03, opening a vertical split unless takeFocus is true) but
// declares it only after 25.07 — where it does not, a long
// window/showMessage covers its code view.
func (s *Server) canShowDocument() bool {
	caps := s.clientCaps()
	if caps.Window.ShowDocument != nil && caps.Window.ShowDocument.Support {
		return true
	}
	return s.client.client().Name == "helix"
}

// maxMessageRunes caps a window/showMessage: editors show messages in
// small popups or a status line, and a multi-megabyte message freezes
// some of them.
const maxMessageRunes = 2000

// showMessage sends window/showMessage with the API key struck out. A text
// over maxMessageRunes is cut at a line end; the whole text is written as
// a Markdown document and the message says where it is.
func (s *Server) showMessage(ctx context.Context, typ protocol.MessageType, msg string) {
	msg = s.redact(msg)
	if utf8.RuneCountInString(msg) > maxMessageRunes {
		msg = s.capMessage(msg) // the file keeps the text as it is
	}
	// Messages hold model and workspace text (answers, file names): the
	// one cleaning of shown text (no escape sequences, zero-width or bidi
	// characters).
	msg = config.CleanLines(msg)
	s.notify(ctx, "window/showMessage", &protocol.ShowMessageParams{Type: typ, Message: msg})
}

// capMessage returns the head of msg with a note on where the rest is.
func (s *Server) capMessage(msg string) string {
	runes := []rune(msg)
	head := string(runes[:maxMessageRunes-200])
	if i := strings.LastIndexByte(head, '\n'); i > len(head)/2 {
		head = head[:i]
	}
	more := len(runes) - utf8.RuneCountInString(head)
	file, err := s.engine.SaveText("message", msg)
	if err != nil {
		s.log.Warn("long message not kept", "error", err)
		return fmt.Sprintf("%s\n… (%d more characters not shown)", head, more)
	}
	return fmt.Sprintf("%s\n… (%d more characters; the whole text is in %s)", head, more, file)
}

// rewriteChoices are offered by askRewriteInstruction.
var rewriteChoices = []string{
	assist.DefaultRewriteInstruction,
	"Simplify it.",
	"Make it more idiomatic.",
	"Add error handling.",
	"Make it faster.",
}

// askRewriteInstruction asks the user, with window/showMessageRequest (an
// LSP 1.0 request every client answers, if only with an error), how to
// rewrite; without an answer it uses the default instruction.
func (s *Server) askRewriteInstruction(ctx context.Context) string {
	items := make([]messageActionItem, len(rewriteChoices))
	for i, c := range rewriteChoices {
		items[i] = messageActionItem{Title: c}
	}
	var res *messageActionItem
	err := s.call(ctx, "window/showMessageRequest", showMessageRequestParams{
		Type:    protocol.MessageTypeInfo,
		Message: "Kimi: how should the selection be rewritten? (Tip: write a comment line starting with \"kimi:\" in the selection.)",
		Actions: items,
	}, &res)
	if err != nil || res == nil || res.Title == "" {
		return assist.DefaultRewriteInstruction
	}
	return res.Title
}

// convertDiagnostics turns LSP diagnostics into the prompt's.
func convertDiagnostics(raw []json.RawMessage) []cache.Diagnostic {
	var out []cache.Diagnostic
	for _, r := range raw {
		var d diagnostic
		if json.Unmarshal(r, &d) != nil || strings.TrimSpace(d.Message) == "" {
			continue
		}
		sev := cache.Severity(d.Severity)
		if sev < cache.SeverityError || sev > cache.SeverityHint {
			sev = cache.SeverityError
		}
		out = append(out, cache.Diagnostic{
			StartLine: int(d.Range.Start.Line), EndLine: int(d.Range.End.Line),
			Severity: sev, Source: d.Source, Message: d.Message,
		})
	}
	return out
}

// displayPath is the workspace-relative path of uri the model sees, or the
// base name for files outside every folder and non-file URIs.
func (s *Server) displayPath(uri workspace.URI) string {
	return assist.DisplayPath(s.folders, uri)
}

func (s *Server) stats() statsReply {
	st := s.engine.Stats()
	status, budget := s.ledger.Status()
	out := statsReply{Stats: st, Cost: st.CostUSD, Spend: spendReply{Status: status, ConfirmAbove: budget.ConfirmAbove}}
	for _, j := range s.jobs.Jobs() {
		out.Jobs = append(out.Jobs, jobInfo{Job: j.ID, Title: j.Spec.Title})
	}
	out.Streams, out.Queued = s.jobs.Streams()
	out.Completion = s.completion.completer.Stats()
	out.Verify = s.engine.VerifyStats()
	out.NextEdit = s.nextEdit.Stats()
	cfg := s.config()
	out.Endpoint = endpointOf(cfg, s.redact)
	for _, f := range s.folderURIs() {
		dir, err := f.Path()
		if err != nil {
			continue
		}
		ft := folderTrust{Folder: dir}
		if ft.Trusted, ft.Why = cfg.TrustOf(dir); !ft.Trusted {
			ft.Means = config.UntrustedMeans
		}
		out.Trust = append(out.Trust, ft)
	}
	return out
}

// endpointOf is cfg's endpointReply: only the default endpoint has a
// fallback (config.Config.FallbackURL).
func endpointOf(cfg config.Config, redact func(string) string) endpointReply {
	_, err := cfg.Key()
	return endpointReply{BaseURL: redact(cfg.BaseURL), Default: cfg.FallbackURL() != "", Key: err == nil}
}

// confirmSend asks the user whether to send a request (a budget is spent,
// the request's estimate would pass what is left of one, or it is
// estimated above budget.confirmAbove): Send or Cancel.
// No answer, or an editor that cannot ask, is Cancel: nothing is sent.
func (s *Server) confirmSend(ctx context.Context, question string) bool {
	var res *messageActionItem
	err := s.call(ctx, "window/showMessageRequest", showMessageRequestParams{
		Type:    protocol.MessageTypeWarning,
		Message: s.redact(question),
		Actions: []messageActionItem{{Title: sendTitle}, {Title: cancelTitle}},
	}, &res)
	if err != nil {
		s.log.Info("not sent: the editor did not answer whether to send", "error", err)
		if ctx.Err() == nil {
			// An editor without the request (Helix) never showed the
			// question: say what was not sent, and how to send it.
			s.showMessage(ctx, protocol.MessageTypeWarning, fmt.Sprintf(
				"Kimi: not sent, as the editor could not ask first (%s): %q To send such a request without asking, raise budget.confirmAbove (or, when a budget is spent or the request would pass what is left of it, that budget) in your configuration.",
				s.redact(err.Error()), strings.TrimPrefix(question, "Kimi: ")))
		}
		return false
	}
	return res != nil && res.Title == sendTitle
}

// The buttons of confirmSend.
const (
	sendTitle   = "Send"
	cancelTitle = "Cancel"
)

// defaultRequests is how many requests kimi.requests returns by default.
const defaultRequests = 50

// requestRecord is kimi.requests's answer: the newest last requests (0: 50).
func (s *Server) requestRecord(last int) requestsReply {
	if last <= 0 {
		last = defaultRequests
	}
	recs, err := s.ledger.Records(last)
	if err != nil {
		s.log.Warn("kimi.requests: the record could not be read", "error", err)
	}
	if recs == nil {
		recs = []spend.Record{}
	}
	return requestsReply{Requests: recs}
}
