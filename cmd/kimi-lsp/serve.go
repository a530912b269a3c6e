package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/logx"
	"github.com/kimi-lsp/kimi-lsp/assist/redact"
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

// newServeFlags returns serve's flag set and the logging flags it fills
// (its other flags are accepted and ignored).
func newServeFlags(stderr io.Writer) (*flag.FlagSet, *logFlags) {
	fs := newFlagSet("serve", stderr)
	lf := new(logFlags)
	lf.register(fs)
	fs.Bool("stdio", true, "serve on stdin/stdout (the default; accepted because VS Code passes it)")
	fs.Int("clientProcessId", 0, "the editor's `PID`, ignored: kimi-lsp takes it from initialize")
	return fs, lf
}

func cmdServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, lf := newServeFlags(stderr)
	if _, code, ok := parseFlags(fs, args, stdout, 0); !ok {
		return code
	}
	if isTerminal(stdin) {
		// A person typed the command: nothing would happen until they
		// typed LSP frames, so say what this mode is for.
		fmt.Fprintln(stderr, `kimi-lsp: speaking the Language Server Protocol on stdin/stdout, for an editor to start; to try it by hand, run "kimi-lsp explain FILE:START-END" (Ctrl-C or Ctrl-D quits, "kimi-lsp help" lists every command)`)
		procSignals.start() // no editor waits for a reply: Ctrl-C ends the session as usual
	}
	env, err := setup(lf, stderr, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 2
	}
	defer env.close()
	tuneGC(getenv)
	log, toEditor := env.log, false
	if lf.file == "" {
		// Editors log a server's stderr as errors (Neovim's lsp.log
		// tags every line [ERROR]): stderr keeps the errors, and the
		// editor gets the rest as window/logMessage.
		log, toEditor = slog.New(errorsOnly{env.log.Handler()}), true
	}
	return lsp.Serve(ctx, stdin, stdout, lsp.Options{
		Getenv:         getenv,
		Version:        version(),
		Logger:         log,
		LogToEditor:    toEditor,
		Config:         env.cfg,
		ConfigProblems: env.problems,
		OnConfig:       env.onConfig,
		UserFile:       config.UserFilePath(getenv),
		Redact:         env.redactor.String,
		HTTPClient:     modelHTTP,
		Replied:        procSignals.start,
	})
}

// modelHTTP carries the model requests of every command. It is nil in the
// program (the model package's own client); this package's tests set it to
// a transport that records what would leave the machine.
var modelHTTP *http.Client

// runEnv is what every subcommand starts from: the configuration from
// defaults, the user file and the environment, and a logger that redacts
// the API key.
type runEnv struct {
	cfg      config.Config
	log      *slog.Logger
	level    *slog.LevelVar
	redactor *redact.Redactor
	// problems are those of the configuration sources read (logProblems
	// logs them; the server shows them to the editor).
	problems []error
	// workspaceFile is the workspace file read (withWorkspace), "" for none.
	workspaceFile string
	fixed         bool // the level was set by --log-level
	close         func()
	getenv        func(string) string

	// mu guards keys: every API key seen, so an old one stays redacted.
	mu   sync.Mutex
	keys []string
}

func setup(lf *logFlags, stderr io.Writer, getenv func(string) string) (*runEnv, error) {
	w, closeLog, err := lf.open(stderr)
	if err != nil {
		return nil, err
	}
	e := &runEnv{level: new(slog.LevelVar), redactor: redact.New(), close: closeLog, getenv: getenv}
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
	e.cfg, e.problems = cfg, errs
	return e, nil
}

// errorsOnly passes the records of errors on to its handler and drops the
// others; it enables what the handler enables, so that the server's
// logger, which forwards every enabled record to the editor
// (lsp.Options.LogToEditor), still sees them.
type errorsOnly struct{ next slog.Handler }

func (h errorsOnly) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h errorsOnly) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h errorsOnly) WithAttrs(attrs []slog.Attr) slog.Handler {
	return errorsOnly{h.next.WithAttrs(attrs)}
}

func (h errorsOnly) WithGroup(name string) slog.Handler { return errorsOnly{h.next.WithGroup(name)} }

// configRoot returns the folder whose .kimi-lsp.toml the commands read for
// a file in dir: the nearest directory at or above dir that holds
// .kimi-lsp.toml or .git, as an editor opening the repository (or that
// folder) would; a .kimi-lsp.toml above the repository is never read. It
// returns "" when there is none.
func configRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(config.WorkspaceFile(d)); err == nil {
			return d
		}
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// withWorkspace adds the workspace file of the folder root (configRoot)
// to the configuration, with the server's rules: it cannot set apiKey,
// baseURL and the other keys a repository may not set.
func (e *runEnv) withWorkspace(root string) {
	if root == "" {
		return
	}
	e.workspaceFile = config.WorkspaceFile(root)
	cfg, errs := e.cfg.WithWorkspaceFiles(e.workspaceFile)
	e.onConfig(cfg)
	e.cfg, e.problems = cfg, append(e.problems, errs...)
}

// logProblems logs the configuration's problems: the warnings that drop
// nothing one by one, the others by source with what they cost
// (config.Report).
func (e *runEnv) logProblems() {
	for _, err := range e.problems {
		if config.IsWarning(err) && !config.IsDropped(err) {
			e.log.Warn("configuration", "problem", err.Error())
		}
	}
	for _, line := range config.Report(e.problems) {
		e.log.Error("configuration", "problem", line)
	}
}

// onConfig keeps the redactor and the log level in step with the
// configuration.
func (e *runEnv) onConfig(cfg config.Config) {
	e.mu.Lock()
	if k := cfg.APIKey.Reveal(); k != "" && !slices.Contains(e.keys, k) {
		e.keys = append(e.keys, k)
		e.redactor.Set(e.keys...)
	}
	e.mu.Unlock()
	if !e.fixed {
		e.level.Set(cfg.Level())
	}
}

// version returns the version of this build for logs and the editor: the
// module version (a release tag for "go install …@vX", a pseudo-version
// for a build in a git clone), else "devel", with the VCS revision when the
// build recorded one.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return describeBuild(bi, false)
}

// versionLine is the line "kimi-lsp version" prints: version() with the
// commit time and the Go toolchain, and what to do when the build recorded
// neither a module version nor a revision.
func versionLine() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel (no build information in this binary)"
	}
	return describeBuild(bi, true)
}

// describeBuild words bi: "v1.2.3", "v0.0.0-20261201111908-0e08bdbd2d07
// (0e08bdbd2d07)", "devel (0e08bdbd2d07+dirty)". long adds the commit time
// and the Go version, and for a build that recorded neither a module
// version nor a revision, a second line saying how to get them.
func describeBuild(bi *debug.BuildInfo, long bool) string {
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, dirty, when string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		case "vcs.time":
			when = s.Value
		}
	}
	var notes []string
	if rev != "" {
		note := rev[:min(len(rev), 12)] + dirty
		if long && when != "" {
			note += " of " + when
		}
		notes = append(notes, note)
	}
	if long && bi.GoVersion != "" {
		notes = append(notes, bi.GoVersion)
	}
	out := v
	if len(notes) > 0 {
		out += " (" + strings.Join(notes, ", ") + ")"
	}
	if long && v == "devel" && rev == "" {
		out += "\nThis build recorded neither a module version nor a VCS revision (built with -buildvcs=false, " +
			"or outside a git clone): \"go install -buildvcs=true ./cmd/kimi-lsp\" in a git clone records the revision."
	}
	return out
}
