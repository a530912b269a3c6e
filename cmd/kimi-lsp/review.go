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
	files, skipped, err := assist.ChangedFiles(ctx, folders, cwd)
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 1
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "kimi-lsp: not reviewed: %s\n", s)
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "kimi-lsp: no uncommitted changes to review")
		return 0
	}
	// Recorded and counted like every other request (kimi-lsp requests).
	ledger := assist.OpenLedger(env.getenv, env.cfg.Budget, env.log)
	defer ledger.Close()
	engine, err := assist.NewEngine(assist.Options{Config: env.cfg, Logger: env.log, HTTPClient: modelHTTP, Ledger: ledger})
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 1
	}
	status := 0
	// The command line does not ask; the log says once, not per file, that
	// a spent budget or confirmAbove was passed.
	ctx = assist.AskOnce(ctx)
	for _, d := range files {
		// The text the diff was made from: its lines are the diff's.
		snap := workspace.NewSnapshot(workspace.FileURI(d.Path), workspace.LanguageOf(d.Path), 0, d.Text)
		t, err := assist.BuildTask(env.cfg, folders, assist.TaskRequest{Review: true, Document: snap, End: snap.Len()})
		if err != nil {
			fmt.Fprintf(stderr, "kimi-lsp: %s\n", env.redactor.String(err.Error()))
			status = 1
			continue
		}
		assist.ReviewDiffTask(t, d)
		sink := &terminalSink{out: stdout, errw: stderr, tty: isTerminal(stderr)}
		out, err := engine.Run(ctx, *t, sink)
		sink.clear()
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "kimi-lsp: cancelled")
			return 130
		}
		if err != nil {
			fmt.Fprintf(stderr, "kimi-lsp: %s: %s\n", t.Active.Path, env.redactor.String(err.Error()))
			status = 1
			continue
		}
		printFindings(stdout, stderr, displayName(cwd, d.Path), out)
	}
	return status
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
