package assist

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/childenv"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/ignore"
	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
	"github.com/kimi-lsp/kimi-lsp/workspace/rulefile"
)

// A review of changes (Kimi: Review with {diff: true}, kimi-lsp review
// --diff) reviews the work tree's uncommitted changes against HEAD, file by
// file. The repository is outside input: a cloned one, an archive with its
// .git, a shared drive or a CI cache decides its .git/config and its
// .gitattributes, and git runs programs those name — core.fsmonitor, a
// diff driver's textconv, a filter's clean, smudge or process command,
// diff.external, the pager, hooks, and for a fetch core.sshCommand,
// credential helpers, remote helpers. So git is asked only for data, by
// commands that run none of them:
//
//   - git rev-parse --show-toplevel --show-prefix --show-object-format
//     (where the work tree is, and sha1 or sha256);
//   - git ls-tree -r -z --full-tree HEAD (HEAD's files: mode, blob id, name);
//   - git cat-file --batch (the raw blobs of HEAD's copies of the changed
//     files: no --filters, no --textconv);
//   - git rev-parse --verify -q HEAD in a checked-out submodule (its commit).
//
// None of them reads or refreshes the index or looks at the work tree (git
// status and git diff against the work tree do, and that runs fsmonitor and
// the clean filters). The working files are read by kimi-lsp itself
// (rulefile.Open: without blocking, regular files only, inside the work
// tree, never through a link), and a file is changed when the git blob id
// of its bytes (sha1 or sha256 of "blob <len>\x00" and the bytes) differs
// from HEAD's; a file whose checkout only turned LF into CRLF is not. The
// diff is made in-process (patch.Unified over workspace/linediff).
// Untracked files are not reviewed, as git diff HEAD never showed them;
// deletions are left out, and so are mode-only changes (no text changed).
//
// Every git command also gets, as defence in depth, settings that turn
// those programs off (gitSettings: core.fsmonitor=false,
// core.hooksPath=/dev/null, core.pager=cat, protocol.allow=never, an empty
// credential.helper, …), --no-pager and --no-replace-objects, and an
// environment built from an allow-list (gitEnv: PATH, HOME,
// XDG_CONFIG_HOME, TMPDIR and the locale; never a token, a key, GIT_DIR,
// GIT_CONFIG_* or the API key) plus GIT_CONFIG_NOSYSTEM=1,
// GIT_TERMINAL_PROMPT=0, GIT_OPTIONAL_LOCKS=0, GIT_NO_LAZY_FETCH=1 (a
// partial clone would fetch a missing blob from a remote whose URL can run
// a program) and an empty GIT_ALLOW_PROTOCOL (no transport at all, whatever
// protocol.<name>.allow the repository sets). Its output is bounded and it
// is never run through a shell. A folder whose work tree (core.worktree)
// does not hold it is refused. D67 has the reasons.

// Bounds of a review of changes.
const (
	maxGitOutput  = 4 << 20 // bytes of one command's output (but ls-tree's and cat-file's, read as they come)
	maxTreeFiles  = 1 << 20 // HEAD's files read at most
	maxDiffFiles  = 200     // changed files reviewed at most
	gitTimeout    = 30 * time.Second
	diffContext   = 3
	diffNoteTitle = "uncommitted changes"
)

// ErrNotGit: the folder is not in a git work tree with a HEAD commit.
var ErrNotGit = errors.New("not a git work tree with a commit (git ls-tree HEAD failed)")

// FileDiff is one changed file of a review of changes.
type FileDiff struct {
	// Path is the file's absolute path.
	Path string
	// Diff is the unified diff of the file against HEAD, as git diff
	// writes it ("diff --git a/… b/…", "--- a/…", "+++ b/…", hunks with 3
	// lines of context).
	Diff string
	// Lines are the line ranges of the hunks in the new file (from 1,
	// inclusive): the lines under review.
	Lines [][2]int
	// Text is the working file's text the diff was made from: the text
	// to review, so that its lines are the diff's.
	Text string
}

// treeEntry is one file of HEAD's tree.
type treeEntry struct {
	mode, oid, rel string
}

// Git's modes of the tree entries a review looks at.
const (
	modeFile    = "100644"
	modeExec    = "100755"
	modeLink    = "120000"
	modeGitlink = "160000"
)

// ChangedFiles lists the files of the git work tree at dir (those below
// dir) changed against HEAD, each with its diff, leaving out (in skipped,
// with the reason) the secret, ignored, binary and over-size ones,
// submodules and links, and the files past maxDiffFiles; deletions and
// untracked files are not listed. folders may be nil; its MaxFileSize is
// the size cap. No program the repository names is run (the package doc
// above).
func ChangedFiles(ctx context.Context, folders *workspace.Folders, dir string) (files []FileDiff, skipped []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	limit := workspace.DefaultOptions().MaxFileSize
	if folders != nil {
		limit = folders.Options().MaxFileSize
	}
	info, err := git(ctx, dir, nil, "rev-parse", "--show-toplevel", "--show-prefix", "--show-object-format")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w: %v", dir, ErrNotGit, err)
	}
	parts := strings.Split(strings.TrimSuffix(string(info), "\n"), "\n")
	if len(parts) != 3 {
		return nil, nil, fmt.Errorf("%s: %w: git rev-parse answered %q", dir, ErrNotGit, info)
	}
	root, prefix, format := parts[0], parts[1], parts[2]
	newHash, ok := hashers[format]
	if !ok {
		return nil, nil, fmt.Errorf("%s: the repository's object format %q is not known (sha1 and sha256 are)", dir, format)
	}
	// A repository's core.worktree may name any directory: the work tree
	// must be the folder or hold it.
	if real, err := filepath.EvalSymlinks(dir); err != nil || !within(root, real) {
		return nil, nil, fmt.Errorf("%s: %w: its work tree is %s, which does not hold the folder (core.worktree?)", dir, ErrNotGit, root)
	}
	entries, err := headTree(ctx, root, prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w: %v", dir, ErrNotGit, err)
	}
	var todo []changed
	for _, e := range entries {
		if ctx.Err() != nil {
			return nil, nil, context.Cause(ctx)
		}
		c, ok := compare(ctx, root, e, newHash, limit)
		if !ok {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(e.rel))
		// A name is the repository's text: shown cleaned (config.CleanText).
		name := config.CleanText(e.rel)
		switch {
		case folders != nil && folders.IsSecret(abs):
			skipped = append(skipped, name+" (secret)")
		case folders != nil && folders.IsIgnored(abs):
			skipped = append(skipped, name+" (ignored)")
		case c.why != "":
			skipped = append(skipped, name+" ("+c.why+")")
		case len(todo) == maxDiffFiles:
			skipped = append(skipped, name+fmt.Sprintf(" (more than %d changed files)", maxDiffFiles))
		default:
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return nil, skipped, nil
	}
	err = catBlobs(ctx, root, todo, limit, func(c changed, old []byte, why string) {
		abs := filepath.Join(root, filepath.FromSlash(c.rel))
		switch {
		case why != "":
		case ignore.LooksBinary(old) || ignore.LooksBinary(c.text):
			why = "binary"
		}
		if why != "" {
			skipped = append(skipped, config.CleanText(c.rel)+" ("+why+")")
			return
		}
		diff := UnifiedDiff(c.rel, string(old), string(c.text))
		lines := HunkLines(diff)
		if len(lines) == 0 {
			skipped = append(skipped, config.CleanText(c.rel)+" (no text change)")
			return
		}
		files = append(files, FileDiff{Path: abs, Diff: diff, Lines: lines, Text: string(c.text)})
	})
	if err != nil {
		return nil, nil, err
	}
	return files, skipped, nil
}

// UnifiedDiff is the diff of the file rel (slash-separated) from old to
// new as git diff writes it, with 3 lines of context; "" when they are
// equal. It is patch.Unified, headed "diff --git a/rel b/rel".
func UnifiedDiff(rel, old, new string) string {
	d := patch.Unified("a/"+rel, "b/"+rel, old, new, diffContext)
	if d == "" {
		return ""
	}
	return "diff --git a/" + rel + " b/" + rel + "\n" + d
}

// hashers are the hashes of git's object formats.
var hashers = map[string]func() hash.Hash{"sha1": sha1.New, "sha256": sha256.New}

// within reports whether path is root or below it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// headTree reads HEAD's files below prefix (slash-separated, ending in
// "/", or "" for all) with git ls-tree, as they come. A name git would not
// check out (a ".." or ".git" component) is left out: it could only come
// from a crafted tree.
func headTree(ctx context.Context, root, prefix string) ([]treeEntry, error) {
	var out []treeEntry
	var bad error
	err := gitStream(ctx, root, nil, func(r *bufio.Reader) error {
		for {
			rec, err := r.ReadString(0)
			if err == io.EOF && rec == "" {
				return nil
			}
			if err != nil {
				return fmt.Errorf("git ls-tree: output cut: %w", err)
			}
			rec = strings.TrimSuffix(rec, "\x00")
			// "<mode> SP <type> SP <object> TAB <file>"
			meta, rel, ok := strings.Cut(rec, "\t")
			f := strings.Fields(meta)
			if !ok || len(f) != 3 {
				bad = fmt.Errorf("git ls-tree: unexpected line %q", firstLine(rec))
				continue
			}
			if !strings.HasPrefix(rel, prefix) || !checkoutName(rel) {
				continue
			}
			if len(out) == maxTreeFiles {
				return fmt.Errorf("HEAD has more than %d files", maxTreeFiles)
			}
			out = append(out, treeEntry{mode: f[0], oid: f[2], rel: rel})
		}
	}, "ls-tree", "-r", "-z", "--full-tree", "HEAD")
	if err == nil && bad != nil && len(out) == 0 {
		err = bad
	}
	return out, err
}

// checkoutName reports whether git would check out a tree entry named rel:
// no empty, ".", ".." or ".git" component.
func checkoutName(rel string) bool {
	for _, c := range strings.Split(rel, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") {
			return false
		}
	}
	return true
}

// changed is a file found changed: its name, HEAD's blob id and the
// working file's bytes (nil when why says it is not reviewed).
type changed struct {
	rel, oid string
	text     []byte
	why      string
}

// compare compares the working file of e with HEAD's; ok is false when it
// is unchanged or deleted (nothing to review). A changed file that is not
// reviewed says why.
func compare(ctx context.Context, root string, e treeEntry, newHash func() hash.Hash, limit int64) (c changed, ok bool) {
	c = changed{rel: e.rel, oid: e.oid}
	abs := filepath.Join(root, filepath.FromSlash(e.rel))
	fi, err := os.Lstat(abs)
	if err != nil {
		return c, false // deleted (or a directory above it is gone)
	}
	switch e.mode {
	case modeGitlink:
		if !fi.IsDir() {
			return c, false
		}
		// Not checked out (no .git of its own): git would find the outer
		// repository's HEAD there.
		if _, err := os.Lstat(filepath.Join(abs, ".git")); err != nil {
			return c, false
		}
		head, err := git(ctx, abs, nil, "rev-parse", "--verify", "-q", "HEAD")
		if err != nil || strings.TrimSpace(string(head)) == e.oid {
			return c, false // not checked out, or at the commit HEAD records
		}
		c.why = "a submodule: review it in its own folder"
		return c, true
	case modeLink:
		if fi.Mode()&fs.ModeSymlink != 0 {
			if target, err := os.Readlink(abs); err == nil && blobID(newHash, []byte(target)) == e.oid {
				return c, false
			}
		}
		c.why = "a symbolic link: not reviewed"
		return c, true
	case modeFile, modeExec:
	default:
		return c, false
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		c.why = "now a symbolic link: not reviewed"
		return c, true
	case fi.IsDir():
		return c, false // deleted; what replaced it is untracked
	case !fi.Mode().IsRegular():
		c.why = "not a regular file (" + workspace.FileKind(fi.Mode()) + ")"
		return c, true
	}
	f, fi, err := rulefile.Open(root, e.rel, rulefile.NoLinks)
	if err != nil {
		c.why = "not read: " + err.Error()
		return c, true
	}
	defer f.Close()
	h := newHash()
	fmt.Fprintf(h, "blob %d\x00", fi.Size())
	var keep bytes.Buffer
	w := io.Writer(h)
	if fi.Size() <= limit {
		w = io.MultiWriter(h, &keep)
	}
	n, err := copyCtx(ctx, w, io.LimitReader(f, fi.Size()))
	if err != nil || n != fi.Size() {
		c.why = "not read: it changed while it was read"
		return c, true
	}
	if hex.EncodeToString(h.Sum(nil)) == e.oid {
		return c, false
	}
	if fi.Size() > limit {
		c.why = TooLarge(fi.Size(), limit)
		return c, true
	}
	// A checkout that wrote CRLF for LF (core.autocrlf, eol=crlf) changed
	// no line: git diff, which applies the conversion, shows nothing.
	if b := keep.Bytes(); bytes.Contains(b, []byte("\r\n")) && blobID(newHash, bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))) == e.oid {
		return c, false
	}
	c.text = keep.Bytes()
	return c, true
}

// TooLarge words why a file of size bytes over the size cap limit is not
// reviewed or sent: the one wording of the server's and the command
// line's reviews.
func TooLarge(size, limit int64) string {
	return fmt.Sprintf("%s, over the size cap of %s: raise context.maxFileSize to review it", sizeText(int(size)), sizeText(int(limit)))
}

// blobID is git's id of a blob holding data.
func blobID(newHash func() hash.Hash, data []byte) string {
	h := newHash()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// copyCtx copies src to dst until EOF or ctx ends.
func copyCtx(ctx context.Context, dst io.Writer, src io.Reader) (int64, error) {
	buf := make([]byte, 256<<10)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		k, err := src.Read(buf)
		if k > 0 {
			dst.Write(buf[:k])
			n += int64(k)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// catBlobs reads HEAD's blobs of the changed files with git cat-file
// --batch (raw: no filter, no textconv), one after the other, and calls
// each with its file's blob, or why it was not read.
func catBlobs(ctx context.Context, root string, todo []changed, limit int64, each func(c changed, old []byte, why string)) error {
	var in strings.Builder
	for _, c := range todo {
		in.WriteString(c.oid + "\n")
	}
	return gitStream(ctx, root, strings.NewReader(in.String()), func(r *bufio.Reader) error {
		for _, c := range todo {
			head, err := r.ReadString('\n')
			if err != nil {
				return fmt.Errorf("git cat-file: output cut: %w", err)
			}
			// "<oid> SP <type> SP <size> LF <contents> LF", or "<oid> missing LF".
			f := strings.Fields(head)
			if len(f) != 3 || f[0] != c.oid {
				each(c, nil, "HEAD's copy could not be read")
				continue
			}
			size, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil || size < 0 {
				return fmt.Errorf("git cat-file: unexpected header %q", strings.TrimSpace(head))
			}
			if f[1] != "blob" || size > limit {
				if _, err := io.CopyN(io.Discard, r, size+1); err != nil {
					return fmt.Errorf("git cat-file: output cut: %w", err)
				}
				why := "HEAD's copy is not a file"
				if f[1] == "blob" {
					why = "HEAD's copy is " + TooLarge(size, limit)
				}
				each(c, nil, why)
				continue
			}
			old := make([]byte, size+1)
			if _, err := io.ReadFull(r, old); err != nil {
				return fmt.Errorf("git cat-file: output cut: %w", err)
			}
			each(c, old[:size], "")
		}
		return nil
	}, "cat-file", "--batch")
}

// gitSettings are given to every git command: they turn off each program a
// repository's configuration could make git run, whatever the command (the
// commands run need none of them, so this is defence in depth).
var gitSettings = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.pager=cat",
	"-c", "core.quotePath=false",
	"-c", "core.untrackedCache=false",
	"-c", "core.askPass=",
	"-c", "credential.helper=",
	"-c", "protocol.allow=never",
	"-c", "diff.external=",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"--no-pager", "--no-replace-objects", "--literal-pathspecs",
}

// gitEnv is the environment of a git command: the allow-listed variables
// of ours (what git needs to find itself, the user's own configuration,
// temporary files and messages in the user's language; nothing else — no
// token, key, API key or GIT_* variable) and the settings that keep git
// from asking, locking or reading the system configuration.
func gitEnv() []string {
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat", "PAGER=cat",
		// A partial clone fetches a missing blob when it is read, from a
		// remote whose URL may run a program (ext::, ssh through
		// core.sshCommand): no lazy fetch (git 2.39.4 and later), and no transport
		// at all — an empty GIT_ALLOW_PROTOCOL overrides every
		// protocol.<name>.allow of the repository's, which
		// protocol.allow=never does not.
		"GIT_NO_LAZY_FETCH=1", "GIT_ALLOW_PROTOCOL="}
	// The base allow-list every program we start gets (PATH, HOME, the
	// locale, TMPDIR, the XDG directories…), never a credential and no
	// GIT_* variable but these.
	env = append(env, childenv.Filter(os.Environ(), nil)...)
	return env
}

// git runs git in dir (no shell; gitSettings and gitEnv) and returns its
// output, at most maxGitOutput bytes.
func git(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	out := &capped{max: maxGitOutput}
	err := gitRun(ctx, dir, stdin, out, args...)
	if err == nil && out.over {
		err = fmt.Errorf("git %s: more than %d bytes of output", args[0], maxGitOutput)
	}
	if err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// gitStream runs git in dir as git does and gives its output to read as it
// comes; read's error ends the command.
func gitStream(ctx context.Context, dir string, stdin io.Reader, read func(*bufio.Reader) error, args ...string) error {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := read(bufio.NewReaderSize(pr, 64<<10))
		pr.CloseWithError(errors.Join(err, errReadDone))
		done <- err
	}()
	err := gitRun(ctx, dir, stdin, pw, args...)
	pw.Close()
	if rerr := <-done; rerr != nil {
		return rerr
	}
	return err
}

// errReadDone ends a command whose output is no longer read.
var errReadDone = errors.New("output no longer read")

func gitRun(ctx context.Context, dir string, stdin io.Reader, stdout io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", append(append([]string(nil), gitSettings...), args...)...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	cmd.Stdin = stdin
	errOut := &capped{max: 1024}
	cmd.Stdout, cmd.Stderr = stdout, errOut
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			return fmt.Errorf("git %s: %w: %s", args[0], err, firstLine(msg))
		}
		return fmt.Errorf("git %s: %w", args[0], err)
	}
	return nil
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
	for _, l := range linediff.SplitLines(diff) {
		l = strings.TrimSuffix(l, "\n")
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

// ChangedNames returns the names a unified diff adds or removes: the
// words that occur a different number of times in its removed and its
// added lines (a renamed parameter, a deleted function; a keyword the
// change only moved occurs as often on both sides).
func ChangedNames(diff string) []string {
	count := map[string]int{}
	for _, l := range linediff.SplitLines(diff) {
		if strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "--- ") || l == "" {
			continue
		}
		sign := 0
		switch l[0] {
		case '+':
			sign = 1
		case '-':
			sign = -1
		default:
			continue
		}
		for _, w := range identifiers(l[1:]) {
			count[w] += sign
		}
	}
	var out []string
	for w, n := range count {
		if n != 0 && len(w) > 1 {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

// hunkStart reads the new file's first line of a hunk header
// ("@@ -a,b +c,d @@", read by linediff.ParseHunkHeader), -1 if malformed.
func hunkStart(header string) int {
	h, ok := linediff.ParseHunkHeader(header)
	if !ok || h.NewStart > 1<<30 {
		return -1
	}
	return max(h.NewStart, 1)
}

// ReviewDiffTask makes t, built for the whole of d's file, a review of its
// changes: the prompt shows the file (its lines are the findings' lines)
// and, in its volatile part, the file's diff against HEAD; no other file.
// Findings outside the hunks are left out.
func ReviewDiffTask(t *Task, d FileDiff) {
	t.Context, t.ExcerptActive = nil, false
	t.Volatile = []cache.Document{{Path: t.Active.Path, Part: diffNoteTitle, Language: "diff", Text: d.Diff}}
	t.ReviewLines = d.Lines
	t.ReviewNames = ChangedNames(d.Diff)
	var ranges []string
	for _, r := range d.Lines {
		ranges = append(ranges, fmt.Sprintf("%d-%d", r[0], r[1]))
	}
	t.Notes = append(t.Notes, "Review only the uncommitted changes: the diff against HEAD is shown as the part \""+diffNoteTitle+
		"\" of the active file. Report findings only in the changed lines, "+strings.Join(ranges, ", ")+
		", or on lines that use what the change renamed, removed or added (an error it causes further down), with the line numbers of the current file.")
}
