package complete

import (
	"hash/maphash"
	"time"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// This file is next edits' gate: which edits are the user's typing, the
// only ones a next edit is asked about (the package doc, "Next edits";
// D79). An edit that is not ends the burst it falls in without a request
// (at most one request per burst: the typing before it is not asked about
// either) and is counted in NextStats.NotTyped. The rules, in the order
// they are tried (Edited, Saved, fire):
//
//   - Kimi's own landed edits: a change while an edit of ours is in flight
//     (NextOptions.Busy), an accepted suggestion;
//   - their undo or redo: a change whose result is the text before or
//     after one of them (the last maxLanded such texts per document, kept
//     as their length and hash; and the edit queue's history of the edits
//     landed, NextOptions.Landed, for an edit the editor split into
//     several didChanges);
//   - a reload from disk: a ranged change replacing the whole text
//     (NextRequest.Whole), and, when the pause ends, a text equal to the
//     file on disk (NextOptions.SameAsDisk) that no save made so;
//   - a format on save: changes between willSave and didSave (at most
//     saveWait after willSave), and a change that is no keystroke arriving
//     less than saveWindow before didSave (editors that send no willSave);
//   - an edit the editor made for another server (a rename across files,
//     organize imports): a change that is no keystroke to a second
//     document less than crossWindow after one to another (both
//     documents' bursts end), and one didChange with several changes of
//     which one is no keystroke.

// maxLanded bounds the texts before and after Kimi's edits a document
// remembers (two per edit).
const maxLanded = 8

// saveWait bounds how long after a willSave changes are taken as the
// save's (a didSave ends it sooner).
const saveWait = 2 * time.Second

// saveWindow is how close to a didSave a change that is no keystroke is
// taken as the save's (a formatter's, applied right before the write).
const saveWindow = 250 * time.Millisecond

// crossWindow is how close together changes to two documents are taken as
// one edit of the editor's (a rename, a code action of another server): no
// one types into two documents a quarter of a second apart.
const crossWindow = 300 * time.Millisecond

// checkSeed seeds the hashes of remembered texts.
var checkSeed = maphash.MakeSeed()

// textMark is a remembered text: its length and hash.
type textMark struct {
	n int
	h uint64
}

func markOf(s string) textMark { return textMark{n: len(s), h: maphash.String(checkSeed, s)} }

// remember keeps text as one of Kimi's (a text before or after its edit).
// Precondition: NextEdits.mu is held.
func (d *nextDoc) remember(text string) {
	m := markOf(text)
	for _, o := range d.landed {
		if o == m {
			return
		}
	}
	if len(d.landed) == maxLanded {
		d.landed = d.landed[1:]
	}
	d.landed = append(d.landed, m)
}

// isLanded reports whether doc's text is one remembered: the text an undo
// or redo of one of Kimi's edits leaves. Precondition: NextEdits.mu is
// held.
func (d *nextDoc) isLanded(doc *workspace.Snapshot) bool {
	n := doc.Len()
	var m textMark
	for _, o := range d.landed {
		if o.n != n {
			continue
		}
		if m.n == 0 && m.h == 0 {
			m = markOf(doc.Text()) // hashed only when a length matches
		}
		if o == m {
			return true
		}
	}
	return false
}

// isOneOf reports whether doc's text is one of texts.
func isOneOf(doc *workspace.Snapshot, texts []string) bool {
	var cur string
	for _, t := range texts {
		if len(t) != doc.Len() {
			continue
		}
		if cur == "" {
			cur = doc.Text() // copied only when a length matches
		}
		if t == cur {
			return true
		}
	}
	return false
}

// keystroke reports whether e looks like one keystroke: it writes at most
// one character, or a line break with its indentation, and removes at most
// one (a backspace).
func keystroke(e workspace.Edit) bool {
	if e.End-e.Start > utf8.UTFMax {
		return false
	}
	t := e.Text
	if utf8.RuneCountInString(t) <= 1 {
		return true
	}
	if t[0] == '\r' {
		t = t[1:]
	}
	if t == "" || t[0] != '\n' {
		return false
	}
	for _, c := range t[1:] {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// manyPlaces reports whether one didChange's changes are no typing: two or
// more, one of which is no keystroke (a multi-cursor keystroke writes the
// same character at each cursor; an editor merging fast typing sends one
// change per keystroke).
func manyPlaces(edits []workspace.Edit) bool {
	if len(edits) < 2 {
		return false
	}
	for _, e := range edits {
		if !keystroke(e) {
			return true
		}
	}
	return false
}

// gateLocked decides whether d's edit req, taken in at now, is the user's
// typing; it returns why not, or "". ours is an edit of ours in flight,
// accepted the suggestion placed on base accepted by it, landed the texts
// before and after our last edits (NextOptions.Landed). Precondition:
// n.mu is held.
func (n *NextEdits) gateLocked(d *nextDoc, req NextRequest, now time.Time, ours, accepted bool, base string, landed []string) string {
	d.typed = len(req.Changes) > 0
	for _, e := range req.Changes {
		d.typed = d.typed && keystroke(e)
	}
	switch {
	case ours:
		d.remember(textOf(req.Prev))
		d.remember(req.Doc.Text())
		return "an edit of Kimi's landed"
	case accepted:
		d.remember(base)
		d.remember(req.Doc.Text())
		return "the suggestion was accepted"
	}
	prevKey, prevAt, prevTyped := n.lastKey, n.lastAt, n.lastTyped
	n.lastKey, n.lastAt, n.lastTyped = req.Key, now, d.typed
	switch {
	case d.isLanded(req.Doc) || isOneOf(req.Doc, landed):
		return "the undo or redo of an edit of Kimi's"
	case req.Whole:
		n.restartLogLocked(d, req.Doc.Text()) // the log begins at the reloaded text
		return "the whole text replaced (a reload)"
	case !d.willSave.IsZero() && now.Sub(d.willSave) < saveWait:
		return "a change during a save (format on save)"
	case manyPlaces(req.Changes):
		return "changes in several places at once (another server's edit)"
	case prevKey != "" && prevKey != req.Key && now.Sub(prevAt) < crossWindow && !prevTyped && !d.typed:
		if o := n.docs[prevKey]; o != nil && o.timer != nil {
			// The other document's change was the same edit's.
			o.timer.Stop()
			o.timer = nil
			o.burst, o.noBurst = nil, true
			n.counts.notTyped++
		}
		return "changes to several documents at once (another server's edit)"
	}
	return ""
}

// WillSave takes in the editor's willSave of a document: the changes
// until its didSave (at most saveWait) are the save's, not typing. It
// never waits: the editor's read loop calls it.
func (n *NextEdits) WillSave(key string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.docLocked(key).willSave = time.Now()
}

// Saved takes in the editor's didSave of a document: the save window
// closes, and a change that is no keystroke less than saveWindow before it
// (a formatter's, from an editor that sends no willSave) ends its burst
// without a request. It never waits: the editor's read loop calls it.
func (n *NextEdits) Saved(key string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.docs[key]
	if d == nil {
		return
	}
	d.willSave = time.Time{}
	d.savedSeq = d.seq
	if d.timer != nil && !d.typed && time.Since(d.edited) < saveWindow {
		d.timer.Stop()
		d.timer = nil
		d.burst, d.noBurst = nil, true
		n.counts.notTyped++
	}
}

// fromDisk reports, when d's pause after edit seq ends, whether its text
// is the file's on disk without a save since that edit: a reload (the
// editor read the file again), not typing. It reads the file (the timer's
// goroutine, never the read loop).
func (n *NextEdits) fromDisk(d *nextDoc, seq uint64, req NextRequest) bool {
	if n.opts.SameAsDisk == nil {
		return false
	}
	n.mu.Lock()
	saved := d.savedSeq == seq
	n.mu.Unlock()
	if saved || !n.opts.SameAsDisk(req.Key, req.Doc.Text()) {
		return false
	}
	n.mu.Lock()
	if d.seq == seq {
		d.burst, d.noBurst = nil, true
		n.counts.notTyped++
		n.restartLogLocked(d, req.Doc.Text()) // the log begins at the reloaded text
	}
	n.mu.Unlock()
	return true
}
