package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
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
}

// NewExecutor returns an executor editing set. A nil logger discards logs.
func NewExecutor(set *patch.EditSet, log *slog.Logger) *Executor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Executor{set: set, log: log}
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
// result for the model, never a panic.
func (x *Executor) Call(name, arguments string) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			x.log.Error("tool call panicked", "tool", name, "panic", r)
			res = errorf("internal error while running %s; the edit was not applied", name)
		}
	}()
	if strings.TrimSpace(arguments) == "" {
		arguments = "{}"
	}
	bad := func(err error) Result {
		return errorf("invalid arguments for %s: %v; send a JSON object matching the tool's schema", name, err)
	}
	missing := func(field string) Result {
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
			return x.failed(name, *a.Path, err)
		}
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
			return x.failed(name, *a.Path, err)
		}
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
			return x.failed(name, *a.Path, err)
		}
		return Result{Content: fmt.Sprintf("deleted %s (pending)", *a.Path)}
	case ApplyDiff:
		var a diffArgs
		if err := decode(arguments, &a); err != nil {
			return bad(err)
		}
		if a.Diff == nil {
			return missing("diff")
		}
		before := len(x.set.Matches())
		if err := x.set.ApplyDiff(*a.Diff); err != nil {
			return x.failed(name, "", err)
		}
		var b strings.Builder
		b.WriteString("diff applied (pending: all edits are applied together at the end):")
		for _, m := range x.set.Matches()[before:] {
			fmt.Fprintf(&b, "\n- %s hunk %d at line %d (%s)", m.Path, m.Hunk, m.Line, m.Level)
		}
		return Result{Content: b.String()}
	}
	var names []string
	for _, d := range definitions {
		names = append(names, d.Name)
	}
	return errorf("unknown tool %q; the tools are %s", name, strings.Join(names, ", "))
}

// failed turns an edit error into a result for the model, logging refused
// paths.
func (x *Executor) failed(tool, path string, err error) Result {
	if errors.Is(err, patch.ErrOutside) {
		x.log.Warn("tool call refused: path outside the workspace", "tool", tool, "path", path, "err", err)
	}
	return Result{Content: patch.Feedback(err), IsError: true}
}

func (x *Executor) read(path string, start, end *int) Result {
	text, err := x.set.Read(path)
	if err != nil {
		return x.failed(ReadFile, path, err)
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
	head := fmt.Sprintf("%s: lines %d-%d of %d", path, from, last, n)
	if last < to {
		head += fmt.Sprintf(" (cut at %d lines or %d KiB; read on with start_line %d)", maxReadLines, maxReadBytes>>10, last+1)
	}
	return Result{Content: head + "\n" + b.String()}
}
