package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/redact"
)

// Result is what a tool call returns to the model, as the content of its
// tool message.
type Result struct {
	Content string
	// IsError marks a failed call; the content then says why and what to do.
	IsError bool
}

// Read limits for read_file.
const (
	maxReadLines = 600
	maxReadBytes = 64 << 10
)

// Executor runs tool calls against one pending edit set. Every edit of
// every call accumulates in the set; nothing reaches the workspace until the
// caller takes the set's changes at the end. It is not safe for concurrent
// use.
type Executor struct {
	set *patch.EditSet
	log *slog.Logger
	// failed lists the edit calls that failed, in order; succeeded counts
	// the edit calls that applied to the set.
	failed    []FailedCall
	succeeded int
	// round numbers the batches of calls (see Loop); a failure is redone
	// only by an edit of a later batch, made after the model saw it.
	round int
	// redact strikes the API key from every result (nil: nothing).
	redact *redact.Redactor
	// reads are the files whose text a result carried (read_file's, a
	// refused edit's quoted lines), in the order first carried.
	reads []FileRead
	// repairing is set while the model repairs the errors its edit
	// brought (Loop): a diff may then restate the change (applyDiff).
	repairing bool
}

// applyDiff applies a diff of the model to the set. During a repair, a
// diff that does not apply to the files as they are now but applies to
// their original text restates the whole change, as models often answer a
// repair: it replaces the earlier edits of the files it names
// (patch.EditSet.ApplyDiffToOriginal). The error is the refusal on the
// files as they are now.
func (x *Executor) applyDiff(diff string) (restated bool, err error) {
	err = x.set.ApplyDiff(diff)
	if err == nil || !x.repairing {
		return false, err
	}
	if x.set.ApplyDiffToOriginal(diff) != nil {
		return false, err
	}
	x.log.Info("the repair's diff applies to the original text: it restates the whole change")
	return true, nil
}

// FileRead is a file whose text a tool result carried (read_file's text,
// the lines a refused edit quotes): its name as the workspace knows it
// (workspace-relative where it can be), and the bytes of it the results
// held, over every call.
type FileRead struct {
	Path  string
	Bytes int
}

// Reads returns the files whose text the results carried so far: it went
// to the provider with the next request, and with every one after.
func (x *Executor) Reads() []FileRead { return append([]FileRead(nil), x.reads...) }

// readDone counts n bytes of path as carried by a result.
func (x *Executor) readDone(path string, n int) {
	name := x.set.Relative(x.key(path))
	for i := range x.reads {
		if x.reads[i].Path == name {
			x.reads[i].Bytes += n
			return
		}
	}
	x.reads = append(x.reads, FileRead{Path: name, Bytes: n})
}

// FailedCall is an edit tool call (replace_text, create_file, delete_file,
// apply_diff) that failed: nothing of it is in the edit set.
type FailedCall struct {
	// Tool is the tool's name; Path the file the call named as the model
	// wrote it ("" when it named none, or a diff's files could not be
	// read).
	Tool, Path string
	// Reason is the first problem, on one line.
	Reason string
	// Resolved is set once an edit call of the same file (of any file, when
	// Path is "") succeeded in a later round: the model acted on the
	// failure.
	Resolved bool
	// key is the resolved path, for matching later edits; round the
	// batch the call was in.
	key   string
	round int
}

// String describes the call for the user: tool, file and reason.
func (f FailedCall) String() string {
	s := f.Tool
	if f.Path != "" {
		s += " " + f.Path
	}
	return s + ": " + f.Reason
}

// Failed returns the edit calls that failed so far, resolved or not.
func (x *Executor) Failed() []FailedCall { return append([]FailedCall(nil), x.failed...) }

// Unresolved returns the failed edit calls that no later successful edit
// of the same file followed.
func (x *Executor) Unresolved() []FailedCall {
	var out []FailedCall
	for _, f := range x.failed {
		if !f.Resolved {
			out = append(out, f)
		}
	}
	return out
}

// key resolves a path for matching failures with later edits; a path that
// does not resolve is its own key.
func (x *Executor) key(path string) string {
	if p, err := x.set.Resolve(path); err == nil {
		return p
	}
	return path
}

// editFailed records a failed edit call.
func (x *Executor) editFailed(tool, path string, err error) {
	reason := x.set.Relative(err.Error())
	var r *patch.Refusal
	if errors.As(err, &r) && len(r.Problems) > 0 {
		reason = x.set.Relative(r.Problems[0].Error())
		if path == "" {
			path = r.Problems[0].Path
		}
	}
	key := ""
	if path != "" {
		key = x.key(path)
	}
	x.failed = append(x.failed, FailedCall{Tool: tool, Path: path, Reason: reason, key: key, round: x.round})
}

// editSucceeded marks failures of the same files in earlier batches
// resolved: a call in the same batch was written before the model saw the
// failure, so it does not redo it.
func (x *Executor) editSucceeded(paths ...string) {
	x.succeeded++
	keys := map[string]bool{}
	for _, p := range paths {
		keys[x.key(p)] = true
	}
	for i := range x.failed {
		if f := &x.failed[i]; f.round < x.round && (f.key == "" || keys[f.key]) {
			f.Resolved = true
		}
	}
}

// NewExecutor returns an executor editing set. A nil logger discards logs.
func NewExecutor(set *patch.EditSet, log *slog.Logger) *Executor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Executor{set: set, log: log}
}

// RedactWith makes x strike r's secrets from every result it returns (a file
// read holding the API key sends the model the marker, not the key), and
// returns x.
func (x *Executor) RedactWith(r *redact.Redactor) *Executor {
	x.redact = r
	return x
}

// Set returns the pending edit set.
func (x *Executor) Set() *patch.EditSet { return x.set }

func errorf(format string, args ...any) Result {
	return Result{Content: "error: " + fmt.Sprintf(format, args...), IsError: true}
}

// decode reads strict JSON arguments: no unknown fields, no trailing data.
func decode(args string, v any) error {
	dec := json.NewDecoder(strings.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

type readArgs struct {
	Path      *string `json:"path"`
	StartLine *int    `json:"start_line"`
	EndLine   *int    `json:"end_line"`
}

type replaceArgs struct {
	Path    *string `json:"path"`
	OldText *string `json:"old_text"`
	NewText *string `json:"new_text"`
}

type createArgs struct {
	Path    *string `json:"path"`
	Content *string `json:"content"`
}

type deleteArgs struct {
	Path *string `json:"path"`
}

type diffArgs struct {
	Diff *string `json:"diff"`
}

// Call runs one tool call: name and the raw JSON arguments as the model
// sent them. Bad input (unknown tool, invalid JSON, a missing argument, a
// path outside the workspace, an edit that does not apply) gives an error
// result for the model, never a panic. Error results name files
// workspace-relative: no absolute path of the user's directories.
func (x *Executor) Call(name, arguments string) Result {
	res := x.call(name, arguments)
	if res.IsError {
		res.Content = x.set.Relative(res.Content)
	}
	res.Content = x.redact.Keys(res.Content)
	return res
}

func (x *Executor) call(name, arguments string) (res Result) {
	edit := name == ReplaceText || name == CreateFile || name == DeleteFile || name == ApplyDiff
	defer func() {
		if r := recover(); r != nil {
			x.log.Error("tool call panicked", "tool", name, "panic", r)
			if edit {
				x.editFailed(name, "", errors.New("internal error"))
			}
			res = errorf("internal error while running %s; the edit was not applied", name)
		}
	}()
	if strings.TrimSpace(arguments) == "" {
		arguments = "{}"
	}
	bad := func(err error) Result {
		if edit {
			x.editFailed(name, "", fmt.Errorf("invalid arguments: %v", err))
		}
		return errorf("invalid arguments for %s: %v; send a JSON object matching the tool's schema", name, err)
	}
	missing := func(field string) Result {
		if edit {
			x.editFailed(name, "", fmt.Errorf("missing argument %q", field))
		}
		return errorf("%s needs the argument %q", name, field)
	}
	switch name {
	case ReadFile:
		var a readArgs
		if err := decode(arguments, &a); err != nil {
			return bad(err)
		}
		if a.Path == nil {
			return missing("path")
		}
		return x.read(*a.Path, a.StartLine, a.EndLine)
	case ReplaceText:
		var a replaceArgs
		if err := decode(arguments, &a); err != nil {
			return bad(err)
		}
		switch {
		case a.Path == nil:
			return missing("path")
		case a.OldText == nil:
			return missing("old_text")
		case a.NewText == nil:
			return missing("new_text")
		}
		if err := x.set.Replace(*a.Path, *a.OldText, *a.NewText); err != nil {
			x.editFailed(name, *a.Path, err)
			return x.refused(name, *a.Path, err)
		}
		x.editSucceeded(*a.Path)
		return Result{Content: fmt.Sprintf("replaced in %s (pending: all edits are applied together at the end)", *a.Path)}
	case CreateFile:
		var a createArgs
		if err := decode(arguments, &a); err != nil {
			return bad(err)
		}
		switch {
		case a.Path == nil:
			return missing("path")
		case a.Content == nil:
			return missing("content")
		}
		if err := x.set.Create(*a.Path, *a.Content); err != nil {
			x.editFailed(name, *a.Path, err)
			return x.refused(name, *a.Path, err)
		}
		x.editSucceeded(*a.Path)
		return Result{Content: fmt.Sprintf("created %s (pending)", *a.Path)}
	case DeleteFile:
		var a deleteArgs
		if err := decode(arguments, &a); err != nil {
			return bad(err)
		}
		if a.Path == nil {
			return missing("path")
		}
		if err := x.set.Delete(*a.Path); err != nil {
			x.editFailed(name, *a.Path, err)
			return x.refused(name, *a.Path, err)
		}
		x.editSucceeded(*a.Path)
		return Result{Content: fmt.Sprintf("deleted %s (pending)", *a.Path)}
	case ApplyDiff:
		var a diffArgs
		if err := decode(arguments, &a); err != nil {
			return bad(err)
		}
		if a.Diff == nil {
			return missing("diff")
		}
		return x.applyDiffCall(name, *a.Diff)
	}
	var names []string
	for _, d := range definitions() {
		names = append(names, d.Name)
	}
	return errorf("unknown tool %q; the tools are %s", name, strings.Join(names, ", "))
}

// applyDiffCall runs an apply_diff call of diff: the diff applied to the
// set (a repair may restate the change, applyDiff) and where each hunk
// went, or the refusal.
func (x *Executor) applyDiffCall(name, diff string) Result {
	before := len(x.set.Matches())
	restated, err := x.applyDiff(diff)
	if err != nil {
		x.editFailed(name, "", err)
		return x.refused(name, "", err)
	}
	x.editSucceeded(diffPaths(diff)...)
	var b strings.Builder
	if restated {
		b.WriteString("diff applied to the files' original text, in place of your earlier edits of them (pending: all edits are applied together at the end):")
	} else {
		b.WriteString("diff applied (pending: all edits are applied together at the end):")
	}
	for _, m := range x.set.Matches()[before:] {
		fmt.Fprintf(&b, "\n- %s hunk %d at line %d (%s", m.Path, m.Hunk, m.Line, m.Level)
		if m.ByHeader {
			b.WriteString("; its lines occur elsewhere too, far away: its header's line chose this place")
		}
		b.WriteString(")")
	}
	return Result{Content: b.String()}
}

// diffPaths returns the file names of a diff, a/ and b/ prefixes dropped.
func diffPaths(diff string) []string {
	fds, err := patch.Parse(diff, "")
	if err != nil {
		return nil
	}
	var out []string
	for _, fd := range fds {
		for _, n := range []string{fd.OldName, fd.NewName} {
			if n == patch.DevNull {
				continue
			}
			if fd.GitPrefixes || strings.HasPrefix(n, "a/") || strings.HasPrefix(n, "b/") {
				out = append(out, n[2:])
			}
			out = append(out, n)
		}
	}
	return out
}

// refused turns an edit error into a result for the model, logging refused
// paths.
func (x *Executor) refused(tool, path string, err error) Result {
	if errors.Is(err, patch.ErrOutside) {
		x.log.Warn("tool call refused: path outside the workspace", "tool", tool, "path", path, "err", err)
	}
	x.quoted(err)
	return Result{Content: patch.Feedback(err), IsError: true}
}

// quoted counts the file text a refused edit's feedback quotes (the
// nearest lines, each place an ambiguous hunk matched) as read: it goes to
// the provider with the next request, as read_file's text does.
func (x *Executor) quoted(err error) {
	var probs []*patch.ApplyError
	var r *patch.Refusal
	var e *patch.ApplyError
	switch {
	case errors.As(err, &r):
		probs = r.Problems
	case errors.As(err, &e):
		probs = []*patch.ApplyError{e}
	}
	for _, p := range probs {
		n := 0
		for _, l := range p.Nearest {
			n += len(l.Text) + 1
		}
		for _, pl := range p.PlaceLines {
			for _, l := range pl {
				n += len(l.Text) + 1
			}
		}
		if n > 0 && p.Path != "" {
			x.readDone(p.Path, n)
		}
	}
}

func (x *Executor) read(path string, start, end *int) Result {
	text, err := x.set.Read(path)
	if err != nil {
		if errors.Is(err, patch.ErrOutside) {
			x.log.Warn("tool call refused: path outside the workspace", "tool", ReadFile, "path", path, "err", err)
		}
		// A read, not an edit: patch.Feedback would ask for a corrected edit.
		msg := err.Error()
		if ae := (*patch.ApplyError)(nil); errors.As(err, &ae) {
			msg = ae.Err.Error() // without the path, said below
			if errors.Is(ae.Err, patch.ErrFileState) && ae.Detail != "" {
				msg = ae.Detail // "no such file", not "does not fit the edit"
			}
		}
		return errorf("could not read %s: %s", path, msg)
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n := len(lines)
	from, to := 1, n
	if start != nil {
		from = *start
	}
	if end != nil {
		to = min(*end, n)
	}
	if from < 1 || (n > 0 && from > n) || to < from-1 {
		return errorf("%s has %d lines; lines %d-%d are out of range", path, n, from, to)
	}
	if n == 0 {
		return Result{Content: fmt.Sprintf("%s is empty", path)}
	}
	var b bytes.Buffer
	last := from - 1
	for i := from; i <= to; i++ {
		if i-from >= maxReadLines || b.Len()+len(lines[i-1]) > maxReadBytes {
			break
		}
		b.WriteString(lines[i-1])
		last = i
	}
	x.readDone(path, b.Len())
	head := fmt.Sprintf("%s: lines %d-%d of %d", path, from, last, n)
	if last < to {
		head += fmt.Sprintf(" (cut at %d lines or %d KiB; read on with start_line %d)", maxReadLines, maxReadBytes>>10, last+1)
	}
	return Result{Content: head + "\n" + b.String()}
}
