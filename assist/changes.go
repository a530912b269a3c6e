package assist

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/redact"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// ReviewDir is one folder of a review of changes: its name, which the
// reason it is not reviewed names, and its path (ChangedFiles' dir).
type ReviewDir struct {
	Name, Path string
}

// ChangesSink is what differs per surface in a review of changes
// (Engine.ReviewChanges). Each file's answer streams to it as a task's to
// its Sink, after Status("reviewing <file>"); Reviewed delivers one file's
// findings, which the engine kept to the file's changed lines (the server
// shows them as diagnostics, the command line prints them); NotReviewed
// says, when it happens, why a folder or a file is left out (the totals
// list it too). The user is asked whether to send through the engine's
// Confirm (Options.Confirm), once for the whole review.
type ChangesSink interface {
	Sink
	Reviewed(d FileDiff, out *Outcome)
	NotReviewed(reason string)
}

// ChangesReview is what a review of changes looks at and where it reports.
type ChangesReview struct {
	// Folders are the workspace folders the tasks are built in.
	Folders *workspace.Folders
	// Dirs are the folders whose changes are reviewed, in order; a file
	// of two of them (nested folders) is reviewed once.
	Dirs []ReviewDir
	// Config is the configuration of the whole review.
	Config config.Config
	// Redact strikes secrets from an error's text in a reason (nil: the
	// configuration's API key).
	Redact func(string) string
	// To is the surface's side.
	To ChangesSink
}

// ChangesTotals is what a review of changes did.
type ChangesTotals struct {
	// Listed counts the changed files found to review (a file of nested
	// folders once), Files those reviewed, Findings their findings, Cut
	// the findings of over-size answers not read (CutNote), LeftOut those
	// left out (invalid, on lines the change does not affect, or over
	// review.maxFindings).
	Listed, Files, Findings, Cut, LeftOut int
	// Failed counts the folders that could not be listed and the files
	// whose task could not be built or run (they are in NotReviewed too).
	Failed int
	// NotSent is the file whose request the user chose not to send: the
	// review stopped there.
	NotSent string
	// NotReviewed says why each folder or file left out was, in order.
	NotReviewed []string
}

// Summary is the totals in one line for the end of the review's job: "3
// findings in 2 changed files", the findings not read, where it stopped,
// and the first five reasons something was not reviewed.
func (t ChangesTotals) Summary() string {
	msg := fmt.Sprintf("%d %s in %d changed %s", t.Findings, plural(t.Findings, "finding", "findings"), t.Files, plural(t.Files, "file", "files"))
	if t.Cut > 0 {
		msg += " (" + CutNote(t.Cut) + ")"
	}
	if t.LeftOut > 0 {
		msg += fmt.Sprintf(" (%d left out: invalid, on lines the changes do not affect, or over review.maxFindings)", t.LeftOut)
	}
	if t.NotSent != "" {
		msg += "; not sent from " + t.NotSent + " on: nothing more left the machine"
	}
	if n := len(t.NotReviewed); n > 0 {
		msg += "; not reviewed: " + strings.Join(t.NotReviewed[:min(n, 5)], ", ")
		if n > 5 {
			msg += fmt.Sprintf(" and %d more", n-5)
		}
	}
	return msg
}

// changesRun is one run of ReviewChanges.
type changesRun struct {
	ChangesReview
	e    *Engine
	tot  ChangesTotals
	seen map[string]bool
}

// ReviewChanges reviews the uncommitted changes of every folder of r.Dirs,
// file by file (ChangedFiles, ReviewDiffTask), one after the other: a
// folder that is not a git work tree and the files ChangedFiles leaves
// out are skipped with their reason, and so is a file whose task cannot be
// built or fails; whether to send is asked at most once for the whole
// review (AskOnce), and the first request not sent stops it (nothing more
// leaves the machine). It returns the totals, and the cause of ctx's end
// when it was cancelled.
func (e *Engine) ReviewChanges(ctx context.Context, r ChangesReview) (ChangesTotals, error) {
	// One question for the whole review (a spent budget, confirmAbove):
	// not one per changed file.
	ctx = AskOnce(ctx)
	run := &changesRun{ChangesReview: r, e: e, seen: map[string]bool{}}
	if run.Redact == nil {
		key, _ := r.Config.Key()
		run.Redact = func(s string) string { return redact.String(s, key) }
	}
	for _, dir := range r.Dirs {
		changed, skipped, err := ChangedFiles(ctx, r.Folders, dir.Path)
		if err != nil {
			e.log.Info("review of changes: folder skipped", "folder", dir.Path, "error", err)
			why := run.Redact(err.Error())
			if errors.Is(err, ErrNotGit) {
				why = ErrNotGit.Error()
			}
			run.tot.Failed++
			run.notReviewed("folder " + dir.Name + " (" + why + ")")
			continue
		}
		for _, s := range skipped {
			run.notReviewed(s)
		}
		for _, d := range changed {
			if ctx.Err() != nil {
				return run.tot, context.Cause(ctx)
			}
			if run.seen[d.Path] {
				continue
			}
			run.seen[d.Path] = true
			run.tot.Listed++
			if err := run.review(ctx, d); err != nil {
				if ctx.Err() != nil {
					return run.tot, context.Cause(ctx)
				}
				return run.tot, nil // not sent: nothing more is
			}
		}
	}
	return run.tot, nil
}

// review reviews one changed file; its error is ErrNotSent or ctx's end,
// which stop the review (any other failure is a reason it was not
// reviewed).
func (r *changesRun) review(ctx context.Context, d FileDiff) error {
	uri := workspace.FileURI(d.Path)
	// The diff is of the file on disk as ChangedFiles read it: review that
	// text (its lines are the diff's).
	snap := workspace.NewSnapshot(uri, workspace.LanguageOf(d.Path), 0, d.Text)
	t, err := r.e.BuildTask(r.Config, r.Folders, TaskRequest{Review: true, Document: snap, End: snap.Len()})
	if err != nil {
		r.tot.Failed++
		r.notReviewed(DisplayPath(r.Folders, uri) + " (" + r.Redact(err.Error()) + ")")
		return nil
	}
	ReviewDiffTask(t, d)
	r.To.Status("reviewing " + t.Active.Path)
	out, err := r.e.Run(ctx, *t, r.To)
	switch {
	case err != nil && ctx.Err() != nil:
		return err
	case errors.Is(err, provider.ErrNotSent):
		// "Cancel" (or a surface that cannot ask) stops the review: each
		// file after it would ask again.
		r.tot.NotSent = t.Active.Path
		return err
	case err != nil:
		r.tot.Failed++
		r.notReviewed(t.Active.Path + " (" + r.Redact(err.Error()) + ")")
		return nil
	}
	r.To.Reviewed(d, out)
	r.tot.Files++
	r.tot.Findings += len(out.Findings)
	r.tot.Cut += out.Cut
	r.tot.LeftOut += out.Dropped
	return nil
}

func (r *changesRun) notReviewed(reason string) {
	r.tot.NotReviewed = append(r.tot.NotReviewed, reason)
	r.To.NotReviewed(reason)
}
