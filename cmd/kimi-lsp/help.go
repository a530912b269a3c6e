package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Every command makes its flag set with newFlagSet, in a function of its
// own (newDoctorFlags, …) that the command table names (command.flags), and
// parses it with parseFlags. That gives every command the same rules (flags
// before or after the arguments, "-h"/"--help" printing help to stdout with
// exit 0) and lets "kimi-lsp help" list the real flags of each command
// without running it: the command and its help get their flag set from the
// same function.

// newFlagSet returns an empty flag set for the command name that reports
// parse errors to stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // parseFlags prints help itself, to stdout
	return fs
}

// anyArgs as parseFlags' want accepts any number of positional arguments.
const anyArgs = -1

// parseFlags parses args with fs, flags and positional arguments in any
// order: "explain a.go -m why" is "explain -m why a.go". "--" ends the
// flags. want is the number of positional arguments the command takes
// (anyArgs: any). It returns the positional arguments and ok; when ok is
// false the command returns code at once: 0 after printing the help that
// "-h" asked for, 2 after a usage error printed to fs's output.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer, want int) (pos []string, code int, ok bool) {
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			writeCommandHelp(stdout, fs)
			return nil, 0, false
		}
		if err != nil {
			// The flag package has printed the error.
			fmt.Fprintf(fs.Output(), "Run \"kimi-lsp help %s\" for the usage.\n", fs.Name())
			return nil, 2, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...) // everything after "--" is an argument
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if want != anyArgs && len(pos) != want {
		c, _ := lookup(fs.Name())
		switch {
		case want == 0:
			fmt.Fprintf(fs.Output(), "kimi-lsp %s: unexpected arguments %q\n", fs.Name(), pos)
		case len(pos) == 0:
			fmt.Fprintf(fs.Output(), "kimi-lsp %s: missing %s\n", fs.Name(), c.args)
		default:
			fmt.Fprintf(fs.Output(), "kimi-lsp %s: want one %s, got %d arguments %q (quote a question or instruction given with -m)\n", fs.Name(), c.args, len(pos), pos)
		}
		fmt.Fprintf(fs.Output(), "Usage: %s\nRun \"kimi-lsp help %s\" for more.\n", synopsis(c), fs.Name())
		return nil, 2, false
	}
	return pos, 0, true
}

// flagsOf returns the flag set of command c, without running it.
func flagsOf(c command) *flag.FlagSet {
	if c.flags == nil {
		return newFlagSet(c.name, io.Discard)
	}
	return c.flags(io.Discard)
}

// commonFlags returns the flags every command but help and version has
// (the logging flags) and their names.
func commonFlags() (*flag.FlagSet, map[string]bool) {
	fs := newFlagSet("common", io.Discard)
	new(logFlags).register(fs)
	names := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	return fs, names
}

// wantsHelp tells whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "--h":
			return true
		}
	}
	return false
}

// commandNames lists the command names for messages.
func commandNames() string {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}

// synopsis is "kimi-lsp NAME ARGS [flags]".
func synopsis(c command) string {
	s := "kimi-lsp " + c.name
	if c.name == "serve" {
		s = "kimi-lsp [serve]"
	}
	if c.args != "" {
		s += " " + c.args
	}
	if c.name != "help" && c.name != "version" {
		s += " [flags]"
	}
	return s
}

// newHelpFlags returns help's flag set (no flags of its own).
func newHelpFlags(stderr io.Writer) *flag.FlagSet { return newFlagSet("help", stderr) }

// cmdHelp prints the whole help, or one command's.
func cmdHelp(args []string, stdout, stderr io.Writer) int {
	fs := newHelpFlags(stderr)
	pos, code, ok := parseFlags(fs, args, stdout, anyArgs)
	if !ok {
		return code
	}
	switch len(pos) {
	case 0:
		writeHelp(stdout)
		return 0
	case 1:
		c, found := lookup(pos[0])
		if !found {
			fmt.Fprintf(stderr, "kimi-lsp help: unknown command %q (the commands: %s)\n", pos[0], commandNames())
			return 2
		}
		writeCommandHelp(stdout, flagsOf(c))
		return 0
	default:
		fmt.Fprintf(stderr, "kimi-lsp help: one command at most, got %q\n", pos)
		return 2
	}
}

// writeHelp prints the whole help: every command with its own flags, then
// the flags all commands share.
func writeHelp(w io.Writer) {
	fmt.Fprint(w, `kimi-lsp: the Kimi K3.1 models in any LSP editor, and the same engine on the command line.

Usage:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %s\n", synopsis(c))
	}
	fmt.Fprint(w, `
Flags may come before or after the arguments ("--" ends them); -flag and --flag are the same.

Commands:
`)
	shared, common := commonFlags()
	for _, c := range commands {
		fs := flagsOf(c)
		fmt.Fprintf(w, "\n  %s\n", synopsis(c))
		fmt.Fprintf(w, "      %s\n", c.summary)
		writeFlags(w, fs, "      ", func(name string) bool { return !common[name] })
	}
	fmt.Fprint(w, "\nFlags of every command except help and version:\n")
	writeFlags(w, shared, "  ", func(name string) bool { return common[name] })
	fmt.Fprint(w, `
Examples:
  kimi-lsp explain main.go:10-30 -m "why does this loop twice?"
  kimi-lsp edit main.go:10-30 -m "return the error instead of logging it"
  kimi-lsp edit main.go:10-30 -m "return the error instead of logging it" --write
  kimi-lsp doctor

Environment: KIMI_API_KEY, KIMI_BASE_URL (any OpenAI-compatible endpoint), KIMI_MODEL.
Configuration: ~/.config/kimi-lsp/config.toml, then the workspace's .kimi-lsp.toml (for explain and
edit, that of the nearest folder above the file holding .kimi-lsp.toml or .git; for doctor, above the
current directory or --dir), then the environment: what the server reads (see README.md).
`)
}

// writeCommandHelp prints the help of the command fs belongs to.
func writeCommandHelp(w io.Writer, fs *flag.FlagSet) {
	c, ok := lookup(fs.Name())
	if !ok {
		c = command{name: fs.Name()}
	}
	fmt.Fprintf(w, "Usage: %s\n\n%s.\n", synopsis(c), upperFirst(c.summary))
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprint(w, "\nFlags (before or after the arguments):\n")
		writeFlags(w, fs, "  ", func(string) bool { return true })
	}
	fmt.Fprint(w, "\nRun \"kimi-lsp help\" for every command.\n")
}

// writeFlags prints the flags of fs that keep accepts, one entry each:
// "--name VALUE" after indent, then the usage below it, with the default
// when it is not the zero value and the usage does not speak of it.
func writeFlags(w io.Writer, fs *flag.FlagSet, indent string, keep func(string) bool) {
	fs.VisitAll(func(f *flag.Flag) {
		if !keep(f.Name) {
			return
		}
		value, usage := flag.UnquoteUsage(f)
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		line := indent + dash + f.Name
		if value != "" {
			line += " " + value
		}
		if !slices.Contains([]string{"", "0", "false", "0s"}, f.DefValue) && !strings.Contains(usage, "default") {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "%s\n%s      %s\n", line, indent, usage)
	})
}

// upperFirst capitalises the first letter of s.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
