package patch

import (
	"fmt"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// Read returns the text of a file as the set would leave it: pending edits
// included. A file the set deletes, or that does not exist, is an error.
func (s *EditSet) Read(name string) (string, error) {
	t := s.begin()
	path, perr := t.resolve(name)
	if perr != nil {
		return "", perr
	}
	e, err := t.get(path, name)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if !e.exists {
		return "", &ApplyError{Path: name, Err: ErrFileState, Detail: "no such file"}
	}
	t.commit() // remember what was read, so later edits are checked against it
	return e.text, nil
}

// Replace replaces the one place of a file where oldText occurs with
// newText. oldText must occur exactly once; when it occurs nowhere
// verbatim, whole lines are matched with the hunk levels (trailing
// whitespace, blank lines, indentation), the new lines re-indented in the
// file's style. In a CRLF file, LF line breaks of newText become CRLF.
func (s *EditSet) Replace(name, oldText, newText string) error {
	if oldText == "" {
		return refuse(&ApplyError{Path: name, Err: ErrNoMatch, Detail: "old text is empty; to create a file use create_file"})
	}
	t := s.begin()
	path, e, perr := t.load(name)
	if perr != nil {
		return refuse(perr)
	}
	if !e.exists {
		return refuse(&ApplyError{Path: name, Err: ErrFileState, Detail: "no such file"})
	}
	text := e.text
	f := splitText(text)
	var idx []int
	for i := 0; i <= len(text)-len(oldText); {
		j := strings.Index(text[i:], oldText)
		if j < 0 {
			break
		}
		idx = append(idx, i+j)
		i += j + 1
	}
	switch {
	case len(idx) == 1:
		nt := newText
		if f.eol == "\r\n" {
			nt = strings.ReplaceAll(strings.ReplaceAll(nt, "\r\n", "\n"), "\n", "\r\n")
		}
		e.text = text[:idx[0]] + nt + text[idx[0]+len(oldText):]
	case len(idx) > 1:
		pe := &ApplyError{Path: name, Err: ErrAmbiguous, Level: LevelExact,
			Detail: "old text must occur exactly once; include more surrounding lines"}
		for _, i := range idx {
			pe.Places = append(pe.Places, strings.Count(text[:i], "\n")+1)
		}
		return refuse(pe)
	default:
		h := &Hunk{Header: "replace_text", Lines: replaceLines(oldText, newText)}
		out, ms, probs := applyHunks(name, text, []*Hunk{h})
		if len(probs) > 0 {
			for _, p := range probs {
				p.Hunk, p.Header = 0, ""
				if p.Err == ErrNoMatch {
					p.Detail = "old text was not found verbatim, nor as whole lines with whitespace differences"
				}
			}
			return refuse(probs...)
		}
		t.matches = append(t.matches, ms...)
		e.text = out
	}
	if p := s.checkText(t, path, name, e.text, false); p != nil {
		return refuse(p)
	}
	t.commit()
	return nil
}

// replaceLines turns replace_text's old and new text into hunk lines:
// lines both texts have in the same order are context, so that the file
// keeps its own copy of them (whitespace included) when the old text is
// matched with whitespace differences; the rest are removed and added.
func replaceLines(oldText, newText string) []Line {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n"), "\n")
	}
	a, b := split(oldText), split(newText)
	var out []Line
	i, j := 0, 0
	for _, op := range linediff.Diff(a, b, maxEditDistance) {
		switch op {
		case linediff.Equal:
			out = append(out, Line{Context, a[i]})
			i++
			j++
		case linediff.Delete:
			out = append(out, Line{Delete, a[i]})
			i++
		case linediff.Insert:
			out = append(out, Line{Add, b[j]})
			j++
		}
	}
	return out
}

// Create adds a new file with the given text. The file must not exist.
func (s *EditSet) Create(name, text string) error {
	t := s.begin()
	path, e, perr := t.load(name)
	if perr != nil {
		return refuse(perr)
	}
	if e.exists {
		return refuse(&ApplyError{Path: name, Err: ErrFileState, Detail: "the file already exists; edit it with replace_text or apply_diff"})
	}
	e.exists, e.text = true, text
	if p := s.checkText(t, path, name, text, false); p != nil {
		return refuse(p)
	}
	t.commit()
	return nil
}

// Delete removes a file. The file must exist.
func (s *EditSet) Delete(name string) error {
	t := s.begin()
	_, e, perr := t.load(name)
	if perr != nil {
		return refuse(perr)
	}
	if !e.exists {
		return refuse(&ApplyError{Path: name, Err: ErrFileState, Detail: "no such file"})
	}
	e.exists, e.text = false, ""
	t.commit()
	return nil
}

// Changes returns the net change of every file the set touched, renames
// first, then in the order the files were first touched. It runs the final
// checks (Go syntax, placeholders) against the files' original text and
// returns a *Refusal if any fails; the set stays as it was either way.
func (s *EditSet) Changes() ([]FileChange, error) {
	var probs []*ApplyError
	var renames, others []FileChange
	for _, path := range s.order {
		e := s.entries[path]
		if e.exists && (!e.origExists || e.orig != e.text || e.from != "") {
			before, existed := e.orig, e.origExists
			if e.from != "" {
				src := s.entries[e.from]
				before, existed = src.orig, true
			}
			if n, line, ok := newPlaceholder(path, before, e.text); ok {
				probs = append(probs, &ApplyError{Path: e.name, Err: ErrPlaceholder,
					Detail: fmt.Sprintf("line %d %q stands for code left out", n, line)})
			}
			if !s.opts.AllowBrokenGo && strings.HasSuffix(path, ".go") {
				if err := s.syntaxError(e.name, e.text); err != nil && (!existed || s.syntaxError(e.name, before) == nil) {
					probs = append(probs, &ApplyError{Path: e.name, Err: ErrBrokenSyntax, Detail: err.Error()})
				}
			}
		}
		switch {
		case e.exists && e.from != "":
			src := s.entries[e.from]
			renames = append(renames, FileChange{Path: path, Kind: RenameFile, OldPath: e.from,
				Before: src.orig, After: e.text, Version: src.version})
		case e.exists && !e.origExists:
			others = append(others, FileChange{Path: path, Kind: CreateFile, After: e.text, Version: NoVersion})
		case e.exists && e.orig != e.text:
			others = append(others, FileChange{Path: path, Kind: ModifyFile, Before: e.orig, After: e.text, Version: e.version})
		case !e.exists && e.origExists && !s.movedAway(e):
			others = append(others, FileChange{Path: path, Kind: DeleteFile, Before: e.orig, Version: e.version})
		}
	}
	if len(probs) > 0 {
		return nil, refuse(probs...)
	}
	return append(renames, others...), nil
}

// movedAway reports whether a file's original text lives on under another
// path through renames.
func (s *EditSet) movedAway(e *entry) bool {
	if e.movedTo == "" {
		return false
	}
	for _, o := range s.entries {
		if o.exists && o.from == e.path {
			return true
		}
	}
	return false
}

// Apply parses a model's reply and applies its diffs to the files, all or
// nothing, returning the changes. It is NewEditSet, ApplyDiff and Changes
// in one call.
func Apply(files Files, reply string, opts Options) ([]FileChange, error) {
	s := NewEditSet(files, opts)
	if err := s.ApplyDiff(reply); err != nil {
		return nil, err
	}
	return s.Changes()
}

// load resolves name and loads its entry, for an edit of the file.
func (t *tx) load(name string) (string, *entry, *ApplyError) {
	path, perr := t.resolve(name)
	if perr != nil {
		return "", nil, perr
	}
	e, err := t.get(path, name)
	if err != nil {
		return "", nil, &ApplyError{Path: name, Err: err}
	}
	return path, e, nil
}

// Resolve maps a path as the model wrote it to the resolved path the set
// keys its files by (see Files.Resolve).
func (s *EditSet) Resolve(name string) (string, error) { return s.files.Resolve(name) }
