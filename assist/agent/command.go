package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
)

// RunCommand is the tool that runs a command in the editor's terminal,
// offered when the editor has terminals.
const RunCommand = "run_command"

// maxCommandOutput bounds the output a command's result gives the model.
const maxCommandOutput = 16 << 10

// Terminals runs commands in the editor's terminals (ACP's terminal/*).
type Terminals interface {
	// Run runs cmd in the session's folder and shows it in the tool call
	// callID; it returns once the command ended (ctx's end kills it).
	Run(ctx context.Context, callID string, cmd Command) (CommandResult, error)
}

// Command is a program and its arguments.
type Command struct {
	Program string
	Args    []string
}

// String is the command line as the user reads it.
func (c Command) String() string {
	return strings.TrimSpace(c.Program + " " + strings.Join(c.Args, " "))
}

// CommandResult is how a command ended: its output (cut to the editor's
// limit when Truncated), its exit code (nil when a signal ended it).
type CommandResult struct {
	Output    string
	Truncated bool
	ExitCode  *int
	Signal    string
}

// Answer is the user's answer to a permission question.
type Answer uint8

// The answers.
const (
	Reject Answer = iota
	AllowOnce
	// AllowAlways allows this command, as written, for the rest of the
	// session.
	AllowAlways
)

// commandTool is run_command's definition.
func commandTool() model.Tool {
	f := false
	params, err := json.Marshal(tools.Schema{Type: tools.Types{"object"}, AdditionalProperties: &f, Required: []string{"program", "args"},
		Properties: tools.Properties{
			{Name: "program", Schema: tools.Schema{Type: tools.Types{"string"}, Description: "The program to run (go, npm, make, …), found on the user's PATH."}},
			{Name: "args", Schema: tools.Schema{Type: tools.Types{"array"}, Items: &tools.Schema{Type: tools.Types{"string"}},
				Description: "Its arguments, one string each (no shell: no pipes, globs or redirections)."}},
		}})
	if err != nil {
		panic("agent: schema does not marshal: " + err.Error()) // static values; a test covers them
	}
	t := model.FunctionTool(RunCommand, "Run a command in the workspace folder, in the user's terminal, after the user allows it; answers its exit status and output. "+
		"Use it to build or test, not to edit files (use the edit tools).", params)
	t.Function.Strict = true
	return t
}

type commandArgs struct {
	Program *string  `json:"program"`
	Args    []string `json:"args"`
}

// command runs run_command: refused in the ask mode and where the editor
// has no terminals; else the user is asked (unless they allowed this
// command always), and it runs in the editor's terminal.
func (t *turnRun) command(ctx context.Context, tc *ToolCall, args string) tools.Result {
	s := t.s
	var a commandArgs
	if err := decode(args, &a); err != nil || a.Program == nil || strings.TrimSpace(*a.Program) == "" {
		return fail("run_command needs a program and its args: %v", err)
	}
	if t.mode == ModeAsk {
		return fail("run_command is refused in the ask mode: nothing is run")
	}
	if s.opts.Terminals == nil {
		return fail("the editor offers no terminal: commands cannot be run")
	}
	cmd := Command{Program: *a.Program, Args: a.Args}
	line := cmd.String()
	s.mu.Lock()
	always := s.always[line]
	s.mu.Unlock()
	if !always {
		tc.Status, tc.Text = StatusPending, "run `"+line+"` in "+s.opts.Root
		ans, err := t.c.Permission(ctx, *tc, true)
		if err != nil || ans == Reject {
			return fail("the user did not allow `%s`: it was not run", line)
		}
		if ans == AllowAlways {
			s.mu.Lock()
			s.always[line] = true
			s.mu.Unlock()
		}
	}
	res, err := s.opts.Terminals.Run(ctx, tc.ID, cmd)
	if err != nil {
		return fail("`%s` could not be run: %v", line, err)
	}
	return tools.Result{Content: commandText(line, res), IsError: res.ExitCode == nil || *res.ExitCode != 0}
}

// commandText is a command's result for the model: how it ended, then its
// output's tail, bounded.
func commandText(line string, r CommandResult) string {
	var b strings.Builder
	switch {
	case r.ExitCode != nil:
		fmt.Fprintf(&b, "`%s` exited with status %d", line, *r.ExitCode)
	case r.Signal != "":
		fmt.Fprintf(&b, "`%s` was ended by signal %s", line, r.Signal)
	default:
		fmt.Fprintf(&b, "`%s` ended", line)
	}
	out := r.Output
	if len(out) > maxCommandOutput {
		out, r.Truncated = out[len(out)-maxCommandOutput:], true
	}
	if r.Truncated {
		b.WriteString(" (output cut: its end follows)")
	}
	b.WriteString("\n")
	b.WriteString(out)
	return b.String()
}
