package assist

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

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
	Edits []patch.Edit
	// Text is a created file's content.
	Text string
	// Stamp is what the file on disk was when Base was read from it
	// (Lander.Disk): the writer's transaction checks it, so that a file
	// changed since is not overwritten. Delete and Rename carry the stamp
	// of the file they remove.
	Stamp workspace.Stamp
	// Rebased is set when Base was not the text the change was computed
	// against: the edit was moved onto a change made since.
	Rebased bool
}

// NewText returns the file's text after the edit: Text for a creation,
// Base with Edits applied otherwise ("" without a Base).
func (f PlannedFile) NewText() (string, error) {
	if f.Kind == EditCreate {
		return f.Text, nil
	}
	if f.Base == nil {
		return "", nil
	}
	return patch.ApplyEdits(f.Base.Text(), f.Edits)
}

// EditPlan is an edit computed against the documents as they are when it
// lands, holding their turn until End.
type EditPlan struct {
	// Files are the file edits, in the order of the changes.
	Files []PlannedFile
	// Edits counts text edits and file operations; Touched counts files.
	Edits, Touched int
	// Hunks counts the changes as a user reads them (patch.Hunks): a
	// modified file's hunks, and one for a created or deleted file.
	Hunks int

	turn   landingTurn
	lander *Lander
	disk   bool
	label  string
	lands  []landing
}

type landing struct {
	uri   workspace.URI
	base  workspace.Base
	after string
}

// Lander plans the edits of tasks, for the server and the command line
// alike: each file's change lands on the text the file has when the plan
// is made, rebased over what changed since the task read it.
type Lander struct {
	// Queue gives the editor's buffers their turn (the server).
	Queue *workspace.EditQueue
	// Folders names files in messages (nil: base names).
	Folders *workspace.Folders
	// Disk, when set, replaces the queue (the command line): the text an
	// edit lands on is the file read again from disk through this writer,
	// just before writing, and PlannedFile.Stamp holds what it was.
	Disk *workspace.Writer
}

// landingTurn is what a plan lands on: the editor's buffers, holding
// their turn in the edit queue, or the files on disk.
type landingTurn interface {
	base(ctx context.Context, uri workspace.URI) (workspace.Base, workspace.Stamp, error)
	history(uri workspace.URI) []workspace.LandedEdit
	landed(uri workspace.URI, base workspace.Base, after, label string)
	end()
}

// queueTurn lands on the editor's buffers.
type queueTurn struct{ t *workspace.EditTurn }

func (q queueTurn) base(ctx context.Context, uri workspace.URI) (workspace.Base, workspace.Stamp, error) {
	b, err := q.t.Base(ctx, uri)
	return b, workspace.Stamp{}, err
}
func (q queueTurn) history(uri workspace.URI) []workspace.LandedEdit { return q.t.History(uri) }
func (q queueTurn) landed(uri workspace.URI, base workspace.Base, after, label string) {
	q.t.Landed(uri, base, after, label)
}
func (q queueTurn) end() { q.t.End() }

// diskTurn lands on the files on disk, read through the confined writer.
type diskTurn struct{ w *workspace.Writer }

func (d diskTurn) base(_ context.Context, uri workspace.URI) (workspace.Base, workspace.Stamp, error) {
	p, err := uri.Path()
	if err != nil {
		return workspace.Base{}, workspace.Stamp{}, err
	}
	b, stamp, err := d.w.ReadFile(p)
	if err != nil {
		return workspace.Base{}, stamp, err
	}
	return workspace.Base{Snapshot: workspace.NewSnapshot(uri, workspace.LanguageOf(p), 0, string(b))}, stamp, nil
}
func (diskTurn) history(workspace.URI) []workspace.LandedEdit         { return nil }
func (diskTurn) landed(workspace.URI, workspace.Base, string, string) {}
func (diskTurn) end()                                                 {}

// name is how messages name uri: workspace-relative (relative to the
// writer's directory on disk).
func (l *Lander) name(uri workspace.URI) string {
	if l.Disk != nil {
		if p, err := uri.Path(); err == nil {
			if r, err := filepath.Rel(l.Disk.Dir(), p); err == nil {
				return filepath.ToSlash(r)
			}
			return p
		}
	}
	return DisplayPath(l.Folders, uri)
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
// the editor applied it, and End in every case. With Disk set there is no
// turn to wait for: each file is read from disk, a deletion must find the
// text it was computed against, and the plan is written with the Stamps.
func (l *Lander) Plan(ctx context.Context, changes []patch.FileChange, label string, status func(string)) (*EditPlan, error) {
	var turn landingTurn = diskTurn{l.Disk}
	if l.Disk == nil {
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
		t, err := l.Queue.Begin(ctx, uris, label, waiting)
		if err != nil {
			return nil, err
		}
		if waited && status != nil {
			status("applying the edit")
		}
		turn = queueTurn{t}
	}
	p := &EditPlan{turn: turn, lander: l, disk: l.Disk != nil, label: label}
	for _, c := range changes {
		if err := p.add(ctx, l, c); err != nil {
			turn.end()
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
		p.Files = append(p.Files, PlannedFile{Kind: EditModify, URI: uri, Base: base.Snapshot, Version: base.Version, Edits: edits,
			Stamp: base.stamp, Rebased: base.rebased})
		p.Edits += len(edits)
		p.Hunks += len(patch.Hunks(base.Snapshot.Text(), edits))
	case patch.CreateFile:
		p.Files = append(p.Files, PlannedFile{Kind: EditCreate, URI: uri, Text: c.After})
		p.Edits++
		p.Hunks++
	case patch.DeleteFile:
		f := PlannedFile{Kind: EditDelete, URI: uri}
		if p.disk {
			// On disk a deletion removes the text it was computed
			// against, or nothing.
			base, stamp, err := p.turn.base(ctx, uri)
			switch {
			case err != nil:
				return fmt.Errorf("%s: %w", l.name(uri), err)
			case base.Snapshot.Text() != c.Before:
				return fmt.Errorf("%s changed on disk while the model ran and was to be deleted", l.name(uri))
			}
			f.Stamp = stamp
		}
		p.Files = append(p.Files, f)
		p.Edits++
		p.Hunks++
	case patch.RenameFile:
		old := workspace.FileURI(c.OldPath)
		f := PlannedFile{Kind: EditRename, URI: uri, OldURI: old}
		p.Edits++
		if c.Before != c.After || p.disk {
			// After the rename the document lives at the new URI; its text
			// is the old file's, edited. (On disk the old file is read in
			// any case: the new one is written from it.)
			base, edits, err := p.rebase(ctx, l, old, c)
			if err != nil {
				return err
			}
			f.Base, f.Edits, f.Stamp, f.Rebased = base.Snapshot, edits, base.stamp, base.rebased
			p.Edits += len(edits)
			p.Hunks += len(patch.Hunks(base.Snapshot.Text(), edits))
		}
		p.Files = append(p.Files, f)
	}
	p.Touched++
	return nil
}

// plannedBase is the text a file's edit lands on.
type plannedBase struct {
	workspace.Base
	stamp   workspace.Stamp
	rebased bool // the text is not the one the change was computed against
}

// rebase computes the edits turning the file's text as it is now into
// c.After's counterpart: c's line edits, rebased over the changes made
// since c.Before was read.
func (p *EditPlan) rebase(ctx context.Context, l *Lander, uri workspace.URI, c patch.FileChange) (plannedBase, []patch.Edit, error) {
	name := l.name(uri)
	b, stamp, err := p.turn.base(ctx, uri)
	base := plannedBase{Base: b, stamp: stamp}
	if err != nil {
		if p.disk {
			return base, nil, fmt.Errorf("%s: %w", name, err)
		}
		return base, nil, fmt.Errorf("reading %s: %w", name, err)
	}
	edits := patch.LineEdits(c.Before, c.After)
	text := base.Snapshot.Text()
	if text != c.Before {
		base.rebased = true
		edits, err = patch.Rebase(c.Before, text, edits)
		if err == nil && p.disk {
			_, err = patch.ApplyEdits(text, edits)
		}
		if err != nil {
			if p.disk {
				return base, nil, fmt.Errorf("%s changed on disk while the model ran: %w", name, err)
			}
			if by, ok := blame(p.turn.history(uri), c.Before, patch.LineEdits(c.Before, c.After)); ok {
				return base, nil, fmt.Errorf("%s: %w (%s) applied after this job read the file; not applied — ask again to redo it on the new text (%w)", name, ErrOverlap, by, err)
			}
			return base, nil, fmt.Errorf("%s changed where the edit applies since it was requested; not applied (%w)", name, err)
		}
	}
	if len(edits) > 0 && c.Kind == patch.ModifyFile {
		after, err := patch.ApplyEdits(text, edits)
		if err == nil {
			p.lands = append(p.lands, landing{uri: uri, base: base.Base, after: after})
		}
	}
	return base, edits, nil
}

// blame finds which of our landed edits, since the text before, the edits
// conflict with: the first whose result they cannot be rebased onto.
func blame(hist []workspace.LandedEdit, before string, edits []patch.Edit) (string, bool) {
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
		p.turn.landed(l.uri, l.base, l.after, p.label)
	}
}

// End gives back the documents' turn. It is safe to call more than once.
func (p *EditPlan) End() { p.turn.end() }

// Summary says what landing the plan does: applied as computed, or
// applied on top of changes made since the task read the files (naming
// them).
func (p *EditPlan) Summary() Landing {
	s := Landing{Kind: LandApplied}
	for _, f := range p.Files {
		if f.Rebased {
			s.Kind = LandOnTop
			uri := f.URI
			if f.Kind == EditRename {
				uri = f.OldURI
			}
			s.Rebased = append(s.Rebased, p.lander.name(uri))
		}
	}
	return s
}

// LandingKind is what became of an edit task.
type LandingKind uint8

// The outcomes of an edit task.
const (
	// LandApplied: the edit was applied as computed.
	LandApplied LandingKind = iota
	// LandOnTop: the edit was applied on top of a change made since the
	// task read the files (Landing.Rebased names them).
	LandOnTop
	// LandNoChange: the model changed nothing and said why
	// (Landing.Reason).
	LandNoChange
	// LandRefused: nothing was applied (Landing.Err says why).
	LandRefused
)

// Landing is the outcome of an edit task, one classification for the
// server and the command line; each words it for its user.
type Landing struct {
	Kind LandingKind
	// Reason is the model's answer when it proposed no change.
	Reason string
	// Rebased names the files an edit was moved onto a change of.
	Rebased []string
	// Err is why nothing was applied.
	Err error
}

// Summarize classifies a task's result before landing: no change with the
// model's reason (ErrNoChange, and the model answered something), refused
// (any other error), or, without an error, applied (to be confirmed by the
// plan's Summary).
func Summarize(out *Outcome, err error) Landing {
	switch {
	case err == nil:
		return Landing{Kind: LandApplied}
	case errors.Is(err, ErrNoChange) && out != nil && len(out.Changes) == 0 && strings.TrimSpace(out.Text) != "":
		return Landing{Kind: LandNoChange, Reason: strings.TrimSpace(out.Text), Err: err}
	}
	return Landing{Kind: LandRefused, Err: err}
}

// DocumentEdit is the outcome of an edit of one open file computed by the
// server itself (a next-edit suggestion): the file at path, whose text
// before was before at the editor's version, becomes after. Plan lands it
// like a job's edit.
func DocumentEdit(path, before, after string, version int32) *Outcome {
	return &Outcome{Changes: []patch.FileChange{{Path: path, Kind: patch.ModifyFile, Before: before, After: after, Version: version}}}
}

// WriteChanges writes checked changes (their paths were confined to the
// workspace when the edit set was built) below root, all or nothing,
// through the confined writer (workspace.Writer). It lands them as the
// server does (Lander), on the files read again from disk: if one
// changed on disk while the model ran, the change is rebased onto the new
// text, or, when the user's change touches the same lines, everything is
// refused with nothing written. It returns the workspace-relative names of
// the files that were rebased.
func WriteChanges(ctx context.Context, root string, changes []patch.FileChange) (rebased []string, err error) {
	w, err := workspace.NewWriter(root, 0o644)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	lander := &Lander{Disk: w}
	plan, err := lander.Plan(ctx, changes, "", nil)
	if err != nil {
		return nil, fmt.Errorf("%w (nothing was written)", err)
	}
	defer plan.End()
	tx := w.Begin()
	defer tx.Abort() // after Commit, a no-op
	for _, f := range plan.Files {
		path, perr := f.URI.Path()
		if perr != nil {
			return nil, fmt.Errorf("%w (nothing was written)", perr)
		}
		text, terr := f.NewText()
		switch {
		case terr != nil:
			err = terr
		case f.Kind == EditCreate:
			err = tx.Create(path, []byte(text))
		case f.Kind == EditDelete:
			err = tx.Remove(path, f.Stamp)
		case f.Kind == EditRename:
			old, oerr := f.OldURI.Path()
			if err = oerr; err == nil {
				if err = tx.Create(path, []byte(text)); err == nil {
					err = tx.Remove(old, f.Stamp)
				}
			}
		default:
			err = tx.Replace(path, f.Stamp, []byte(text))
		}
		if err != nil {
			return nil, fmt.Errorf("%w (nothing was written)", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return plan.Summary().Rebased, nil
}
