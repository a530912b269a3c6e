package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
)

// turnRun is what one turn's steps share.
type turnRun struct {
	s    *Session
	c    Client
	mode Mode
	n    int // the turn's number in the session, for tool call ids

	// mu guards reads: the files the agent's own tools quoted this turn.
	mu    sync.Mutex
	reads []tools.FileRead
}

// isEdit reports whether the tool edits.
func isEdit(name string) bool {
	return name == tools.ReplaceText || name == tools.CreateFile || name == tools.DeleteFile || name == tools.ApplyDiff
}

// call runs one tool call of the model (tools.LoopOptions.Call): it shows
// the call, runs the agent's own tools, refuses edits in the ask mode and
// hands the others to the executor (run), then shows how it ended.
func (t *turnRun) call(ctx context.Context, mc model.ToolCall, run func() tools.Result) tools.Result {
	name, args := mc.Function.Name, mc.Function.Arguments
	tc := t.describe(mc)
	tc.Start, tc.Status = true, StatusInProgress
	t.c.ToolCall(ctx, tc)
	var r tools.Result
	switch {
	case name == ListFiles:
		r = t.s.list(args)
	case name == SearchFiles:
		r = t.s.search(ctx, args, t.found)
	case name == RunCommand:
		r = t.command(ctx, &tc, args)
	case isEdit(name) && t.mode == ModeAsk:
		r = fail("%s is refused in the ask mode: nothing is edited; describe the change instead", name)
	default:
		r = run()
	}
	r.Content = t.s.redact.Keys(r.Content) // the engine strikes it for the model too
	tc.Start, tc.Status, tc.Text = false, StatusCompleted, r.Content
	if r.IsError {
		tc.Status = StatusFailed
	}
	if name == tools.ReadFile && !r.IsError {
		tc.Text = oneLine(r.Content, 200) // the head: "calc.go: lines 1-20 of 20"
	}
	t.c.ToolCall(ctx, tc)
	return r
}

// describe is a tool call as the user first sees it: kind, title and the
// files it names.
func (t *turnRun) describe(mc model.ToolCall) ToolCall {
	var a struct {
		Path      string `json:"path"`
		StartLine int    `json:"start_line"`
		Query     string `json:"query"`
		Directory string `json:"directory"`
		Diff      string `json:"diff"`
	}
	_ = json.Unmarshal([]byte(mc.Function.Arguments), &a) // a bad call fails when it runs
	tc := ToolCall{ID: fmt.Sprintf("turn%d-%s", t.n, mc.ID), Kind: KindOther, Title: mc.Function.Name}
	paths := []string{a.Path}
	switch mc.Function.Name {
	case tools.ReadFile:
		tc.Kind, tc.Title = KindRead, "Read "+a.Path
	case ListFiles:
		tc.Kind, tc.Title = KindSearch, "List files"
		if a.Directory != "" {
			tc.Title += " in " + a.Directory
		}
	case SearchFiles:
		tc.Kind, tc.Title = KindSearch, fmt.Sprintf("Search for %q", oneLine(a.Query, 80))
	case tools.ReplaceText, tools.CreateFile:
		tc.Kind, tc.Title = KindEdit, "Edit "+a.Path+" (pending until the turn ends)"
	case tools.DeleteFile:
		tc.Kind, tc.Title = KindDelete, "Delete "+a.Path+" (pending until the turn ends)"
	case RunCommand:
		var c commandArgs
		_ = json.Unmarshal([]byte(mc.Function.Arguments), &c)
		tc.Kind, tc.Title = KindRun, "Run `"+Command{Program: deref(c.Program), Args: c.Args}.String()+"`"
	case tools.ApplyDiff:
		paths = diffNames(a.Diff)
		tc.Kind, tc.Title = KindEdit, "Apply a diff to "+strings.Join(paths, ", ")+" (pending until the turn ends)"
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if abs, _, err := t.s.opts.Folders.Resolve(p); err == nil {
			tc.Locations = append(tc.Locations, Location{Path: abs, Line: max(a.StartLine, 0)})
		}
	}
	return tc
}

// diffNames are the files a diff names, without a/ and b/.
func diffNames(diff string) []string {
	fds, err := patch.Parse(diff, "")
	if err != nil {
		return nil
	}
	var out []string
	for _, fd := range fds {
		name := fd.NewName
		if name == patch.DevNull {
			name = fd.OldName
		}
		if fd.GitPrefixes {
			name = name[min(2, len(name)):]
		}
		out = append(out, name)
	}
	return out
}

// found counts n bytes of path as quoted by the agent's own tools.
func (t *turnRun) found(path string, n int) {
	t.mu.Lock()
	t.reads = addReads(t.reads, []tools.FileRead{{Path: path, Bytes: n}})
	t.mu.Unlock()
}

// allReads are the files whose text the conversation carries besides the
// edit tools' results of this turn: earlier turns' and this turn's own
// tools'.
func (t *turnRun) allReads() []tools.FileRead {
	t.s.mu.Lock()
	earlier := t.s.reads
	t.s.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	return addReads(earlier, t.reads)
}

// land puts the turn's verified edit to the user and writes it when
// allowed, whole or not at all; it returns what the model is told of it
// with the next message.
func (t *turnRun) land(ctx context.Context, res *assist.TurnResult) string {
	names, tc := t.editCall(res)
	t.c.ToolCall(ctx, tc)
	asked := false
	permit := func(ctx context.Context) (bool, error) {
		asked = true
		ans, err := t.c.Permission(ctx, tc, false)
		return ans != Reject, err
	}
	v := res.Verification
	vd := v.Decide(ctx, t.s.opts.Config.Verify.OnNewErrors, permit)
	if vd.Land && !asked {
		ok, err := permit(ctx)
		vd.Land = ok && err == nil
	}
	tc.Start, tc.Status = false, StatusFailed
	switch {
	case vd.Failed:
		tc.Text = vd.Line + ": nothing was written"
		t.c.ToolCall(ctx, tc)
		return "your edit of " + names + " was refused: it brings new errors; the files are unchanged"
	case !vd.Land:
		tc.Text = "rejected: nothing was written"
		t.c.ToolCall(ctx, tc)
		return "the user rejected your edit of " + names + "; the files are unchanged"
	}
	if err := t.s.write(ctx, res.Changes); err != nil {
		tc.Text = err.Error()
		t.c.ToolCall(ctx, tc)
		return "your edit of " + names + " could not be written (" + err.Error() + "); the files are unchanged"
	}
	tc.Status, tc.Text = StatusCompleted, strings.TrimSpace("written. "+vd.Line)
	t.c.ToolCall(ctx, tc)
	return "the user allowed your edit of " + names + "; it was written"
}

// editCall is the tool call that stands for the turn's edit: its diffs,
// one per file, and the helper's verdict.
func (t *turnRun) editCall(res *assist.TurnResult) (names string, tc ToolCall) {
	root := t.s.opts.Root
	var list []string
	tc = ToolCall{ID: fmt.Sprintf("turn%d-edit", t.n), Start: true, Kind: KindEdit, Status: StatusPending}
	for _, c := range res.Changes {
		rel, err := filepath.Rel(root, c.Path)
		if err != nil {
			rel = c.Path
		}
		list = append(list, filepath.ToSlash(rel))
		d := Diff{Path: c.Path, NewText: c.After, Unified: t.s.redact.Keys(c.Diff(root)), Deleted: c.Kind == patch.DeleteFile}
		if c.Kind != patch.CreateFile {
			before := c.Before
			d.OldText = &before
		}
		tc.Diffs = append(tc.Diffs, d)
		tc.Locations = append(tc.Locations, Location{Path: c.Path})
	}
	names = strings.Join(list, ", ")
	tc.Title = "Apply the edit of " + names
	if line := res.Verification.Line(); line != "" {
		tc.Text = line
	} else {
		tc.Text = "not verified: no helper language server checks these files"
	}
	return names, tc
}

// usage is the turn's usage and cost, and the spend against the budgets.
func (t *turnRun) usage(res *assist.TurnResult) Usage {
	s := t.s
	u := Usage{Model: s.Model(), ContextWindow: model.ContextWindow}
	if res != nil {
		cu := res.Usage
		u.PromptTokens, u.CachedTokens, u.OutputTokens, u.ReasoningTokens = cu.PromptTokens, cu.CachedTokens, cu.CompletionTokens, cu.ReasoningTokens
		u.Estimated, u.Requests, u.CostUSD = cu.Estimated, res.Rounds, res.CostUSD
	}
	s.mu.Lock()
	s.spent += u.CostUSD
	u.SessionUSD = s.spent
	s.mu.Unlock()
	if s.opts.Ledger != nil {
		st, _ := s.opts.Ledger.Status()
		u.HourUSD, u.HourLimit, u.DayUSD, u.DayLimit = st.Hour.Spent, st.Hour.Limit, st.Day.Spent, st.Day.Limit
	}
	return u
}
