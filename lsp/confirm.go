package lsp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// Edits confirmed hunk by hunk (edits.confirm): when the setting asks for
// it and the client declares workspace.workspaceEdit.changeAnnotationSupport,
// every edit of a modified file is sent as an AnnotatedTextEdit with an
// annotation of its own (needsConfirmation), so that the editor shows the
// edit in its preview and applies the hunks the user keeps. Each hunk is
// one planned edit, applied whole or not at all. What was applied is read
// from the document once the editor's didChange arrived: each hunk is
// found applied or not in the new text. A partly applied edit is not
// recorded as our landed edit (the rest is then the user's own change, as
// typing is). Clients without annotations get the edit whole, as always.

// confirmTimeout bounds the wait for the editor's answer to an edit sent
// for confirmation: a person reads the hunks and picks (VS Code's refactor
// preview, the Neovim plugin's review buffer), as long as for a
// showMessageRequest. Cancelling the job ends the wait at once.
const confirmTimeout = UserClientTimeout

// confirmWait bounds the wait for the didChange that follows an applied,
// annotated edit (5 s: Neovim debounces didChange, and the machine may be
// loaded; it ends as soon as the change arrives).
const confirmWait = 5 * time.Second

// hunkFile is what checkHunks needs of an annotated file.
type hunkFile struct {
	uri     workspace.URI
	base    string
	version int32
	// open: the editor had the file open when the edit was planned
	// (version is its version then); else base is the text on disk.
	open  bool
	edits []patch.Edit
}

// wantsConfirmation reports whether plan's edit is to be confirmed hunk by
// hunk under edits.confirm, for a client that can.
func (s *Server) wantsConfirmation(plan *assist.EditPlan) bool {
	caps := s.clientCaps()
	we := caps.Workspace.WorkspaceEdit
	if we == nil || !we.DocumentChanges || we.ChangeAnnotationSupport == nil {
		return false
	}
	switch s.config().Edits.Confirm {
	case config.ConfirmAlways:
		return true
	case config.ConfirmMultiFile:
		if len(plan.Files) > 1 {
			return true
		}
		for _, f := range plan.Files {
			if f.Kind != assist.EditModify {
				return true
			}
		}
	}
	return false
}

// annotate makes edit's text edits of modified files annotated, one
// annotation per hunk, and returns the files to check afterwards.
func (s *Server) annotate(edit *workspaceEdit, plan *assist.EditPlan) []hunkFile {
	enc := s.encoding()
	// One entry per hunk as the user reads it, never half of one
	// (patch.Hunks; issue 33 item 17).
	hunksOf := map[int][]patch.Edit{}
	total := 0
	for i, f := range plan.Files {
		if f.Kind == assist.EditModify {
			hunksOf[i] = patch.Hunks(f.Base.Text(), f.Edits)
			total += len(hunksOf[i])
		}
	}
	edit.ChangeAnnotations = map[string]changeAnnotation{}
	var files []hunkFile
	n := 0
	i := 0
	for fi, f := range plan.Files {
		if f.Kind != assist.EditModify {
			continue
		}
		// Find f's entry among the document changes.
		for ; i < len(edit.DocumentChanges); i++ {
			if tde, ok := edit.DocumentChanges[i].(textDocumentEdit); ok && tde.TextDocument.URI == string(f.URI) {
				break
			}
		}
		if i == len(edit.DocumentChanges) {
			break
		}
		tde := edit.DocumentChanges[i].(textDocumentEdit)
		ade := annotatedDocumentEdit{TextDocument: tde.TextDocument}
		name := s.displayPath(f.URI)
		hunks := hunksOf[fi]
		for _, e := range hunks {
			n++
			id := fmt.Sprintf("kimi.hunk.%d", n)
			r := f.Base.OffsetRange(e.Start, e.End, enc)
			ade.Edits = append(ade.Edits, annotatedTextEdit{
				Range: toProtocolRange(r), NewText: e.NewText, AnnotationID: id})
			edit.ChangeAnnotations[id] = changeAnnotation{
				Label:             fmt.Sprintf("%s:%d (hunk %d of %d)", name, r.Start.Line+1, n, total),
				Description:       hunkDescription(f.Base.Slice(e.Start, e.End), e.NewText),
				NeedsConfirmation: true,
			}
		}
		edit.DocumentChanges[i] = ade
		v := int32(0)
		if f.Version != nil {
			v = *f.Version
		}
		files = append(files, hunkFile{uri: f.URI, base: f.Base.Text(), version: v, open: f.Version != nil, edits: hunks})
	}
	return files
}

// hunkDescription says in a few words what a hunk does.
func hunkDescription(old, new string) string {
	lines := func(s string) int {
		if s == "" {
			return 0
		}
		return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
	}
	o, n := lines(old), lines(new)
	switch {
	case o == 0:
		return fmt.Sprintf("insert %d %s", n, plural(n, "line", "lines"))
	case n == 0:
		return fmt.Sprintf("delete %d %s", o, plural(o, "line", "lines"))
	}
	return fmt.Sprintf("replace %d %s with %d", o, plural(o, "line", "lines"), n)
}

// checkHunks waits (at most confirmWait) for the editor's didChange of
// each file and counts the hunks found applied in the new text. A file the
// editor had not open is opened by the editor to apply the edit: its
// didOpen (with the text on disk, before the edit, in VS Code and Neovim)
// and didChange may come after the answer, so such a file is waited for
// until the editor shows it changed, not taken as unchanged when it is not
// open yet or only just opened.
func (s *Server) checkHunks(ctx context.Context, files []hunkFile) (applied, total int) {
	deadline := time.Now().Add(confirmWait)
	for _, f := range files {
		total += len(f.edits)
		var snap *workspace.Snapshot
		for {
			ch := s.docs.Changed()
			cur, ok := s.docs.Snapshot(f.uri)
			if ok && (f.open && cur.Version > f.version || cur.Text() != f.base) {
				snap = cur
				break
			}
			wait := time.Until(deadline)
			if !ok && f.open || wait <= 0 {
				break // an open file closed, or no change seen in time
			}
			t := time.NewTimer(wait)
			select {
			case <-ch:
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
			if ctx.Err() != nil {
				break
			}
		}
		if snap == nil {
			continue // no change seen: none counted applied
		}
		applied += appliedHunks(f.base, snap.Text(), f.edits)
	}
	return applied, total
}

// appliedHunks walks base's sorted edits through text and counts those
// applied: a hunk is applied when its new text, then the unchanged text up
// to the next hunk, follow at its place; else it is not when its old text
// does.
func appliedHunks(base, text string, edits []patch.Edit) int {
	n, delta := 0, 0
	for i, e := range edits {
		next := len(base)
		if i+1 < len(edits) {
			next = edits[i+1].Start
		}
		between := base[e.End:next]
		at := e.Start + delta
		if at < 0 || at > len(text) {
			break
		}
		rest := text[at:]
		if strings.HasPrefix(rest, e.NewText) && strings.HasPrefix(rest[len(e.NewText):], between) {
			n++
			delta += len(e.NewText) - (e.End - e.Start)
		}
	}
	return n
}
