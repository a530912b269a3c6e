package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// reviewFlags are the values review's flags parse into.
type reviewFlags struct {
	log   logFlags
	diff  *bool
	model *string
}

// newReviewFlags returns review's flag set and the values it fills.
func newReviewFlags(stderr io.Writer) (*flag.FlagSet, *reviewFlags) {
	fs := newFlagSet("review", stderr)
	f := new(reviewFlags)
	f.log.register(fs)
	f.diff = fs.Bool("diff", false, "review the uncommitted changes of the git work tree of the current directory against HEAD, file by file (the prompt holds each file's hunks)")
	f.model = modelFlag(fs)
	return fs, f
}

// cmdReview prints a review's findings as FILE:LINE: severity: message,
// one a line; it exits 0 whatever it found.
func cmdReview(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, f := newReviewFlags(stderr)
	want := 1
	for _, a := range args {
		if a == "--diff" || a == "-diff" || a == "--diff=true" || a == "-diff=true" {
			want = 0
		}
	}
	pos, code, ok := parseFlags(fs, args, stdout, want)
	if !ok {
		return code
	}
	if !*f.diff {
		return runCLI(ctx, &f.log, stdout, stderr, getenv, pos[0], config.ActionReview, "", *f.model, false)
	}
	if f.log.level == "" {
		f.log.level = "warn"
	}
	env, err := setup(&f.log, stderr, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 2
	}
	defer env.close()
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 2
	}
	root := workspaceRoot(filepath.Join(cwd, "x"))
	env.withWorkspace(configRoot(root))
	env.logProblems()
	if *f.model != "" {
		env.cfg.Model, env.cfg.FastModel = *f.model, *f.model
	}
	folders := workspace.NewFolders(assist.WorkspaceOptions(env.cfg), workspace.Hooks{Logger: env.log})
	defer folders.Close()
	if err := folders.Add(workspace.FileURI(root), filepath.Base(root)); err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 1
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := folders.Ready(wctx); err != nil {
		env.log.Warn("workspace scan incomplete", "error", err)
	}
	// Recorded and counted like every other request (kimi-lsp requests).
	ledger := assist.OpenLedger(env.getenv, env.cfg.Budget, env.log)
	defer ledger.Close()
	engine, err := assist.NewEngine(assist.Options{Config: env.cfg, Logger: env.log, HTTPClient: modelHTTP, Ledger: ledger})
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 1
	}
	// The command line does not ask (no Confirm); the log says once, not
	// per file, that a spent budget or confirmAbove was passed.
	p := &changesPrinter{terminalSink: terminalSink{out: stdout, errw: stderr, tty: isTerminal(stderr)}, cwd: cwd}
	tot, _ := engine.ReviewChanges(ctx, assist.ChangesReview{Folders: folders, Dirs: []assist.ReviewDir{{Name: filepath.Base(cwd), Path: cwd}},
		Config: env.cfg, Redact: env.redactor.String, To: p})
	p.clear()
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "kimi-lsp: cancelled")
		return 130
	case tot.NotSent != "":
		fmt.Fprintf(stderr, "kimi-lsp: not sent from %s on: nothing more left the machine\n", tot.NotSent)
	case tot.Listed == 0 && tot.Failed == 0:
		fmt.Fprintln(stderr, "kimi-lsp: no uncommitted changes to review")
	}
	if tot.Failed > 0 {
		return 1
	}
	return 0
}

// changesPrinter prints a review of changes: each file's findings on
// stdout as FILE:LINE: severity: message (FILE relative to cwd), the
// reasons a folder or file is not reviewed on stderr as they come.
type changesPrinter struct {
	terminalSink
	cwd string
}

func (p *changesPrinter) Reviewed(d assist.FileDiff, out *assist.Outcome) {
	p.clear()
	printFindings(p.out, p.errw, displayName(p.cwd, d.Path), out)
}

func (p *changesPrinter) NotReviewed(reason string) {
	p.clear()
	fmt.Fprintf(p.errw, "kimi-lsp: not reviewed: %s\n", reason)
}

// printFindings prints a review's findings as FILE:LINE: severity: message,
// and on errw how many of an over-size answer were not read.
func printFindings(w, errw io.Writer, name string, out *assist.Outcome) {
	for _, f := range out.Findings {
		fmt.Fprintln(w, assist.FormatFinding(name, f))
	}
	if out.Cut > 0 {
		fmt.Fprintf(errw, "kimi-lsp: %s: %s\n", name, assist.CutNote(out.Cut))
	}
}

// displayName is path relative to dir when it is below it.
func displayName(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && !filepath.IsAbs(rel) && rel != ".." && !startsDotDot(rel) {
		return rel
	}
	return path
}

func startsDotDot(rel string) bool {
	return len(rel) >= 3 && rel[:3] == ".."+string(filepath.Separator)
}
