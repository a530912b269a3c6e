package lsp

import (
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/jobs"
)

// command is one row of the command table: a kimi.* command the server
// executes (listed for editor setups in editors/README.md). The table is
// the one place that knows the LSP face of the actions; from it come the
// code action menu (actionCommand), the command list of
// executeCommandProvider (commandNames) and workspace/executeCommand's
// dispatch (lookupCommand). What an action is (its name, title and result)
// belongs to assist/config, whose built-in list the CLI and the job titles
// use as well.
type command struct {
	// name is the command id.
	name string
	// action is the built-in action the command runs; "" for kimi.action,
	// which runs the action its argument names, and for the commands that
	// run no action.
	action string
	// kind is the code action kind of the action's menu entry: LSP's own
	// kinds where one fits (quickfix, refactor.rewrite), else under
	// refactor.kimi, so that a client's Refactor menu shows them and
	// "only" filters can select them.
	kind string
	// answer, when set, answers the command at once (it starts no job).
	answer func(s *Server, args commandArgs) any
	// notification: the command may also come as a notification
	// (copilot.el sends its accept command so), its answer dropped; it
	// then runs on the read loop, so its answer does no I/O.
	notification bool
}

// commands is the command table, in the order executeCommandProvider
// lists it.
var commands = []command{
	{name: "kimi.explain", action: config.ActionExplain, kind: "refactor.kimi.explain"},
	{name: "kimi.fix", action: config.ActionFix, kind: "quickfix"},
	{name: "kimi.rewrite", action: config.ActionRewrite, kind: "refactor.rewrite"},
	{name: "kimi.document", action: config.ActionDocument, kind: "refactor.kimi.document"},
	{name: "kimi.tests", action: config.ActionTests, kind: "refactor.kimi.tests"},
	// Kimi: Review ({uri, range?} or {diff: true}); its findings are
	// diagnostics, each with a kimi.fix quick fix (review.go).
	{name: cmdReview, action: config.ActionReview, kind: reviewKind},
	// A user-defined action, named by the argument's name; its kind is the
	// action's own, else refactor.kimi.NAME (see actionCommand).
	{name: cmdAction},
	{name: "kimi.cancel", answer: func(s *Server, args commandArgs) any {
		return cancelReply{Cancelled: s.jobs.Cancel(args.Job, jobs.ErrCancelled)}
	}},
	{name: "kimi.stats", answer: func(s *Server, _ commandArgs) any { return s.stats() }},
	{name: cmdClearReview, answer: clearReview},
	// What left the machine: the request record, and the last prompt as
	// sent (the key struck out; kept in memory only).
	{name: "kimi.requests", answer: func(s *Server, args commandArgs) any { return s.requestRecord(args.Last) }},
	{name: "kimi.lastPrompt", answer: func(s *Server, _ commandArgs) any { return s.ledger.LastPrompt() }},
	// Next edits: the code action's commands (nextedit.go).
	{name: cmdNextEditApply, answer: (*Server).nextEditApply},
	{name: cmdNextEditDismiss, answer: (*Server).nextEditDismiss},
	// Copilot's inline edits: the edit's command, run once it is applied
	// (copilot.go).
	{name: cmdNextEditAccepted, answer: (*Server).nextEditAccepted, notification: true},
}

// cmdAction runs a user-defined action.
const cmdAction = "kimi.action"

// userKindPrefix starts the default kind of a user-defined action.
const userKindPrefix = "refactor.kimi."

// lookupCommand returns the row of the command called name.
func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// actionName returns the name of the action that c runs with args: its
// built-in action, or for kimi.action the one the argument names.
func (c command) actionName(args commandArgs) string {
	if c.action != "" {
		return c.action
	}
	return args.Name
}

// actionCommand returns the command that runs action a and the kind of its
// menu entry: a built-in's row, or kimi.action with the action's own kind
// (refactor.kimi.NAME when it has none).
func actionCommand(a config.Action) (name, kind string) {
	if a.Builtin {
		for _, c := range commands {
			if c.action == a.Name {
				return c.name, c.kind
			}
		}
	}
	if a.Kind != "" {
		return cmdAction, a.Kind
	}
	return cmdAction, userKindPrefix + a.Name
}

// commandNames lists every command the server executes, for
// executeCommandProvider.
func commandNames() []string {
	out := make([]string, len(commands))
	for i, c := range commands {
		out[i] = c.name
	}
	return out
}

// codeActionKinds are the kinds codeActionProvider advertises: every
// row's kind is one of them or below one (TestCommandTable).
func codeActionKinds() []string {
	return []string{"quickfix", "refactor", "refactor.rewrite", "refactor.kimi", "source.kimi"}
}
