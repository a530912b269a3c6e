package patch

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// ChangeKind says what a FileChange does to its file.
type ChangeKind uint8

const (
	// ModifyFile changes the text of an existing file.
	ModifyFile ChangeKind = iota
	// CreateFile makes a new file with After as its text.
	CreateFile
	// DeleteFile removes the file.
	DeleteFile
	// RenameFile moves OldPath to Path, with After as the new text.
	RenameFile
)

// String returns "modify", "create", "delete" or "rename".
func (k ChangeKind) String() string {
	switch k {
	case CreateFile:
		return "create"
	case DeleteFile:
		return "delete"
	case RenameFile:
		return "rename"
	}
	return "modify"
}

// FileChange is the net change of one file in an edit set.
type FileChange struct {
	// Path is the resolved absolute path (the new path of a rename).
	Path string
	Kind ChangeKind
	// OldPath is the resolved absolute path a RenameFile moves from.
	OldPath string
	// Before is the text the change was computed against (empty for
	// CreateFile); After is the text it leaves (empty for DeleteFile).
	Before, After string
	// Version is the version Files.Read reported for Before: the editor
	// buffer's version, or NoVersion for a file read from disk.
	Version int32
}

// Options tunes the checks of an edit set.
type Options struct {
	// AllowBrokenGo accepts edits after which a Go file that parsed no
	// longer does. By default they are refused.
	AllowBrokenGo bool
	// Document is the action's own document, as Files.Resolve accepts it.
	// A diff of one file whose header names a path that does not exist,
	// and that no workspace file's path matches by its trailing segments,
	// edits Document when the base names agree.
	Document string
}

// EditSet accumulates edits over files, each edit all or nothing, and hands
// out the net changes at the end. Reads through the set see its pending
// edits. An EditSet is not safe for concurrent use.
type EditSet struct {
	files   Files
	opts    Options
	entries map[string]*entry
	order   []string
	matches []Match
	// syntax memoizes goSyntaxError by text: the same texts are checked
	// after each diff and again by Changes.
	syntax map[string]error
	// restated is set once ApplyDiffToOriginal applied a diff.
	restated bool
}

// syntaxError is goSyntaxError, memoized.
func (s *EditSet) syntaxError(name, text string) error {
	if err, ok := s.syntax[text]; ok {
		return err
	}
	err := goSyntaxError(name, text)
	s.syntax[text] = err
	return err
}

// entry is the state of one file in the set.
type entry struct {
	path       string
	name       string // as the model first named it
	origExists bool
	orig       string
	version    int32
	exists     bool
	text       string
	from       string // resolved path whose original text this entry holds after renames
	movedTo    string // set on a rename source
}

// NewEditSet returns an empty edit set reading through files.
func NewEditSet(files Files, opts Options) *EditSet {
	return &EditSet{files: files, opts: opts, entries: map[string]*entry{}, syntax: map[string]error{}}
}

// tx stages changes to a set and commits them only if all succeed.
type tx struct {
	set     *EditSet
	staged  map[string]*entry
	order   []string
	matches []Match
	// original: the set's files are loaded with their original text, the
	// set's edits of them dropped (ApplyDiffToOriginal); only the files the
	// diffs write (touched) are committed then.
	original bool
	touched  map[string]string
}

func (s *EditSet) begin() *tx { return &tx{set: s, staged: map[string]*entry{}} }

// get returns the staged entry for a resolved path, loading it on first use.
func (t *tx) get(path, name string) (*entry, error) {
	if e, ok := t.staged[path]; ok {
		return e, nil
	}
	if e, ok := t.set.entries[path]; ok {
		c := *e
		if t.original {
			c.text, c.exists = e.orig, e.origExists
		}
		t.staged[path] = &c
		t.order = append(t.order, path)
		return &c, nil
	}
	text, version, err := t.set.files.Read(path)
	e := &entry{path: path, name: name, version: version}
	switch {
	case err == nil:
		e.origExists, e.exists, e.orig, e.text = true, true, text, text
	case errors.Is(err, fs.ErrNotExist):
		e.version = NoVersion
	default:
		return nil, err
	}
	t.staged[path] = e
	t.order = append(t.order, path)
	return e, nil
}

func (t *tx) commit() {
	t.set.matches = append(t.set.matches, t.matches...)
	for _, p := range t.order {
		if _, ok := t.touched[p]; t.original && !ok {
			continue // only looked at: it keeps the set's edits
		}
		if _, ok := t.set.entries[p]; !ok {
			t.set.order = append(t.set.order, p)
		}
		t.set.entries[p] = t.staged[p]
	}
}

// before returns the text of a path before this transaction.
func (t *tx) before(path string) (string, bool) {
	if e, ok := t.set.entries[path]; ok && !t.original {
		return e.text, e.exists
	}
	e := t.staged[path]
	return e.orig, e.origExists
}

// resolve resolves a path as the model wrote it.
func (t *tx) resolve(name string) (string, *ApplyError) {
	p, err := t.set.files.Resolve(name)
	if err != nil {
		return "", &ApplyError{Path: name, Err: err}
	}
	return p, nil
}

// exists reports whether a name resolves to an existing file.
func (t *tx) exists(name string) bool {
	p, err := t.set.files.Resolve(name)
	if err != nil {
		return false
	}
	e, err := t.get(p, name)
	return err == nil && e.exists
}

// diffName strips git's a/ or b/ prefix from a diff file name: always with
// git headers, otherwise only when the name without it is the one that
// exists (or, for a new file, when the prefixed directory does not).
func (t *tx) diffName(raw, prefix string, git bool) string {
	if !strings.HasPrefix(raw, prefix) {
		if (prefix == "b/" && strings.HasPrefix(raw, "a/")) || (prefix == "a/" && strings.HasPrefix(raw, "b/")) {
			prefix = raw[:2]
		} else {
			return raw
		}
	}
	stripped := raw[len(prefix):]
	if git || t.exists(stripped) || !t.exists(raw) {
		return stripped
	}
	return raw
}

// Relative rewrites the absolute paths in a message for the model as
// workspace-relative ones, when the set's Files can (see Namer).
func (s *EditSet) Relative(text string) string {
	if n, ok := s.files.(Namer); ok {
		return n.Relative(text)
	}
	return text
}

// Matches returns where and at which level each hunk applied so far was
// placed, for logs and tests.
func (s *EditSet) Matches() []Match { return append([]Match(nil), s.matches...) }

// ApplyDiff parses a model's reply (see Parse) and applies every file diff
// in it, all or nothing. On failure the set is unchanged and the error is a
// *Refusal (format it for the model with Feedback).
func (s *EditSet) ApplyDiff(text string) error {
	diffs, err := Parse(text, "")
	if err != nil {
		return refuse(&ApplyError{Err: err})
	}
	return s.ApplyFileDiffs(diffs)
}

// ApplyDiffToOriginal applies a model's reply written against the files'
// original text (their text before any edit of the set) in place of the
// set's edits of the files it names: each of them starts again from its
// original text, the other files keep theirs; all or nothing, as
// ApplyDiff. It is how a repair that restates the whole change is taken
// (a diff that does not apply to the files as they are now). A set that
// renamed a file refuses: its original text lives under two names.
func (s *EditSet) ApplyDiffToOriginal(text string) error {
	for _, e := range s.entries {
		if e.from != "" || e.movedTo != "" {
			return refuse(&ApplyError{Path: e.name, Err: ErrFileState, Detail: "the edit renamed it, so a diff against the original text cannot replace the edit"})
		}
	}
	diffs, err := Parse(text, "")
	if err != nil {
		return refuse(&ApplyError{Err: err})
	}
	t := s.begin()
	t.original = true
	if err := s.applyTx(t, diffs); err != nil {
		return err
	}
	s.restated = true
	return nil
}

// Restated reports whether ApplyDiffToOriginal replaced edits of the set.
func (s *EditSet) Restated() bool { return s.restated }

// ApplyFileDiffs applies parsed file diffs, all or nothing.
func (s *EditSet) ApplyFileDiffs(diffs []*FileDiff) error {
	return s.applyTx(s.begin(), diffs)
}

// applyTx applies parsed file diffs in t and commits them if all apply.
func (s *EditSet) applyTx(t *tx, diffs []*FileDiff) error {
	var probs []*ApplyError
	touched := map[string]string{} // resolved path -> name
	t.touched = touched
	for _, fd := range diffs {
		probs = append(probs, t.applyFile(fd, touched, len(diffs) == 1)...)
	}
	if len(probs) == 0 {
		for _, path := range t.order {
			name, ok := touched[path]
			if e := t.staged[path]; ok && e.exists {
				if p := s.checkText(t, path, name, e.text, true); p != nil {
					probs = append(probs, p)
				}
			}
		}
	}
	if len(probs) > 0 {
		sortProblems(probs)
		return refuse(probs...)
	}
	t.commit()
	return nil
}

func sortProblems(ps []*ApplyError) {
	// Stable order for messages: by path, then hunk.
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && (ps[j].Path < ps[j-1].Path || ps[j].Path == ps[j-1].Path && ps[j].Hunk < ps[j-1].Hunk); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

func fileProblem(name string, err error, format string, args ...any) []*ApplyError {
	return []*ApplyError{{Path: name, Err: err, Detail: fmt.Sprintf(format, args...)}}
}

// hasOldLines reports whether a hunk of fd has a context or removed line.
func hasOldLines(fd *FileDiff) bool {
	for _, h := range fd.Hunks {
		if len(oldLines(h.Lines)) > 0 {
			return true
		}
	}
	return false
}

// applyFile stages one file diff of the set's diffs (single when it is the
// only one): its header names resolved (a path relative to another root
// found by its tail), then the file created, deleted, or patched and maybe
// renamed. touched gets each resolved path it writes, with its name.
func (t *tx) applyFile(fd *FileDiff, touched map[string]string, single bool) []*ApplyError {
	oldName := t.diffName(fd.OldName, "a/", fd.GitPrefixes)
	newName := t.diffName(fd.NewName, "b/", fd.GitPrefixes)
	if !fd.Create && !fd.Delete && !fd.Rename && oldName == newName && !t.exists(oldName) && hasOldLines(fd) {
		// A header path relative to another root (see byTail). A diff
		// that only adds lines (a new file written without /dev/null)
		// has nothing to recognise another file by: it is not moved.
		alt, prob := t.byTail(oldName, single)
		if prob != nil {
			return []*ApplyError{prob}
		}
		if alt != "" {
			oldName, newName = alt, alt
		}
	}
	switch {
	case fd.Create:
		return t.createFile(fd, newName, touched)
	case fd.Delete:
		return t.deleteFile(fd, oldName, touched)
	}
	return t.patchFile(fd, oldName, newName, touched)
}

// createFile stages the file newName that fd creates (--- /dev/null): it
// must not exist, and fd's hunks may only add lines.
func (t *tx) createFile(fd *FileDiff, newName string, touched map[string]string) []*ApplyError {
	path, perr := t.resolve(newName)
	if perr != nil {
		return []*ApplyError{perr}
	}
	e, err := t.get(path, newName)
	if err != nil {
		return fileProblem(newName, err, "")
	}
	if e.exists {
		return fileProblem(newName, ErrFileState, "the diff creates it (--- /dev/null) but it already exists; send a diff against its current text")
	}
	var b strings.Builder
	for _, h := range fd.Hunks {
		for _, l := range h.Lines {
			if l.Kind == Context || l.Kind == Delete {
				if l.Text == "" && l.Kind == Context {
					b.WriteString("\n") // a blank line written without "+"
					continue
				}
				return fileProblem(newName, ErrFileState, "a new file's hunk may only add lines")
			}
			b.WriteString(l.Text)
			b.WriteString("\n")
		}
	}
	text := b.String()
	if n := len(fd.Hunks); n > 0 && fd.Hunks[n-1].NoNewline {
		text = strings.TrimSuffix(text, "\n")
	}
	e.exists, e.text = true, text
	touched[path] = newName
	return nil
}

// deleteFile stages the deletion of oldName that fd makes (+++ /dev/null):
// the file must exist, and fd must show its whole current text as removed
// (trailing spaces aside) unless it is empty.
func (t *tx) deleteFile(fd *FileDiff, oldName string, touched map[string]string) []*ApplyError {
	path, perr := t.resolve(oldName)
	if perr != nil {
		return []*ApplyError{perr}
	}
	e, err := t.get(path, oldName)
	if err != nil {
		return fileProblem(oldName, err, "")
	}
	if !e.exists {
		return fileProblem(oldName, ErrFileState, "the diff deletes it but it does not exist")
	}
	if len(fd.Hunks) == 0 && e.text != "" {
		// A deletion shows what it removes; a bare "+++ /dev/null"
		// could delete any file unseen.
		return fileProblem(oldName, ErrFileState, "the diff deletes the file without showing its content; send its whole current text as removed lines, or call delete_file")
	}
	if len(fd.Hunks) > 0 {
		var old []string
		for _, h := range fd.Hunks {
			for _, l := range h.Lines {
				if l.Kind != Add {
					old = append(old, trimRightSpace(l.Text))
				}
			}
		}
		have := splitText(e.text).lines
		same := len(have) == len(old)
		for i := 0; same && i < len(have); i++ {
			same = trimRightSpace(have[i]) == old[i]
		}
		if !same {
			return fileProblem(oldName, ErrFileState, "the diff deletes the file but its removed lines are not the file's current text")
		}
	}
	e.exists, e.text = false, ""
	touched[path] = oldName
	return nil
}

// patchFile stages fd's hunks applied to oldName, and the move to newName
// when fd renames it — with rename headers, or when only oldName of two
// different names exists (only newName existing, it is the file patched).
func (t *tx) patchFile(fd *FileDiff, oldName, newName string, touched map[string]string) []*ApplyError {
	oldPath, perr := t.resolve(oldName)
	if perr != nil {
		return []*ApplyError{perr}
	}
	newPath, perr := t.resolve(newName)
	if perr != nil {
		return []*ApplyError{perr}
	}
	rename := fd.Rename && oldPath != newPath
	if !fd.Rename && oldPath != newPath {
		// Different names without rename headers: the one that exists.
		oe, ne := t.exists(oldName), t.exists(newName)
		switch {
		case oe && ne:
			return fileProblem(newName, ErrFileState, "the header names two existing files (%s and %s); use the same name on both lines", oldName, newName)
		case oe:
			rename = true
		case ne:
			oldPath, oldName = newPath, newName
		default:
			return fileProblem(oldName, ErrFileState, "no such file")
		}
	}
	src, err := t.get(oldPath, oldName)
	if err != nil {
		return fileProblem(oldName, err, "")
	}
	if !src.exists {
		return fileProblem(oldName, ErrFileState, "no such file; to create it, use --- /dev/null")
	}
	text := src.text
	if len(fd.Hunks) > 0 {
		out, ms, probs := applyHunks(oldName, text, fd.Hunks)
		if len(probs) > 0 {
			return probs
		}
		t.matches = append(t.matches, ms...)
		text = out
	}
	if !rename {
		src.text = text
		touched[oldPath] = oldName
		return nil
	}
	dst, err := t.get(newPath, newName)
	if err != nil {
		return fileProblem(newName, err, "")
	}
	if dst.exists {
		return fileProblem(newName, ErrFileState, "the diff renames %s to it but it already exists", oldName)
	}
	dst.exists, dst.text = true, text
	dst.from = src.path
	if src.from != "" {
		dst.from = src.from
	}
	src.exists, src.text, src.movedTo = false, "", newPath
	touched[oldPath], touched[newPath] = oldName, newName
	return nil
}

// checkText runs the file-level checks on a file's new text: no new
// placeholder for elided code and, for Go files, no syntax error that the
// text before did not have.
func (s *EditSet) checkText(t *tx, path, name, text string, goCheck bool) *ApplyError {
	if e := t.staged[path]; e != nil && e.from != "" {
		path = e.from // a renamed file is checked against its source
	}
	before, existed := t.before(path)
	if !existed {
		before = ""
	}
	if n, line, ok := newPlaceholder(path, before, text); ok {
		return &ApplyError{Path: name, Err: ErrPlaceholder,
			Detail: fmt.Sprintf("line %d %q stands for code left out", n, line)}
	}
	if goCheck && !s.opts.AllowBrokenGo && strings.HasSuffix(path, ".go") {
		if err := s.syntaxError(name, text); err != nil {
			if !existed || s.syntaxError(name, before) == nil {
				return &ApplyError{Path: name, Err: ErrBrokenSyntax, Detail: err.Error()}
			}
		}
	}
	return nil
}
