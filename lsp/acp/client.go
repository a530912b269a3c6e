package acp

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kimi-lsp/kimi-lsp/assist/agent"
)

// Permission option ids.
const (
	optionAllow  = "allow"
	optionAlways = "always"
	optionReject = "reject"
)

// callBound bounds a file request to the editor; a permission question
// waits for a person (permissionBound).
const (
	callBound       = 30 * time.Second
	permissionBound = 10 * time.Minute
)

// client is agent.Client over one turn's session/update and
// session/request_permission. ctx is the turn's: it is a per-turn adapter,
// made and dropped by Prompt, the one way the stream callbacks (which get
// no context) reach it.
type client struct {
	a   *server
	s   *session
	ctx context.Context
}

var _ agent.Client = (*client)(nil)

func (c *client) update(ctx context.Context, u sdk.SessionUpdate) {
	if err := c.a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sdk.SessionId(c.s.id), Update: u}); err != nil {
		c.a.log.Debug("session/update not sent", "error", err)
	}
}

// Thought sends reasoning as an agent thought chunk.
func (c *client) Thought(text string) { c.update(c.ctx, sdk.UpdateAgentThoughtText(text)) }

// Message sends answer text as an agent message chunk.
func (c *client) Message(text string) { c.update(c.ctx, sdk.UpdateAgentMessageText(text)) }

// ToolCall sends a tool call (its start) or its update.
func (c *client) ToolCall(ctx context.Context, t agent.ToolCall) {
	content, locs := toolContent(t), locations(t.Locations)
	if t.Start {
		c.update(ctx, sdk.StartToolCall(sdk.ToolCallId(t.ID), t.Title, sdk.WithStartKind(sdk.ToolKind(t.Kind)),
			sdk.WithStartStatus(sdk.ToolCallStatus(t.Status)), sdk.WithStartLocations(locs), sdk.WithStartContent(content)))
		return
	}
	c.update(ctx, sdk.UpdateToolCall(sdk.ToolCallId(t.ID), sdk.WithUpdateStatus(sdk.ToolCallStatus(t.Status)),
		sdk.WithUpdateContent(content)))
}

// Permission asks session/request_permission about t, with its diffs:
// "allow" (or "always", offered when always is set) lets it proceed;
// "reject", a cancelled question or no answer within permissionBound does
// not.
func (c *client) Permission(ctx context.Context, t agent.ToolCall, always bool) (agent.Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, permissionBound)
	defer cancel()
	kind, status, title := sdk.ToolKind(t.Kind), sdk.ToolCallStatus(t.Status), t.Title
	options := []sdk.PermissionOption{{OptionId: optionAllow, Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce}}
	if always {
		options = append(options, sdk.PermissionOption{OptionId: optionAlways, Name: "Always allow this command", Kind: sdk.PermissionOptionKindAllowAlways})
	}
	options = append(options, sdk.PermissionOption{OptionId: optionReject, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce})
	resp, err := c.a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(c.s.id),
		ToolCall: sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(t.ID), Title: &title, Kind: &kind, Status: &status,
			Content: toolContent(t), Locations: locations(t.Locations)},
		Options: options,
	})
	if err != nil {
		return agent.Reject, err
	}
	switch sel := resp.Outcome.Selected; {
	case sel == nil:
		return agent.Reject, nil
	case sel.OptionId == optionAllow:
		return agent.AllowOnce, nil
	case sel.OptionId == optionAlways && always:
		return agent.AllowAlways, nil
	}
	return agent.Reject, nil
}

// toolContent is a tool call's content: each diff (as ACP's diff content
// and as a unified diff, for clients that show text only), then its text.
// The diffs come first: CodeCompanion shows a permission question's diff
// only when it is the first block (D105).
func toolContent(t agent.ToolCall) []sdk.ToolCallContent {
	var out []sdk.ToolCallContent
	for _, d := range t.Diffs {
		if d.OldText != nil {
			out = append(out, sdk.ToolDiffContent(d.Path, d.NewText, *d.OldText))
		} else {
			out = append(out, sdk.ToolDiffContent(d.Path, d.NewText))
		}
	}
	for _, d := range t.Diffs {
		out = append(out, sdk.ToolContent(sdk.TextBlock("```diff\n"+d.Unified+"```\n")))
	}
	if t.Text != "" {
		out = append(out, sdk.ToolContent(sdk.TextBlock(t.Text)))
	}
	return out
}

func locations(ls []agent.Location) []sdk.ToolCallLocation {
	out := make([]sdk.ToolCallLocation, 0, len(ls))
	for _, l := range ls {
		loc := sdk.ToolCallLocation{Path: l.Path}
		if l.Line > 0 {
			loc.Line = sdk.Ptr(l.Line)
		}
		out = append(out, loc)
	}
	return out
}

// usage sends the turn's cost and the session's as a usage_update: used
// is the turn's last prompt size in the window, cost the session's, and
// _meta the turn's figures and the spend against the budgets.
func (c *client) usage(u agent.Usage) {
	meta := map[string]any{"kimi": map[string]any{
		"model": u.Model, "requests": u.Requests, "promptTokens": u.PromptTokens, "cachedTokens": u.CachedTokens,
		"outputTokens": u.OutputTokens, "reasoningTokens": u.ReasoningTokens, "estimated": u.Estimated,
		"turnCostUSD": u.CostUSD, "sessionCostUSD": u.SessionUSD,
		"hourSpentUSD": u.HourUSD, "hourBudgetUSD": u.HourLimit, "daySpentUSD": u.DayUSD, "dayBudgetUSD": u.DayLimit,
	}}
	c.update(context.WithoutCancel(c.ctx), sdk.SessionUpdate{UsageUpdate: &sdk.SessionUsageUpdate{
		SessionUpdate: "usage_update", Meta: meta, Size: u.ContextWindow, Used: u.PromptTokens,
		Cost: &sdk.Cost{Amount: u.SessionUSD, Currency: "USD"},
	}})
}

// usageOf is the turn's tokens for the prompt's reply.
func usageOf(u agent.Usage) *sdk.Usage {
	cached := u.CachedTokens
	thought := u.ReasoningTokens
	return &sdk.Usage{InputTokens: u.PromptTokens, OutputTokens: u.OutputTokens, TotalTokens: u.PromptTokens + u.OutputTokens,
		CachedReadTokens: &cached, ThoughtTokens: &thought}
}

// confirm asks the user of session s, through session/request_permission,
// whether to send a request past a budget (the engine's Confirm).
func (a *server) confirm(ctx context.Context, s *session, question string) bool {
	c := &client{a: a, s: s, ctx: ctx}
	ans, err := c.Permission(ctx, agent.ToolCall{ID: fmt.Sprintf("budget-%d", time.Now().UnixNano()), Title: "Send the request?",
		Kind: agent.KindOther, Status: agent.StatusPending, Text: question}, false)
	if err != nil {
		a.log.Warn("the budget question could not be asked; nothing is sent", "error", err)
	}
	return ans != agent.Reject
}

// editorFS is agent.FS over fs/read_text_file and fs/write_text_file.
type editorFS struct {
	a *server
	s *session
}

// ReadTextFile reads path through the editor (its unsaved buffer, if any).
func (f *editorFS) ReadTextFile(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callBound)
	defer cancel()
	resp, err := f.a.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sdk.SessionId(f.s.id), Path: path})
	return resp.Content, err
}

// WriteTextFile writes path through the editor.
func (f *editorFS) WriteTextFile(ctx context.Context, path, text string) error {
	ctx, cancel := context.WithTimeout(ctx, callBound)
	defer cancel()
	_, err := f.a.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sdk.SessionId(f.s.id), Path: path, Content: text})
	return err
}

// terminals is agent.Terminals over terminal/create, wait_for_exit,
// output, kill and release.
type terminals struct {
	a *server
	s *session
}

// outputLimit bounds what the editor keeps of a command's output.
const outputLimit = 64 << 10

// Run runs cmd in the session's folder in a new terminal of the editor,
// shown in the tool call callID; ctx's end kills it. The terminal is
// released in every case.
func (t *terminals) Run(ctx context.Context, callID string, cmd agent.Command) (agent.CommandResult, error) {
	sid := sdk.SessionId(t.s.id)
	cwd, limit := t.s.root, outputLimit
	cctx, cancel := context.WithTimeout(ctx, callBound)
	created, err := t.a.conn.CreateTerminal(cctx, sdk.CreateTerminalRequest{SessionId: sid, Command: cmd.Program, Args: cmd.Args, Cwd: &cwd, OutputByteLimit: &limit})
	cancel()
	if err != nil {
		return agent.CommandResult{}, err
	}
	id := created.TerminalId
	// The terminal's end is the editor's, whatever becomes of the turn.
	bg := context.WithoutCancel(ctx)
	defer func() {
		rctx, cancel := context.WithTimeout(bg, callBound)
		defer cancel()
		if _, err := t.a.conn.ReleaseTerminal(rctx, sdk.ReleaseTerminalRequest{SessionId: sid, TerminalId: id}); err != nil {
			t.a.log.Debug("terminal/release failed", "error", err)
		}
	}()
	status := sdk.ToolCallStatusInProgress
	(&client{a: t.a, s: t.s, ctx: ctx}).update(ctx, sdk.UpdateToolCall(sdk.ToolCallId(callID), sdk.WithUpdateStatus(status),
		sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(id)})))
	_, werr := t.a.conn.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: sid, TerminalId: id})
	if werr != nil && ctx.Err() != nil {
		kctx, cancel := context.WithTimeout(bg, callBound)
		_, _ = t.a.conn.KillTerminal(kctx, sdk.KillTerminalRequest{SessionId: sid, TerminalId: id})
		cancel()
		return agent.CommandResult{}, ctx.Err()
	}
	octx, cancel := context.WithTimeout(bg, callBound)
	defer cancel()
	out, err := t.a.conn.TerminalOutput(octx, sdk.TerminalOutputRequest{SessionId: sid, TerminalId: id})
	if err != nil {
		return agent.CommandResult{}, err
	}
	res := agent.CommandResult{Output: out.Output, Truncated: out.Truncated}
	if st := out.ExitStatus; st != nil {
		res.ExitCode = st.ExitCode
		if st.Signal != nil {
			res.Signal = *st.Signal
		}
	}
	return res, nil
}
