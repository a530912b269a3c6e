package complete

import (
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// This file is next edits' edit log: what every next-edit prompt shows of
// the edits that led to it (the package doc, "Next edits"; D80). A
// document's log begins when it is opened (Opened) — or, for a document
// next edits meet first in an edit, with the text before that edit — and
// begins again when it is reloaded (a didChange replacing the whole text,
// or a text found equal to the file on disk): its base is then the
// reloaded text and its prompt session is laid out afresh, so a reload is
// never shown as an edit of the user's. Each prompt passes its base to the
// cache session as the active document's Base (cache.Document): whenever
// the session lays the file out afresh (its first request, a moved
// window, a cold cache, a rebase) the file block shows the base and the
// edit log the change from it, so even a document's first request shows
// the edit that triggered it; between those, the session's own
// append-only log carries every edit. When the change from the log's base
// grows past what the log may show (logShare of the edit log's budget),
// the log begins again at the start of the current burst: the burst that
// asks is always shown, the earlier edits as long as they fit.

// logShare is the part of the edit log's budget (budget.logTokens) that
// the change from a log's base may take: under the half at which the cache
// session refuses a base (cache.Document.Base), as its estimate and this
// one differ.
const logShare = 0.4

// editLog is a document's edit log. Precondition for every field:
// NextEdits.mu is held.
type editLog struct {
	// base is the text the log begins with; set reports that it is known.
	base string
	set  bool
}

// Opened takes in the editor's didOpen of a document: its edit log begins
// with text, and its next prompt is laid out afresh (a reopened document's
// older session shows another text). It never waits: the editor's read
// loop calls it.
func (n *NextEdits) Opened(key string, doc *workspace.Snapshot) {
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.docLocked(key)
	n.restartLogLocked(d, doc.Text())
}

// restartLogLocked begins d's edit log again at text (an open or a
// reload): its prompt session goes, so that the next prompt shows text and
// the edits after it, never the reload as an edit. Precondition: n.mu is
// held.
func (n *NextEdits) restartLogLocked(d *nextDoc, text string) {
	d.log = editLog{base: text, set: true}
	d.prompt.retire(&n.retired)
}

// logBaseLocked returns the base d's prompt at cur shows (the active
// document's cache.Document.Base): the log's base while the change from it
// to cur fits in limit bytes, else the text before the current burst, at
// which the log begins again. Precondition: n.mu is held.
func (d *nextDoc) logBaseLocked(cur string, limit int) string {
	if !d.log.set {
		d.log = editLog{base: textOf(d.burst), set: true}
	}
	if d.log.base != cur && changeBytes(d.log.base, cur) > limit && !d.noBurst {
		d.log.base = textOf(d.burst)
	}
	return d.log.base
}

// hunkBytes is about what a hunk's header and markers add to its lines in
// the edit log.
const hunkBytes = 24

// changeBytes estimates the size of the edit-log block that turns a into
// b: the lines it removes and writes, and its hunks' headers.
func changeBytes(a, b string) int {
	n := 0
	for _, e := range patch.LineEdits(a, b) {
		n += e.End - e.Start + len(e.NewText) + hunkBytes
	}
	return n
}

// baseWindow returns the part of base that the window [start, end) of
// cur shows as of base: its bounds mapped back through the line changes
// from base to cur, a change the window's edge falls in taken whole.
func baseWindow(base, cur string, start, end int) string {
	if start == 0 && end == len(cur) {
		return base
	}
	edits := patch.LineEdits(base, cur)
	return base[mapBack(edits, start, false):mapBack(edits, end, true)]
}

// mapBack maps offset x of the text edits lead to back to the text they
// apply to: inside (or at the end of) an edit's new text, to that edit's
// start (or, for the window's end, its end).
func mapBack(edits []patch.Edit, x int, end bool) int {
	shift := 0 // offset in the new text less offset in the old one
	for _, e := range edits {
		from, to := e.Start+shift, e.Start+shift+len(e.NewText)
		switch {
		case x <= from:
			return x - shift
		case x <= to:
			if end {
				return e.End
			}
			return e.Start
		}
		shift += len(e.NewText) - (e.End - e.Start)
	}
	return x - shift
}
