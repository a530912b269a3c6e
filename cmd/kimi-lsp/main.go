// Command kimi-lsp is a language server that brings the Kimi K3.1 models
// into any LSP editor. Run without arguments (or with --stdio) it serves LSP
// on standard input and output; see "kimi-lsp help" for the subcommands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// run is the whole program, callable from tests: args without the program
// name, the three standard streams and the environment.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return cmdServe(ctx, args, stdin, stdout, stderr, getenv)
	case "version":
		fmt.Fprintf(stdout, "kimi-lsp %s\n", version())
		return 0
	case "doctor":
		return cmdDoctor(ctx, args, stdout, stderr, getenv)
	case "explain":
		return cmdExplain(ctx, args, stdout, stderr, getenv)
	case "edit":
		return cmdEdit(ctx, args, stdout, stderr, getenv)
	case "help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "kimi-lsp: unknown command %q\n\n", cmd)
		usage(stderr)
		return 2
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage:
  kimi-lsp [--stdio] [--log-file FILE] [--log-level LEVEL]
        serve the Language Server Protocol on stdin/stdout
  kimi-lsp version
        print the version
  kimi-lsp doctor [--stats] [--timeout 10s]
        print the effective configuration and where each value came from
        (the API key redacted), and check that the endpoint answers
  kimi-lsp explain FILE[:START[-END]]
        stream an explanation of the file or line range to stdout
  kimi-lsp edit FILE[:START[-END]] -m "instruction" [--write]
        print the model's edit as a unified diff; write it with --write

Environment: KIMI_API_KEY, KIMI_BASE_URL, KIMI_MODEL (see README.md).
`)
}
