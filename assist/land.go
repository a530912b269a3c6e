package assist

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// EditKind says what a planned file edit does.
type EditKind uint8

// The kinds of file edit.
const (
	EditModify EditKind = iota
	EditCreate
	EditDelete
	EditRename
)

// TextEdit replaces the bytes [Start, End) of a base text with NewText.
type TextEdit = patch.Edit

// PlannedFile is one file's part of an edit, ready to send.
type PlannedFile struct {
	Kind EditKind
	// URI is the file (the new name of a rename); OldURI is the old name
	// of a rename.
	URI, OldURI workspace.URI
	// Base is the text Edits apply to (Modify, and Rename with edits); map
	// their offsets with it.
	Base *workspace.Snapshot
	// Version is the editor's version of Base, or nil for a file that is
	// not open (and for the new name of a rename).
	Version *int32
	// Edits are sorted, non-overlapping byte-offset edits of Base.
	Edits []TextEdit
	// Text is a created file's content.
	Text string
}

// EditPlan is an edit computed against the documents as they are when it
// lands, holding their turn until End.
type EditPlan struct {
	// Files are the file edits, in the order of the changes.
	Files []PlannedFile
	// Edits counts text edits and file operations; Touched counts files.
	Edits, Touched int

	turn  *workspace.EditTurn
	label string
	lands []landing
}

type landing struct {
	uri   workspace.URI
	base  workspace.Base
	after string
}

// Lander plans the edits of tasks over the workspace's edit queue.
type Lander struct {
	Queue   *workspace.EditQueue
	Folders *workspace.Folders
}

// ErrOverlap is wrapped when an edit touches lines that another edit of
// ours changed since the task read them.
var ErrOverlap = errors.New("the edit overlaps an earlier edit")

// Plan waits for the turn of every document the changes touch (ctx ends
// the wait), then computes each file's edit against the document as it is
// now: the change's edits are rebased over what changed since the task
// read the file — the user's typing or our own earlier edits — when they
// touch none of the edited lines, and refused otherwise, naming the earlier
// edit when it was one of ours (ErrOverlap). While it waits for a document
// held by an earlier edit, status (if set) hears which, and "applying the
// edit" once the wait is over. The plan holds the turn: call Landed when
// the editor applied it, and End in every case.
func (l *Lander) Plan(ctx context.Context, changes []patch.FileChange, label string, status func(string)) (*EditPlan, error) {
	var uris []workspace.URI
	for _, c := range changes {
		uris = append(uris, workspace.FileURI(c.Path))
		if c.Kind == patch.RenameFile {
			uris = append(uris, workspace.FileURI(c.OldPath))
		}
	}
	var waited bool
	waiting := func(uri workspace.URI, holder string) {
		waited = true
		if status == nil {
			return
		}
		msg := "waiting for an earlier edit to " + DisplayPath(l.Folders, uri)
		if holder != "" {
			msg += " (" + holder + ")"
		}
		status(msg + " to be applied")
	}
	turn, err := l.Queue.Begin(ctx, uris, label, waiting)
	if err != nil {
		return nil, err
	}
	if waited && status != nil {
		status("applying the edit")
	}
	p := &EditPlan{turn: turn, label: label}
	for _, c := range changes {
		if err := p.add(ctx, l, c); err != nil {
			turn.End()
			return nil, err
		}
	}
	return p, nil
}

func (p *EditPlan) add(ctx context.Context, l *Lander, c patch.FileChange) error {
	uri := workspace.FileURI(c.Path)
	switch c.Kind {
	case patch.ModifyFile:
		base, edits, err := p.rebase(ctx, l, uri, c)
		if err != nil {
			return err
		}
		if len(edits) == 0 {
			return nil
		}
		p.Files = append(p.Files, PlannedFile{Kind: EditModify, URI: uri, Base: base.Snapshot, Version: base.Version, Edits: edits})
		p.Edits += len(edits)
	case patch.CreateFile:
		p.Files = append(p.Files, PlannedFile{Kind: EditCreate, URI: uri, Text: c.After})
		p.Edits++
	case patch.DeleteFile:
		p.Files = append(p.Files, PlannedFile{Kind: EditDelete, URI: uri})
		p.Edits++
	case patch.RenameFile:
		old := workspace.FileURI(c.OldPath)
		f := PlannedFile{Kind: EditRename, URI: uri, OldURI: old}
		p.Edits++
		if c.Before != c.After {
			// After the rename the document lives at the new URI; its text
			// is the old file's, edited.
			base, edits, err := p.rebase(ctx, l, old, c)
			if err != nil {
				return err
			}
			f.Base, f.Edits = base.Snapshot, edits
			p.Edits += len(edits)
		}
		p.Files = append(p.Files, f)
	}
	p.Touched++
	return nil
}

// rebase computes the edits turning the file's text as it is now into
// c.After's counterpart: c's line edits, rebased over the changes made
// since c.Before was read.
func (p *EditPlan) rebase(ctx context.Context, l *Lander, uri workspace.URI, c patch.FileChange) (workspace.Base, []TextEdit, error) {
	name := DisplayPath(l.Folders, uri)
	base, err := p.turn.Base(ctx, uri)
	if err != nil {
		return base, nil, fmt.Errorf("reading %s: %w", name, err)
	}
	edits := patch.LineEdits(c.Before, c.After)
	text := base.Snapshot.Text()
	if text != c.Before {
		edits, err = patch.Rebase(c.Before, text, edits)
		if err != nil {
			if by, ok := blame(p.turn.History(uri), c.Before, patch.LineEdits(c.Before, c.After)); ok {
				return base, nil, fmt.Errorf("%s: %w (%s) applied after this job read the file; not applied — ask again to redo it on the new text (%w)", name, ErrOverlap, by, err)
			}
			return base, nil, fmt.Errorf("%s changed where the edit applies since it was requested; not applied (%w)", name, err)
		}
	}
	if len(edits) > 0 && c.Kind == patch.ModifyFile {
		after, err := patch.ApplyEdits(text, edits)
		if err == nil {
			p.lands = append(p.lands, landing{uri: uri, base: base, after: after})
		}
	}
	return base, edits, nil
}

// blame finds which of our landed edits, since the text before, the edits
// conflict with: the first whose result they cannot be rebased onto.
func blame(hist []workspace.LandedEdit, before string, edits []TextEdit) (string, bool) {
	i := slices.IndexFunc(hist, func(h workspace.LandedEdit) bool { return h.Before == before })
	if i < 0 {
		return "", false
	}
	for _, h := range hist[i:] {
		if _, err := patch.Rebase(before, h.After, edits); err != nil {
			return h.Label, true
		}
	}
	return "", false
}

// Landed records that the editor applied the plan, so the next edits of
// its documents are computed against the text it left.
func (p *EditPlan) Landed() {
	for _, l := range p.lands {
		p.turn.Landed(l.uri, l.base, l.after, p.label)
	}
}

// End gives back the documents' turn. It is safe to call more than once.
func (p *EditPlan) End() { p.turn.End() }
