package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/logx"
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
	env, err := setup(&lf, stderr, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 2
	}
	defer env.close()
	env.log.Info("kimi-lsp starting", "version", version(), "pid", os.Getpid())
	return lsp.Serve(ctx, stdin, stdout, lsp.Options{
		Version:  version(),
		Logger:   env.log,
		Config:   env.cfg,
		OnConfig: env.onConfig,
		Redact:   env.redactor.Redact,
	})
}

// runEnv is what every subcommand starts from: the configuration from
// defaults, the user file and the environment, and a logger that redacts
// the API key.
type runEnv struct {
	cfg      config.Config
	log      *slog.Logger
	level    *slog.LevelVar
	redactor *logx.Redactor
	fixed    bool // the level was set by --log-level
	close    func()

	// mu guards keys: every API key seen, so an old one stays redacted.
	mu   sync.Mutex
	keys []string
}

func setup(lf *logFlags, stderr io.Writer, getenv func(string) string) (*runEnv, error) {
	w, closeLog, err := lf.open(stderr)
	if err != nil {
		return nil, err
	}
	e := &runEnv{level: new(slog.LevelVar), redactor: logx.NewRedactor(), close: closeLog}
	e.log = slog.New(logx.NewHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: e.level}), e.redactor))
	if lf.level != "" {
		l, err := parseLevel(lf.level)
		if err != nil {
			closeLog()
			return nil, err
		}
		e.level.Set(l)
		e.fixed = true
	}
	cfg, errs := config.Load(getenv, config.UserFilePath(getenv))
	e.onConfig(cfg)
	for _, err := range errs {
		if config.IsWarning(err) {
			e.log.Warn("configuration", "problem", err.Error())
		} else {
			e.log.Error("configuration (the defaults stay in use for this value)", "problem", err.Error())
		}
	}
	e.cfg = cfg
	return e, nil
}

// onConfig keeps the redactor and the log level in step with the
// configuration.
func (e *runEnv) onConfig(cfg config.Config) {
	e.mu.Lock()
	if k := cfg.APIKey.Reveal(); k != "" && !slices.Contains(e.keys, k) {
		e.keys = append(e.keys, k)
		e.redactor.SetSecrets(e.keys...)
	}
	e.mu.Unlock()
	if !e.fixed {
		e.level.Set(cfg.Level())
	}
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
