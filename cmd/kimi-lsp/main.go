// Command kimi-lsp is a language server that brings the Kimi K3.1 models
// into any LSP editor. Run without arguments (or with --stdio) it serves LSP
// on standard input and output; see "kimi-lsp help" for the subcommands.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	// First among the initializers: the main goroutine's stack grown once.
	_ "github.com/kimi-lsp/kimi-lsp/cmd/kimi-lsp/stackstart"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	procSignals = newSignals(cancel)
	getenv := protectEnvironment()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, getenv)
	procSignals.stop()
	cancel()
	os.Exit(code)
}

// procSignals cancels the context main gives run on SIGINT or SIGTERM,
// from the moment its start is called (see signals). Only main sets it:
// tests calling run catch no signal.
var procSignals *signals

// streams are a command's standard streams and environment.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// command is one subcommand.
type command struct {
	name string
	// args is the synopsis of the positional arguments ("" for none).
	args string
	// summary says what the command does, in a line or two.
	summary string
	// flags returns the command's flag set, the one its run function
	// parses (made by the same function), reporting errors to stderr;
	// "kimi-lsp help" lists it (see help.go).
	flags func(stderr io.Writer) *flag.FlagSet
	run   func(ctx context.Context, args []string, s streams) int
}

// flagsOnly adapts a command's flag-set constructor to command.flags.
func flagsOnly[T any](newFlags func(io.Writer) (*flag.FlagSet, T)) func(io.Writer) *flag.FlagSet {
	return func(stderr io.Writer) *flag.FlagSet {
		fs, _ := newFlags(stderr)
		return fs
	}
}

// commands are kimi-lsp's subcommands, in the order help lists them (set
// in init: help, which the commands call, reads the table).
var commands []command

func init() {
	commands = []command{
		{name: "serve", summary: "serve the Language Server Protocol on stdin/stdout (the default: editors start kimi-lsp this way)",
			flags: flagsOnly(newServeFlags),
			run: func(ctx context.Context, args []string, s streams) int {
				return cmdServe(ctx, args, s.stdin, s.stdout, s.stderr, s.getenv)
			}},
		{name: "acp", summary: "serve the Agent Client Protocol on stdin/stdout (also --acp): an agent for Zed, JetBrains IDEs, CodeCompanion, agent-shell and other ACP clients, whose edits are verified, asked for with their diff and budgeted",
			flags: flagsOnly(newACPFlags),
			run: func(ctx context.Context, args []string, s streams) int {
				return cmdACP(ctx, args, s.stdin, s.stdout, s.stderr, s.getenv)
			}},
		{name: "explain", args: "FILE[:START[-END]]", summary: "stream an explanation of the file or line range to stdout",
			flags: flagsOnly(newExplainFlags),
			run: func(ctx context.Context, args []string, s streams) int {
				return cmdExplain(ctx, args, s.stdout, s.stderr, s.getenv)
			}},
		{name: "edit", args: "FILE[:START[-END]]", summary: "print the model's edit as a unified diff; --write applies it",
			flags: flagsOnly(newEditFlags),
			run: func(ctx context.Context, args []string, s streams) int {
				return cmdEdit(ctx, args, s.stdout, s.stderr, s.getenv)
			}},
		{name: "review", args: "FILE[:START[-END]] | --diff", summary: "review the file, the line range or (--diff) the uncommitted changes against HEAD; prints FILE:LINE: severity: message",
			flags: flagsOnly(newReviewFlags),
			run: func(ctx context.Context, args []string, s streams) int {
				return cmdReview(ctx, args, s.stdout, s.stderr, s.getenv)
			}},
		{name: "doctor", summary: "print the settings that differ from their defaults and where each came from (the API key redacted; --all: every setting), the trust of the folder and the helper that checks each language's edits (its path and version, or how to install it), and check that the endpoint answers; the exit status is 1 when it lists a problem or a check fails",
			flags: flagsOnly(newDoctorFlags),
			run: func(ctx context.Context, args []string, s streams) int {
				return cmdDoctor(ctx, args, s.stdout, s.stderr, s.getenv)
			}},
		{name: "requests", summary: "print what left the machine: the newest requests sent to the provider (time, surface, model, files with their sizes, tokens, cost, outcome; never their contents)",
			flags: flagsOnly(newRequestsFlags),
			run: func(ctx context.Context, args []string, s streams) int {
				return cmdRequests(args, s.stdout, s.stderr, s.getenv)
			}},
		{name: "trust", args: "[DIR]", summary: "trust the folder DIR (default: the current directory) and everything below it: helpers that verify edits there run as your editor would run them, not restricted (adds it to trust.folders in your user config file)",
			flags: newTrustFlags("trust"),
			run: func(ctx context.Context, args []string, s streams) int {
				return cmdTrust(args, true, s.stdout, s.stderr, s.getenv)
			}},
		{name: "untrust", args: "[DIR]", summary: "stop trusting the folder DIR (default: the current directory): removes it from trust.folders in your user config file",
			flags: newTrustFlags("untrust"),
			run: func(ctx context.Context, args []string, s streams) int {
				return cmdTrust(args, false, s.stdout, s.stderr, s.getenv)
			}},
		{name: "version", summary: "print the version, the VCS revision and the Go toolchain of this build",
			flags: newVersionFlags,
			run:   func(ctx context.Context, args []string, s streams) int { return cmdVersion(args, s.stdout, s.stderr) }},
		{name: "help", args: "[COMMAND]", summary: "print this help, or one command's",
			flags: newHelpFlags,
			run:   func(ctx context.Context, args []string, s streams) int { return cmdHelp(args, s.stdout, s.stderr) }},
	}
}

// acpFlag reports whether args start the agent (--acp, as Copilot's
// language server takes it), and returns them without it.
func acpFlag(args []string) ([]string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == "--acp" || a == "-acp" {
			return append(append([]string(nil), args[:i]...), args[i+1:]...), true
		}
	}
	return nil, false
}

// lookup returns the command called name.
func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// run is the whole program, callable from tests: args without the program
// name, the three standard streams and the environment.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	s := streams{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	if len(args) == 0 || len(args[0]) == 0 || args[0][0] == '-' {
		// No command: serve, as editors start us. A help flag here asks
		// for the whole help, not serve's alone.
		if wantsHelp(args) {
			writeHelp(stdout)
			return 0
		}
		if rest, ok := acpFlag(args); ok {
			procSignals.start()
			return cmdACP(ctx, rest, stdin, stdout, stderr, getenv)
		}
		return cmdServe(ctx, args, stdin, stdout, stderr, getenv)
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "kimi-lsp: unknown command %q (the commands: %s; \"kimi-lsp help\" says more)\n", args[0], commandNames())
		return 2
	}
	if c.name != "serve" {
		procSignals.start() // serve starts it once initialize is answered
	}
	return c.run(ctx, args[1:], s)
}

// newVersionFlags returns version's flag set (no flags of its own).
func newVersionFlags(stderr io.Writer) *flag.FlagSet { return newFlagSet("version", stderr) }

// cmdVersion prints the version.
func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fs := newVersionFlags(stderr)
	if _, code, ok := parseFlags(fs, args, stdout, 0); !ok {
		return code
	}
	fmt.Fprintf(stdout, "kimi-lsp %s\n", versionLine())
	return 0
}
