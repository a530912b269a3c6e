package assist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// A review of changes (Kimi: Review with {diff: true}, kimi-lsp review
// --diff) reviews the work tree's uncommitted changes against HEAD, file by
// file: git is run in the folder without a shell, its output bounded; a
// file that is secret, ignored, deleted or binary is left out, and the
// prompt shows each file's hunks, the lines under review.

// Bounds of the git commands of a review of changes.
const (
	maxGitOutput  = 4 << 20 // bytes of one command's output
	maxDiffFiles  = 200     // changed files reviewed at most
	gitTimeout    = 30 * time.Second
	diffContext   = "-U3"
	diffNoteTitle = "uncommitted changes"
)

// ErrNotGit: the folder is not in a git work tree with a HEAD commit.
var ErrNotGit = errors.New("not a git work tree with a commit (git diff HEAD failed)")

// FileDiff is one changed file of a review of changes.
type FileDiff struct {
	// Path is the file's absolute path.
	Path string
	// Diff is git's unified diff of the file against HEAD.
	Diff string
	// Lines are the line ranges of the hunks in the new file (from 1,
	// inclusive): the lines under review.
	Lines [][2]int
}

// ChangedFiles lists the files of the git work tree at dir changed against
// HEAD, each with its diff, leaving out (in skipped, with the reason) the
// secret, ignored and binary ones and deletions. folders may be nil.
func ChangedFiles(ctx context.Context, folders *workspace.Folders, dir string) (files []FileDiff, skipped []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	top, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, ErrNotGit)
	}
	root := strings.TrimSpace(string(top))
	names, err := git(ctx, dir, "diff", "--name-only", "-z", "--no-renames", "--diff-filter=d", "HEAD", "--", ".")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w: %v", dir, ErrNotGit, err)
	}
	for _, rel := range strings.Split(string(names), "\x00") {
		if rel == "" {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(rel))
		switch {
		case folders != nil && folders.IsSecret(abs):
			skipped = append(skipped, rel+" (secret)")
			continue
		case folders != nil && folders.IsIgnored(abs):
			skipped = append(skipped, rel+" (ignored)")
			continue
		case len(files) == maxDiffFiles:
			skipped = append(skipped, rel+fmt.Sprintf(" (more than %d changed files)", maxDiffFiles))
			continue
		}
		out, err := git(ctx, root, "diff", "--no-color", "--no-ext-diff", "--no-renames", diffContext, "HEAD", "--", rel)
		if err != nil {
			return nil, nil, err
		}
		lines := HunkLines(string(out))
		if len(lines) == 0 {
			skipped = append(skipped, rel+" (no text change)")
			continue
		}
		files = append(files, FileDiff{Path: abs, Diff: string(out), Lines: lines})
	}
	return files, skipped, nil
}

// git runs git in dir (no shell, no pager, no external diff, no prompts;
// paths after "--" are names, never patterns or pathspec magic) and
// returns its output, at most maxGitOutput bytes.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.quotePath=false", "--no-pager", "--literal-pathspecs"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "GIT_EXTERNAL_DIFF=")
	out, errOut := &capped{max: maxGitOutput}, &capped{max: 1024}
	cmd.Stdout, cmd.Stderr = out, errOut
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			return nil, fmt.Errorf("git %s: %w: %s", args[0], err, firstLine(msg))
		}
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	if out.over {
		return nil, fmt.Errorf("git %s: more than %d bytes of output", args[0], maxGitOutput)
	}
	return out.Bytes(), nil
}

// capped is a buffer that keeps at most max bytes and notes the rest.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.over = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// HunkLines reads the changed lines of a unified diff, in the new file:
// the runs of added lines, and for a deletion the line where it was (from
// 1, inclusive; context lines are not changed lines). A malformed header
// skips its hunk.
func HunkLines(diff string) [][2]int {
	var out [][2]int
	add := func(a, b int) {
		a, b = max(a, 1), max(b, 1)
		if n := len(out); n > 0 && out[n-1][1] >= a-1 {
			out[n-1][1] = max(out[n-1][1], b)
			return
		}
		out = append(out, [2]int{a, b})
	}
	line, in := 0, false
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "@@ -") {
			line, in = hunkStart(l), true
			if line < 0 {
				in = false
			}
			continue
		}
		if !in || l == "" {
			continue
		}
		switch l[0] {
		case '+':
			add(line, line)
			line++
		case '-':
			add(line, line)
		case ' ':
			line++
		case '\\': // "\ No newline at end of file"
		default:
			in = false // the next file's header
		}
	}
	return out
}

// hunkStart reads the new file's first line of a hunk header
// ("@@ -a,b +c,d @@"), -1 if malformed.
func hunkStart(header string) int {
	rest := header[4:]
	i := strings.Index(rest, " +")
	if i < 0 {
		return -1
	}
	spec := rest[i+2:]
	if j := strings.IndexByte(spec, ' '); j >= 0 {
		spec = spec[:j]
	}
	startS, _, _ := strings.Cut(spec, ",")
	start, err := strconv.Atoi(startS)
	if err != nil || start < 0 || start > 1<<30 {
		return -1
	}
	return max(start, 1)
}

// ReviewDiffTask makes t, built for the whole of d's file, a review of its
// changes: the prompt shows the file (its lines are the findings' lines)
// and, in its volatile part, the file's diff against HEAD; no other file.
// Findings outside the hunks are left out.
func ReviewDiffTask(t *Task, d FileDiff) {
	t.Context, t.ExcerptActive = nil, false
	t.Volatile = []cache.Document{{Path: t.Active.Path, Part: diffNoteTitle, Language: "diff", Text: d.Diff}}
	t.ReviewLines = d.Lines
	var ranges []string
	for _, r := range d.Lines {
		ranges = append(ranges, fmt.Sprintf("%d-%d", r[0], r[1]))
	}
	t.Notes = append(t.Notes, "Review only the uncommitted changes: the diff against HEAD is shown as the part \""+diffNoteTitle+
		"\" of the active file. Report findings only in the changed lines, "+strings.Join(ranges, ", ")+", with the line numbers of the current file.")
}
