package assist

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/relevance"
)

// Errors of BuildTask.
var (
	// ErrUnknownAction: no action of that name is configured.
	ErrUnknownAction = errors.New("no such action is configured")
	// ErrSelectionTooLarge: the selection alone is over context.maxFileSize.
	ErrSelectionTooLarge = errors.New("the selection is larger than context.maxFileSize")
)

// TaskRequest is what the user asked, in workspace terms. The server and
// the command line fill it; BuildTask turns it into a Task.
type TaskRequest struct {
	// Action is the action's name ("fix", or a user-defined one).
	Action string
	// Instruction is the user's instruction, if any.
	Instruction string
	// Document is the active document: the editor's buffer as it was when
	// the request arrived, or a file read from disk.
	Document *workspace.Snapshot
	// Start and End are the selection's byte offsets in Document.
	Start, End int
	// Diagnostics are the problems the action should address (Fix).
	Diagnostics []cache.Diagnostic
	// Open are the open documents' snapshots, taken with Document (nil on
	// the command line).
	Open []*workspace.Snapshot
	// Recent are recently viewed files, most recent first.
	Recent []workspace.URI
	// Review asks for Kimi: Review (config.Config.ReviewAction) instead of
	// the action Action names.
	Review bool
	// Estimator converts context.maxTokens into the bytes the context
	// selection fills: the engine's (Engine.Estimator), corrected by the
	// provider's counts; the zero value is the uncorrected estimate.
	Estimator cache.Estimator
	// Cached reports what the prompt session's stable part holds, which
	// the context selection takes first (relevance.Request.Cached): the
	// engine's (Engine.BuildTask); nil on the command line.
	Cached func(path, part string) bool
}

// BuildTask builds the task for r: it resolves the action, refuses secret
// files (the error wraps workspace.ErrSecret), names the document as the
// model sees it, cuts an active document larger than context.maxFileSize to
// a window around the selection (Task.Notice says so), finds a Rewrite
// instruction written in the selection, and selects the context documents
// by relevance within context.maxTokens (relevance.Choose).
// folders may be nil (no workspace: nothing besides the document is shown,
// and every edit is refused).
func BuildTask(cfg config.Config, folders *workspace.Folders, r TaskRequest) (*Task, error) {
	a, ok := cfg.ActionFor(r.Action)
	if r.Review {
		a, ok = cfg.ReviewAction(), true
	}
	if !ok {
		return nil, fmt.Errorf("%q: %w", r.Action, ErrUnknownAction)
	}
	snap := r.Document
	display := displayPath(folders, snap.URI)
	if folders.IsSecretURI(snap.URI) { // any scheme: untitled:/ws/.env is secret too
		return nil, fmt.Errorf("%s: %w", display, workspace.ErrSecret)
	}
	text := snap.Text()
	start, end := clamp(r.Start, 0, len(text)), clamp(r.End, 0, len(text))
	if end < start {
		start, end = end, start
	}
	t := &Task{
		Action:      a,
		URI:         snap.URI,
		Instruction: strings.TrimSpace(r.Instruction),
		Project:     cache.Project{Name: projectName(folders), Languages: folders.Languages()},
		Active: cache.Document{
			Path:       display,
			Language:   languageOf(snap),
			Text:       text,
			Version:    snap.Version,
			LastEdited: int64(snap.Seq),
		},
		Selection:   cache.Selection{Start: start, End: end},
		Diagnostics: slices.Clone(r.Diagnostics),
	}
	windowed := false
	if limit := cfg.Context.MaxFileSize; limit > 0 && int64(len(text)) > limit {
		if err := t.window(int(limit)); err != nil {
			return nil, err
		}
		windowed = true
	}
	t.fitDiagnostics()
	if a.Name == config.ActionRewrite && t.Instruction == "" {
		if in, ok := RewriteInstruction(t.selectedText()); ok {
			t.Instruction = in
		} else {
			t.NeedsInstruction = true
		}
	}
	var src relevance.Source
	if folders != nil {
		src = relevance.Workspace(folders)
	}
	creq := relevance.Request{Active: snap, SelStart: start, SelEnd: end, Open: r.Open, Recent: r.Recent,
		MaxTokens: cfg.Context.MaxTokens, Bytes: r.Estimator.Bytes, Cached: r.Cached}
	c := relevance.Choose(src, creq)
	if src != nil {
		t.choice = &contextChoice{src: src, req: creq}
	}
	for _, f := range c.Stable {
		// An active file outside every folder is shown by its base name,
		// which a workspace file may share; a file cut to a window is
		// shown by the window, not by parts.
		if f.Path != t.Active.Path || c.ExcerptActive && !windowed && f.Part != "" {
			t.Context = append(t.Context, contextDoc(f))
		}
	}
	t.Volatile = contextDocs(c.Volatile)
	t.ExcerptActive = c.ExcerptActive && !windowed
	t.ContextBudget = ContextBudget(cfg.Context.MaxTokens)
	t.Files = NewFiles(folders, r.Open)
	return t, nil
}

// contextDoc is a chosen file as the prompt cache lays it out.
func contextDoc(f relevance.ContextFile) cache.Document {
	return cache.Document{Path: f.Path, Part: f.Part, Line: f.Line, Language: f.Language, Text: f.Text,
		Version: f.Version, LastEdited: f.LastEdit}
}

// contextDocs is contextDoc of each of fs.
func contextDocs(fs []relevance.ContextFile) []cache.Document {
	var out []cache.Document
	for _, f := range fs {
		out = append(out, contextDoc(f))
	}
	return out
}

// window cuts the active document to whole lines around the selection,
// about limit bytes in all, and records why in Notice and Notes.
func (t *Task) window(limit int) error {
	text := t.Active.Text
	sel := t.Selection
	if sel.End-sel.Start > limit {
		return fmt.Errorf("%s: %w (%s selected, limit %s); select less or raise context.maxFileSize", t.Active.Path, ErrSelectionTooLarge, sizeText(sel.End-sel.Start), sizeText(limit))
	}
	room := (limit - (sel.End - sel.Start)) / 2
	lo := max(sel.Start-room, 0)
	hi := min(sel.End+room, len(text))
	// Whole lines: move lo forward to a line start, hi back to a line end
	// (never into the selection). A line longer than the room on its side
	// (a minified file) is cut there instead, at a rune boundary: the
	// window never grows past limit.
	cut := false
	if lo > 0 {
		if i := strings.IndexByte(text[lo:sel.Start], '\n'); i >= 0 {
			lo += i + 1
		} else {
			for lo < sel.Start && !utf8.RuneStart(text[lo]) {
				lo++
			}
			cut = cut || lo > 0 && text[lo-1] != '\n'
		}
	}
	if hi < len(text) {
		if i := strings.LastIndexByte(text[sel.End:hi], '\n'); i >= 0 {
			hi = sel.End + i + 1
		} else {
			for hi > sel.End && !utf8.RuneStart(text[hi]) {
				hi--
			}
			cut = cut || text[hi] != '\n'
		}
	}
	first := strings.Count(text[:lo], "\n") + 1
	last := first + strings.Count(text[lo:hi], "\n") - 1
	if hi == len(text) && !strings.HasSuffix(text, "\n") {
		last++
	}
	total := strings.Count(text, "\n") + 1
	t.Active.Text = text[lo:hi]
	t.WindowLine = first - 1
	t.Selection = cache.Selection{Start: sel.Start - lo, End: sel.End - lo}
	part := ""
	if cut {
		part = " (a line longer than that cut around the selection)"
	}
	t.Notice = fmt.Sprintf("%s is %s, over context.maxFileSize (%s): the model sees lines %d-%d of %d around the selection only%s",
		t.Active.Path, sizeText(len(text)), sizeText(limit), first, last, total, part)
	t.Notes = append(t.Notes, fmt.Sprintf("Note: %s is too large to show whole; the prompt holds only its lines %d-%d (of %d), renumbered from 1%s. Do not assume anything about the lines not shown.", t.Active.Path, first, last, total, part))
	// The diagnostics are renumbered with the lines; those outside the
	// window go (the model could not see their lines).
	var kept []cache.Diagnostic
	for _, d := range t.Diagnostics {
		if d.StartLine >= first-1 && d.EndLine <= last-1 {
			d.StartLine, d.EndLine = d.StartLine-(first-1), d.EndLine-(first-1)
			kept = append(kept, d)
		}
	}
	t.Diagnostics = kept
	return nil
}

// MaxDiagnostics bounds the diagnostics a prompt quotes (a linter may
// report thousands in a file), and maxDiagnosticBytes each one's message.
const (
	MaxDiagnostics     = 20
	maxDiagnosticBytes = 1 << 10
)

// fitDiagnostics keeps at most MaxDiagnostics of t's diagnostics: those on
// the selection's lines first, then the most severe, then the nearest;
// quoted in line order, each message cut at maxDiagnosticBytes. A note
// says how many were left out.
func (t *Task) fitDiagnostics() {
	for i := range t.Diagnostics {
		if m := t.Diagnostics[i].Message; len(m) > maxDiagnosticBytes {
			cut := maxDiagnosticBytes
			for cut > 0 && !utf8.RuneStart(m[cut]) {
				cut--
			}
			t.Diagnostics[i].Message = m[:cut] + "…"
		}
	}
	n := len(t.Diagnostics)
	if n <= MaxDiagnostics {
		return
	}
	text, sel := t.Active.Text, t.Selection
	first := strings.Count(text[:min(sel.Start, len(text))], "\n")
	last := first + strings.Count(text[min(sel.Start, len(text)):min(sel.End, len(text))], "\n")
	distance := func(d cache.Diagnostic) int {
		switch {
		case d.EndLine < first:
			return first - d.EndLine
		case d.StartLine > last:
			return d.StartLine - last
		}
		return 0
	}
	ds := slices.Clone(t.Diagnostics)
	slices.SortStableFunc(ds, func(a, b cache.Diagnostic) int {
		return cmp.Or(cmp.Compare(min(distance(a), 1), min(distance(b), 1)), cmp.Compare(a.Severity, b.Severity), cmp.Compare(distance(a), distance(b)))
	})
	ds = ds[:MaxDiagnostics]
	slices.SortStableFunc(ds, func(a, b cache.Diagnostic) int { return cmp.Compare(a.StartLine, b.StartLine) })
	t.Diagnostics = ds
	t.Notes = append(t.Notes, fmt.Sprintf("Note: the file has %d diagnostics; the prompt quotes the %d on or nearest the selection.", n, MaxDiagnostics))
}

func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func clamp(v, lo, hi int) int { return min(max(v, lo), hi) }

// displayPath is the workspace-relative path of uri the model sees, or the
// base name for files outside every folder and non-file URIs.
func displayPath(folders *workspace.Folders, uri workspace.URI) string {
	p, err := uri.Path()
	if err != nil {
		return path.Base(string(uri))
	}
	if folders != nil {
		if rel, ok := folders.RelPath(p); ok {
			return rel
		}
	}
	return path.Base(p)
}

// DisplayPath is the name the user and the model see for uri: its
// workspace-relative path, or its base name outside every folder.
func DisplayPath(folders *workspace.Folders, uri workspace.URI) string {
	return displayPath(folders, uri)
}

// projectName is the name of the first workspace folder.
func projectName(folders *workspace.Folders) string {
	if folders == nil {
		return ""
	}
	if l := folders.List(); len(l) > 0 {
		return l[0].Name
	}
	return ""
}

// languageOf returns the client's language id, else a guess from the name.
func languageOf(s *workspace.Snapshot) string {
	if s.LanguageID != "" {
		return s.LanguageID
	}
	return workspace.LanguageOf(string(s.URI))
}
