package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// doctorFlags are the values doctor's flags parse into.
type doctorFlags struct {
	log            logFlags
	stats, offline *bool
	all            *bool
	timeout        *time.Duration
	dir            *string
}

// newDoctorFlags returns doctor's flag set and the values it fills.
func newDoctorFlags(stderr io.Writer) (*flag.FlagSet, *doctorFlags) {
	fs := newFlagSet("doctor", stderr)
	f := new(doctorFlags)
	f.log.register(fs)
	f.stats = fs.Bool("stats", false, "also print the prompt-cache statistics of the last editor session")
	f.timeout = fs.Duration("timeout", 15*time.Second, "bound on the endpoint check")
	f.offline = fs.Bool("offline", false, "skip the endpoint check")
	f.all = fs.Bool("all", false, "list every setting, those at their defaults too")
	f.dir = fs.String("dir", "", "the `DIR` whose workspace file (.kimi-lsp.toml) is read (default: the current directory)")
	return fs, f
}

// cmdDoctor prints the effective configuration with the source of every
// value (the key redacted) and checks the endpoint with a tiny request.
func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, f := newDoctorFlags(stderr)
	lf, stats, timeout, offline, dir := &f.log, f.stats, f.timeout, f.offline, f.dir
	if _, code, ok := parseFlags(fs, args, stdout, 0); !ok {
		return code
	}
	if lf.level == "" {
		lf.level = "error"
	}
	env, err := setup(lf, stderr, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 2
	}
	defer env.close()
	if *dir == "" {
		*dir, _ = os.Getwd()
	}
	folder := *dir
	if abs, err := filepath.Abs(*dir); err == nil {
		env.withWorkspace(configRoot(abs))
		folder = cmp.Or(configRoot(abs), abs)
	}
	cfg := env.cfg
	fmt.Fprintf(stdout, "kimi-lsp %s\n\nConfiguration (lowest to highest precedence: default, user file, workspace file, environment, editor):\n", version())
	fmt.Fprintf(stdout, "  user file: %s\n", config.UserFilePath(getenv))
	fmt.Fprintf(stdout, "  workspace file: %s\n", cmp.Or(env.workspaceFile, "none (no .kimi-lsp.toml or .git at or above "+*dir+")"))
	printSettings(stdout, cfg, *f.all)
	fmt.Fprintf(stdout, "\nTrust:\n  %s\n", trustLine(cfg, folder))
	printHelpers(ctx, stdout, cfg, folder, getenv("PATH"))
	code := 0
	if errs := env.problems; len(errs) > 0 {
		fmt.Fprintln(stdout, "\nProblems:")
		for _, line := range config.Report(errs) {
			fmt.Fprintf(stdout, "  %s\n", line)
		}
		for _, e := range errs {
			if config.IsWarning(e) && !config.IsDropped(e) {
				fmt.Fprintf(stdout, "  %s\n", e)
			}
		}
		code = 1 // a check that lists problems does not pass
	}
	if *stats {
		printStats(stdout, statsFile(getenv), env.redactor.String)
	}
	if *offline {
		return code
	}
	fmt.Fprintf(stdout, "\nEndpoint %s:\n", cfg.BaseURL)
	if _, err := provider.Key(cfg); err != nil {
		fmt.Fprintf(stdout, "  not checked: %v\n", err)
		return 1
	}
	client := provider.NewClient(cfg, provider.ClientOptions{HTTPClient: modelHTTP, Logger: env.log, MaxAttempts: 1})
	ledger := assist.OpenLedger(getenv, cfg.Budget, env.log)
	defer ledger.Close()
	code = max(code, checkModels(ctx, stdout, cfg, client, *timeout, env.redactor.String, ledger))
	return code
}

// statsFile is assist.DefaultStatsFile for the environment getenv: the
// user cache directory is $XDG_CACHE_HOME, else $HOME/.cache.
func statsFile(getenv func(string) string) string {
	dir := getenv("XDG_CACHE_HOME")
	if dir == "" {
		dir = filepath.Join(getenv("HOME"), ".cache")
	}
	return filepath.Join(dir, "kimi-lsp", "stats.json")
}

// printStats prints the statistics the last editor session saved in path.
func printStats(w io.Writer, path string, redact func(string) string) {
	fmt.Fprintln(w, "\nPrompt cache (last editor session):")
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(w, "  no statistics yet (%s)\n", redact(err.Error()))
		return
	}
	var st cache.Stats
	if err := json.Unmarshal(b, &st); err != nil {
		fmt.Fprintf(w, "  unreadable statistics in %s: %v\n", path, err)
		return
	}
	fmt.Fprintf(w, "  requests            %d\n", st.Requests)
	fmt.Fprintf(w, "  prompt tokens       %d\n", st.PromptTokens)
	fmt.Fprintf(w, "  cached tokens       %d (hit ratio %.1f%%)\n", st.CachedTokens, 100*st.HitRatio)
	fmt.Fprintf(w, "  cache write tokens  %d\n", st.CacheWriteTokens)
	fmt.Fprintf(w, "  output tokens       %d (%d reasoning)\n", st.OutputTokens, st.ReasoningTokens)
	fmt.Fprintf(w, "  estimated cost      $%.4f (input $%.4f; the same input uncached: $%.4f)\n", st.CostUSD, st.InputCostUSD, st.UncachedInputCostUSD)
}

// target is FILE[:START[-END]] of the explain and edit commands.
type target struct {
	name       string // FILE as given
	path       string // absolute
	span       string // START[-END] as given, for messages
	text       []byte // the file's contents, read by checkTarget
	start, end int    // 1-based inclusive lines; 0 = whole file
}

func parseTarget(s string) (target, error) {
	var t target
	file, lines := s, ""
	if i := strings.LastIndexByte(s, ':'); i > 0 {
		if _, err := os.Stat(s); err != nil { // a file name may contain ':'
			file, lines = s[:i], s[i+1:]
		}
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return t, err
	}
	t.name, t.path = file, abs
	if lines == "" {
		return t, nil
	}
	a, b, hasEnd := strings.Cut(lines, "-")
	var ok bool
	if t.start, ok = lineNumber(a); !ok || t.start < 1 {
		return t, fmt.Errorf("%q: START must be a line number ≥ 1", s)
	}
	t.end = t.start
	if hasEnd {
		if t.end, ok = lineNumber(b); !ok || t.end < t.start {
			return t, fmt.Errorf("%q: END must be a line number ≥ START", s)
		}
	}
	t.span = lines
	return t, nil
}

// lineNumber parses a line number; one too large for an int is taken as
// math.MaxInt (past the end of any file, which checkTarget says).
func lineNumber(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-") {
		return math.MaxInt, true
	}
	return n, err == nil
}

// readTarget reads the file a command names. Only a regular file (or a
// link to one) is read: the open does not wait for a FIFO's writer, and a
// device, socket or directory is refused, so a command never hangs on one.
func readTarget(t *target) error {
	f, err := os.OpenFile(t.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file", t.name)
	case err != nil:
		return fmt.Errorf("cannot read %s: %w", t.name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", t.name, err)
	}
	switch {
	case fi.IsDir():
		return fmt.Errorf("%s is a directory: name a file in it", t.name)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%s)", t.name, workspace.FileKind(fi.Mode()))
	}
	if t.text, err = io.ReadAll(f); err != nil {
		return fmt.Errorf("cannot read %s: %w", t.name, err)
	}
	return nil
}

// checkTarget reads the target (readTarget) and refuses a line range past
// the end of the file, before any request is made.
func checkTarget(t *target) error {
	if err := readTarget(t); err != nil {
		return err
	}
	n := countLines(t.text)
	lines := func() string {
		if n == 1 {
			return "1 line"
		}
		return fmt.Sprintf("%d lines", n)
	}
	switch {
	case t.start == 0:
		return nil
	case t.start > n:
		return fmt.Errorf("%s:%s is past the end of %s, which has %s", t.name, t.span, t.name, lines())
	case t.end > n:
		return fmt.Errorf("%s:%s ends past the end of %s, which has %s (%s:%d-%d is the rest of the file)", t.name, t.span, t.name, lines(), t.name, t.start, n)
	}
	return nil
}

// countLines counts the lines of a text: a final line without a newline
// counts, an empty text has none.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// workspaceRoot is the nearest directory above path holding .git or
// go.mod, else path's directory.
func workspaceRoot(path string) string {
	dir := filepath.Dir(path)
	for d := dir; ; d = filepath.Dir(d) {
		for _, marker := range []string{".git", "go.mod"} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// cliTask prepares a task on a file outside any editor, with the task
// builder the server uses.
func cliTask(ctx context.Context, env *runEnv, action string, tg target, instruction string) (*assist.Engine, *assist.Task, func(), error) {
	cfg := env.cfg
	text := string(tg.text)
	root := workspaceRoot(tg.path)
	folders := workspace.NewFolders(assist.WorkspaceOptions(cfg), workspace.Hooks{Logger: env.log})
	cleanup := func() { folders.Close() }
	fail := func(err error) (*assist.Engine, *assist.Task, func(), error) {
		cleanup()
		return nil, nil, nil, err
	}
	if err := folders.Add(workspace.FileURI(root), filepath.Base(root)); err != nil {
		return fail(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := folders.Ready(wctx); err != nil {
		env.log.Warn("workspace scan incomplete", "error", err)
	}
	snap := workspace.NewSnapshot(workspace.FileURI(tg.path), workspace.LanguageOf(tg.path), 0, text)
	req := assist.TaskRequest{Action: action, Instruction: instruction, Document: snap, End: len(text), Review: action == config.ActionReview}
	if tg.start > 0 {
		req.Start, req.End = snap.LineStart(tg.start-1), snap.LineEnd(tg.end-1)
	}
	t, err := assist.BuildTask(cfg, folders, req)
	if err != nil {
		return fail(err)
	}
	// Recorded and counted like the editor's requests; not asked about (the
	// user just typed the request), the log says when it would have been.
	ledger := assist.OpenLedger(env.getenv, cfg.Budget, env.log)
	var verifyFolders func() []workspace.URI
	if action != config.ActionExplain {
		verifyFolders = func() []workspace.URI { return []workspace.URI{workspace.FileURI(root)} }
	}
	engine, err := assist.NewEngine(assist.Options{Config: cfg, Logger: env.log, HTTPClient: modelHTTP, Ledger: ledger, VerifyFolders: verifyFolders})
	if err != nil {
		return fail(err)
	}
	cleanup = func() {
		engine.Close() // the helper language servers
		folders.Close()
		ledger.Close()
	}
	return engine, t, cleanup, nil
}

// terminalSink streams the answer to stdout and, when stderr is a terminal,
// a one-line activity indicator to stderr.
type terminalSink struct {
	out, errw io.Writer
	tty       bool
	printText bool
	spin      int
	shown     bool
}

func (s *terminalSink) Reasoning(string) { s.tick("thinking…") }

func (s *terminalSink) Content(delta string) {
	s.clear()
	if s.printText {
		io.WriteString(s.out, delta)
	} else {
		s.tick("writing…")
	}
}

func (s *terminalSink) Status(msg string) { s.tick(msg) }

// Round shows why another model call is made, when it says.
func (s *terminalSink) Round(note string) {
	if note != "" {
		s.tick(note)
	}
}

func (s *terminalSink) tick(msg string) {
	if !s.tty {
		return
	}
	frames := `|/-\`
	s.spin++
	fmt.Fprintf(s.errw, "\r\033[K%c %s", frames[s.spin%len(frames)], msg)
	s.shown = true
}

func (s *terminalSink) clear() {
	if s.shown {
		fmt.Fprint(s.errw, "\r\033[K")
		s.shown = false
	}
}

// isTerminal tells whether the stream (an *os.File for the real ones) is
// a terminal.
func isTerminal(stream any) bool {
	f, ok := stream.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// explainFlags are the values explain's flags parse into.
type explainFlags struct {
	log             logFlags
	question, model *string
}

// newExplainFlags returns explain's flag set and the values it fills.
func newExplainFlags(stderr io.Writer) (*flag.FlagSet, *explainFlags) {
	fs := newFlagSet("explain", stderr)
	f := new(explainFlags)
	f.log.register(fs)
	f.question = fs.String("m", "", "a `question` about the code (optional)")
	f.model = modelFlag(fs)
	return fs, f
}

// cmdExplain streams an explanation of a file or line range to stdout.
func cmdExplain(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, f := newExplainFlags(stderr)
	pos, code, ok := parseFlags(fs, args, stdout, 1)
	if !ok {
		return code
	}
	return runCLI(ctx, &f.log, stdout, stderr, getenv, pos[0], config.ActionExplain, *f.question, *f.model, false)
}

// editFlags are the values edit's flags parse into.
type editFlags struct {
	log                        logFlags
	instruction, action, model *string
	write                      *bool
}

// newEditFlags returns edit's flag set and the values it fills.
func newEditFlags(stderr io.Writer) (*flag.FlagSet, *editFlags) {
	fs := newFlagSet("edit", stderr)
	f := new(editFlags)
	f.log.register(fs)
	f.instruction = fs.String("m", "", "the `instruction` (required for rewrite, the default action)")
	f.write = fs.Bool("write", false, "write the edit to the files (else only print the diff)")
	f.action = fs.String("action", config.ActionRewrite, "the action `NAME`: rewrite, fix, document, tests or one defined in the configuration")
	f.model = modelFlag(fs)
	return fs, f
}

// cmdEdit asks for an edit and prints it as a unified diff; --write writes
// it.
func cmdEdit(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, f := newEditFlags(stderr)
	lf, instruction, write, action, model := &f.log, f.instruction, f.write, f.action, f.model
	pos, code, ok := parseFlags(fs, args, stdout, 1)
	if !ok {
		return code
	}
	if *instruction == "" && *action == config.ActionRewrite {
		fmt.Fprintln(stderr, `kimi-lsp edit: say what to change with -m "instruction" (or pick another --action: fix, document, tests)`)
		fmt.Fprintf(stderr, "Usage: kimi-lsp edit FILE[:START[-END]] -m \"instruction\" [--write] [--action NAME]\n")
		return 2
	}
	return runCLI(ctx, lf, stdout, stderr, getenv, pos[0], *action, *instruction, *model, *write)
}

// modelFlag registers --model, the model that answers one run.
func modelFlag(fs *flag.FlagSet) *string {
	return fs.String("model", "", "the `MODEL` that answers (default: fastModel for explain, model for edit; "+
		"for a local OpenAI-compatible server, the name it serves)")
}

func runCLI(ctx context.Context, lf *logFlags, stdout, stderr io.Writer, getenv func(string) string, arg, action, instruction, model string, write bool) int {
	if lf.level == "" {
		lf.level = "warn"
	}
	env, err := setup(lf, stderr, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 2
	}
	defer env.close()
	tg, err := parseTarget(arg)
	if err == nil {
		err = checkTarget(&tg)
	}
	if err != nil {
		env.logProblems()
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 2
	}
	// The sources the server reads for this file: the user file, the
	// workspace file of its folder, the environment.
	env.withWorkspace(configRoot(filepath.Dir(tg.path)))
	env.logProblems()
	if model != "" {
		env.cfg.Model, env.cfg.FastModel = model, model
	}
	engine, task, cleanup, err := cliTask(ctx, env, action, tg, instruction)
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %s\n", env.redactor.String(err.Error()))
		return 1
	}
	defer cleanup()
	if task.Notice != "" {
		fmt.Fprintf(stderr, "kimi-lsp: %s\n", task.Notice)
	}
	if task.NeedsInstruction {
		task.Instruction = assist.DefaultRewriteInstruction
	}
	sink := &terminalSink{out: stdout, errw: stderr, tty: isTerminal(stderr), printText: task.Action.Result == config.ResultExplain}
	out, err := engine.Run(ctx, *task, sink)
	sink.clear()
	if err != nil {
		if out != nil && task.Action.Result == config.ResultExplain && out.Text != "" && !strings.HasSuffix(out.Text, "\n") {
			fmt.Fprintln(stdout) // end the part of the answer that streamed
		}
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "kimi-lsp: cancelled")
			return 130
		}
		if sum := assist.Summarize(out, err); sum.Kind == assist.LandNoChange {
			// The model's answer says why it changed nothing: show it
			// (on stderr: stdout carries only diffs).
			fmt.Fprintf(stderr, "kimi-lsp: the model proposed no change; its answer:\n\n%s\n", config.CleanLines(env.redactor.String(sum.Reason)))
			return 1
		}
		fmt.Fprintf(stderr, "kimi-lsp: %s\n", env.redactor.String(err.Error()))
		return 1
	}
	if task.Action.Result == config.ResultReview {
		printFindings(stdout, stderr, tg.name, out)
		return 0
	}
	if task.Action.Result == config.ResultExplain {
		if !strings.HasSuffix(out.Text, "\n") {
			fmt.Fprintln(stdout)
		}
		return 0
	}
	root := workspaceRoot(tg.path)
	var diffText strings.Builder
	for _, c := range out.Changes {
		diffText.WriteString(c.Diff(root))
	}
	// The diff is meant for git apply or patch; patch.Unified's tests hold
	// it to a strict, independent reader (go-diff, a test oracle).
	fmt.Fprint(stdout, diffText.String())
	if note := out.RedoneNote(); note != "" {
		fmt.Fprintf(stderr, "kimi-lsp: %s\n", env.redactor.String(note))
	}
	line := out.Verification.Line()
	if line != "" {
		fmt.Fprintf(stderr, "kimi-lsp: %s\n", line)
	}
	if !write {
		fmt.Fprintln(stderr, "kimi-lsp: not written (use --write to apply)")
		return 0
	}
	if vd := out.Verification.Decide(ctx, env.cfg.Verify.OnNewErrors, nil); !vd.Land {
		// No one to ask here (a nil ask): repair (done) and ask write
		// nothing, as refuse does.
		fmt.Fprintf(stderr, "kimi-lsp: not written: the edit brings new errors (verify.onNewErrors = %q; \"apply\" writes it anyway)\n", env.cfg.Verify.OnNewErrors)
		return 1
	}
	rebased, err := assist.WriteChanges(ctx, root, out.Changes)
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 1
	}
	for _, name := range rebased {
		fmt.Fprintf(stderr, "kimi-lsp: %s changed on disk while the model ran; the edit was applied on top of that change\n", name)
	}
	fmt.Fprintf(stderr, "kimi-lsp: wrote %d %s\n", len(out.Changes), map[bool]string{true: "file", false: "files"}[len(out.Changes) == 1])
	return 0
}
