package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// executeCommandParams is workspace/executeCommand's params, with the
// work-done token kept raw.
type executeCommandParams struct {
	Command       string            `json:"command"`
	Arguments     []json.RawMessage `json:"arguments,omitempty"`
	WorkDoneToken json.RawMessage   `json:"workDoneToken,omitempty"`
}

// jobReply is executeCommand's answer for a command that starts a job.
type jobReply struct {
	Job string `json:"job"`
}

// handleExecuteCommand answers at once: kimi.cancel and kimi.stats with
// their result, the others with the id of the job they start.
func handleExecuteCommand(s *Server, ctx context.Context, raw json.RawMessage) (any, error) {
	var p executeCommandParams
	if err := decodeParams("workspace/executeCommand", raw, &p); err != nil {
		return nil, err
	}
	var args commandArgs
	if len(p.Arguments) > 0 {
		if err := json.Unmarshal(p.Arguments[0], &args); err != nil {
			return nil, rpcError(jsonrpc2.InvalidParams, "%s: the argument must be an object {uri, range, …}: %v", p.Command, err)
		}
	}
	switch p.Command {
	case cmdCancel:
		n := s.jobs.cancel(args.Job, causeUser)
		return map[string]int{"cancelled": n}, nil
	case cmdStats:
		return s.stats(), nil
	case cmdExplain, cmdFix, cmdRewrite, cmdDocument, cmdTests, cmdAction:
	default:
		return nil, rpcError(jsonrpc2.InvalidParams, "unknown command %q", p.Command)
	}
	t, title, err := s.prepareTask(ctx, p.Command, args)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s#%d-%d", t.uri, t.Selection.Start, t.Selection.End)
	j, jctx := s.jobs.start(s.baseCtx, key, title, requestIDFromContext(ctx))
	go s.runJob(jctx, j, t, p.WorkDoneToken)
	return jobReply{Job: j.id}, nil
}

// jobTask is an assist.Task plus what the lsp layer needs to finish the job.
type jobTask struct {
	assist.Task
	uri     workspace.URI
	command string
	// askRewrite is set when Rewrite has no instruction yet and the user
	// should be asked.
	askRewrite bool
}

// prepareTask takes the snapshot a job works on: the active document, the
// selection, the context files. It runs in the request, so the job sees the
// text as it was when the user invoked the command.
func (s *Server) prepareTask(ctx context.Context, command string, args commandArgs) (*jobTask, string, error) {
	cfg := s.config()
	name := map[string]string{
		cmdExplain: config.ActionExplain, cmdFix: config.ActionFix, cmdRewrite: config.ActionRewrite,
		cmdDocument: config.ActionDocument, cmdTests: config.ActionTests, cmdAction: args.Name,
	}[command]
	action, ok := cfg.ActionFor(name)
	if !ok {
		return nil, "", rpcError(jsonrpc2.InvalidParams, "%s: no action named %q is configured", command, name)
	}
	if args.URI == "" {
		return nil, "", rpcError(jsonrpc2.InvalidParams, "%s: missing uri", command)
	}
	uri, err := workspace.ParseURI(args.URI)
	if err != nil {
		return nil, "", rpcError(jsonrpc2.InvalidParams, "%s: %v", command, err)
	}
	snap, ok := s.docs.Snapshot(uri)
	if !ok {
		return nil, "", rpcError(jsonrpc2.InvalidParams, "%s: %s is not open in the editor", command, uri)
	}
	if s.isSecretURI(uri) {
		s.noteSecret(ctx, uri)
		return nil, "", rpcError(jsonrpc2.InvalidRequest, "%s: %s looks like a secrets file; kimi-lsp never sends it to the model", command, s.displayPath(uri))
	}
	enc := s.encoding()
	var sel cache.Selection
	if args.Range != nil {
		sel.Start, sel.End = snap.RangeOffsets(fromProtocolRange(*args.Range), enc)
	}
	t := &jobTask{uri: uri, command: command}
	t.Action = action
	t.Instruction = strings.TrimSpace(args.Instruction)
	t.Selection = sel
	t.Project = cache.Project{Name: s.projectName()}
	t.Active = cache.Document{
		Path:       s.displayPath(uri),
		Language:   languageOf(snap.LanguageID, uri),
		Text:       snap.Text(),
		Version:    snap.Version,
		LastEdited: int64(snap.Seq),
	}
	t.Diagnostics = convertDiagnostics(args.Diagnostics)
	if command == cmdRewrite && t.Instruction == "" {
		if in, ok := assist.RewriteInstruction(t.Active.Text[sel.Start:sel.End]); ok {
			t.Instruction = in
		} else {
			t.askRewrite = true
		}
	}
	open := s.docs.All()
	for _, d := range assist.ContextDocuments(s.folders, snap, open, s.recent.list()) {
		// An active file outside every folder is shown by its base name,
		// which a workspace file may share.
		if d.Path != t.Active.Path {
			t.Context = append(t.Context, d)
		}
	}
	t.Files = assist.NewFiles(s.folders, open)
	return t, action.Title, nil
}

// runJob runs a job to its end and reports every step to the editor.
func (s *Server) runJob(ctx context.Context, j *job, t *jobTask, clientToken json.RawMessage) {
	defer s.jobs.finish(j)
	cfg := s.config()
	p := s.newProgress(ctx, clientToken, j.id, cfg.Progress.MaxReportsPerSecond, cfg.Progress.ShowThinking)
	j.setToken(p.Token())
	p.Begin(ctx, t.Action.Title, "asking "+t.Action.Model+"…")
	if t.askRewrite {
		t.Instruction = s.askRewriteInstruction(ctx)
	}
	out, err := s.engine.Run(ctx, t.Task, p)
	switch {
	case ctx.Err() != nil:
		msg := string(causeUser)
		var cause cancelCause
		if errors.As(context.Cause(ctx), &cause) {
			msg = string(cause)
		}
		s.log.Info("job cancelled", "job", j.id, "cause", msg)
		p.End(context.WithoutCancel(ctx), msg, false)
	case err != nil && out != nil && len(out.Changes) == 0 && errors.Is(err, assist.ErrNoChange) && strings.TrimSpace(out.Text) != "":
		// The model explained why it made no change: show that.
		s.showExplanation(ctx, t, out)
		p.End(ctx, "no change proposed; see the model's answer", false)
	case err != nil:
		s.log.Warn("job failed", "job", j.id, "action", t.Action.Name, "error", err)
		p.End(ctx, outcomeLine("failed: %s", s.redact(err.Error())), true)
	case t.Action.Result == config.ResultExplain:
		s.showExplanation(ctx, t, out)
		p.End(ctx, explainOutcome(out), false)
	default:
		p.Status("applying the edit")
		msg, err := s.applyChanges(ctx, t.Action.Title, out.Changes)
		if err != nil {
			s.log.Warn("edit not applied", "job", j.id, "error", err)
			p.End(ctx, outcomeLine("not applied: %s", s.redact(err.Error())), true)
			return
		}
		p.End(ctx, msg+usageNote(out.Usage), false)
	}
}

func explainOutcome(out *assist.Outcome) string {
	if out.Cached {
		return "explanation ready (unchanged code: the earlier answer, no model call)"
	}
	return "explanation ready" + usageNote(out.Usage)
}

// usageNote summarises a task's tokens for the end message.
func usageNote(u cache.Usage) string {
	if u.PromptTokens == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d prompt tokens, %d%% cached)", u.PromptTokens, u.CachedTokens*100/u.PromptTokens)
}

// showExplanation opens the explanation's Markdown file with
// window/showDocument when the client can, else sends the whole text with
// window/showMessage.
func (s *Server) showExplanation(ctx context.Context, t *jobTask, out *assist.Outcome) {
	caps := s.clientCaps()
	if out.File != "" && caps.Window.ShowDocument != nil && caps.Window.ShowDocument.Support {
		var res struct {
			Success bool `json:"success"`
		}
		err := s.call(ctx, "window/showDocument", map[string]any{
			"uri": string(workspace.FileURI(out.File)), "takeFocus": false,
		}, &res)
		if err == nil && res.Success {
			return
		}
		s.log.Info("showDocument failed; sending the explanation as a message", "error", err)
	}
	s.notify(ctx, "window/showMessage", &protocol.ShowMessageParams{
		Type:    protocol.MessageTypeInfo,
		Message: t.Action.Title + " — " + t.Active.Path + "\n\n" + out.Text,
	})
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
	items := make([]map[string]string, len(rewriteChoices))
	for i, c := range rewriteChoices {
		items[i] = map[string]string{"title": c}
	}
	var res *struct {
		Title string `json:"title"`
	}
	err := s.call(ctx, "window/showMessageRequest", map[string]any{
		"type": protocol.MessageTypeInfo, "message": "Kimi: how should the selection be rewritten? (Tip: write a comment line starting with \"kimi:\" in the selection.)", "actions": items,
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
		var d struct {
			Range    protocol.Range `json:"range"`
			Severity int            `json:"severity"`
			Source   string         `json:"source"`
			Message  string         `json:"message"`
		}
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
	p, err := uri.Path()
	if err != nil {
		return path.Base(string(uri))
	}
	if s.folders != nil {
		if rel, ok := s.folders.RelPath(p); ok {
			return rel
		}
	}
	return path.Base(p)
}

// projectName is the name of the first workspace folder.
func (s *Server) projectName() string {
	if s.folders == nil {
		return ""
	}
	if l := s.folders.List(); len(l) > 0 {
		return l[0].Name
	}
	return ""
}

// languageOf returns the client's language id, else a guess from the name.
func languageOf(id string, uri workspace.URI) string {
	if id != "" {
		return id
	}
	return workspace.LanguageOf(string(uri))
}

// stats is kimi.stats's result: the cache accounting and the running jobs.
func (s *Server) stats() any {
	st := s.engine.Stats()
	var running []map[string]string
	for _, j := range s.jobs.running() {
		running = append(running, map[string]string{"job": j.id, "title": j.title})
	}
	return struct {
		cache.Stats
		// Cost is CostUSD under the name DESIGN.md's command table uses.
		Cost float64             `json:"cost"`
		Jobs []map[string]string `json:"jobs"`
	}{st, st.CostUSD, running}
}
