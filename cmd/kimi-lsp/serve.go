package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/lsp"
)

// logFlags are the logging flags shared by the subcommands.
type logFlags struct {
	file  string
	level string
}

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.file, "log-file", "", "append the log to `FILE` instead of stderr")
	fs.StringVar(&l.level, "log-level", "", "log `LEVEL`: debug, info, warn or error (default info, or logLevel from the configuration)")
}

// open returns the log destination and a function that closes it.
func (l *logFlags) open(stderr io.Writer) (io.Writer, func(), error) {
	if l.file == "" {
		return stderr, func() {}, nil
	}
	f, err := os.OpenFile(l.file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("opening log file: %w", err)
	}
	return f, func() { f.Close() }, nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(s))); err != nil {
		return 0, fmt.Errorf("invalid log level %q (want debug, info, warn or error)", s)
	}
	return l, nil
}

func cmdServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("kimi-lsp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var lf logFlags
	lf.register(fs)
	fs.Bool("stdio", true, "serve on stdin/stdout (the default; accepted because VS Code passes it)")
	fs.Int("clientProcessId", 0, "ignored; the editor's process id is taken from initialize")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kimi-lsp: unexpected arguments %q\n", fs.Args())
		return 2
	}
	w, closeLog, err := lf.open(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 1
	}
	defer closeLog()
	level := slog.LevelInfo
	if lf.level != "" {
		if level, err = parseLevel(lf.level); err != nil {
			fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
			return 2
		}
	}
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	log.Info("kimi-lsp starting", "version", version(), "pid", os.Getpid())
	return lsp.Serve(ctx, stdin, stdout, lsp.Options{Version: version(), Logger: log})
}

// version returns the module version and VCS revision the binary was built
// from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " (" + rev + dirty + ")"
	}
	return v
}
