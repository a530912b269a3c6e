package complete

import (
	"fmt"
	"strconv"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// This file is next edits' paged window (D102, D103, D106): a file larger
// than the prompt's window is shown in pages of nextPageLines lines, each
// a document of the cache session of its own (a part of the active file,
// "page N"). A layout shows at first the pages within pageFirst of the
// window's bytes around the cursor (a third of it above the cursor); when
// a page within the smaller pageReach is not shown, it is appended after
// the edit log (cache.Config.LateInLog), so everything shown before stays
// byte for byte, the log included, and only the new page and the request
// block are written. An edit inside a page shown is an edit block of that
// page in the session's log, and every page carries the log's base
// (cache.Document.Base), so a page laid out afresh — a layout's first
// request, a new page, a rebase — shows its text as of the base and the
// change since. When the pages the cursor needs would take the shown ones
// past the layout's room (roomFor), the layout is reset: a new session
// with the pages within pageReset around the cursor only and the same
// related snippets, so the prefix up to the pages stays cached.

// nextPageLines is the size of a page, in lines of the file as it was
// when the layout was made (D102).
const nextPageLines = 16

// pageReach is the share of the window's bytes around the cursor whose
// pages a prompt must show: a request whose reach takes in a page not
// shown appends it (D102). An append writes the new pages and the request
// block only (D106), so a request appends no more than it needs.
const pageReach = 0.10

// pageFirst is the share of the window's bytes around the cursor whose
// pages a document's first layout shows (D102): a short session on one
// part of the file then appends nothing.
const pageFirst = 0.40

// pageReset is the share a reset's layout shows (D106): a reset writes
// every page it shows, and the cursor that filled the room is moving on.
const pageReset = 0.15

// pageRoom is the room of a layout's pages, in quarters of the window's
// bytes (roomFor): past it, a reset (D103).
const pageRoom = 3

// roomFor is the bytes the pages of a layout may take before a reset,
// where the window may take size bytes.
func roomFor(size int) int { return size * pageRoom / 4 }

// paged is the pages of a layout. Precondition for every field and
// method: the owning surface's lock is held.
type paged struct {
	// text is the text the bounds are offsets of (the last one followed);
	// page k is text[bounds[k]:bounds[k+1]].
	text   string
	bounds []int
	// shown are the pages shown, in the order they were first shown.
	shown []int
}

// choosePages returns the pages of a new layout of doc at cursor, where
// the window may take size bytes: the file cut every nextPageLines lines,
// the pages within pageFirst of size around the cursor shown (pageReset
// for a reset; above of them above it). Nil when those take more than the
// room (very long lines): the caller shows a window instead.
func choosePages(doc *workspace.Snapshot, from, cursor, size int, above float64, reset bool) *paged {
	pg := &paged{text: doc.Text()}
	for line := 0; line < doc.LineCount(); line += nextPageLines {
		pg.bounds = append(pg.bounds, doc.LineStart(line))
	}
	pg.bounds = append(pg.bounds, doc.Len())
	first := pageFirst
	if reset {
		first = pageReset
	}
	pg.shown = pg.missingWithin(from, cursor, int(float64(size)*first), above)
	if pg.bytes(pg.shown) > roomFor(size) {
		return nil
	}
	return pg
}

// follow moves the page bounds to text: through the line changes from the
// text they were for, a change across a page's start joining the later
// page.
func (pg *paged) follow(text string) {
	if text == pg.text {
		return
	}
	edits := patch.LineEdits(pg.text, text)
	for i, x := range pg.bounds {
		pg.bounds[i] = mapForward(edits, x)
	}
	pg.bounds[len(pg.bounds)-1] = len(text)
	pg.text = text
}

// mapForward maps offset x of the text edits apply to into the text they
// lead to: inside an edit's old text, to the start of its new text.
func mapForward(edits []patch.Edit, x int) int {
	shift := 0
	for _, e := range edits {
		switch {
		case x <= e.Start:
			return x + shift
		case x < e.End:
			return e.Start + shift
		}
		shift += len(e.NewText) - (e.End - e.Start)
	}
	return x + shift
}

// missing returns the pages not shown, in file order, that a request at
// cursor must show: those holding the cursor, overlapping the reach around
// it (pageReach of size, the share above of it above the cursor) or the
// burst's change, from from to the cursor (the edit that asks, D80).
func (pg *paged) missing(from, cursor, size int, above float64) []int {
	return pg.missingWithin(from, cursor, int(float64(size)*pageReach), above)
}

// missingWithin is missing with a reach of reach bytes.
func (pg *paged) missingWithin(from, cursor, reach int, above float64) []int {
	n := len(pg.text)
	start := cursor - int(float64(reach)*above)
	end := cursor + int(float64(reach)*(1-above))
	if start < 0 {
		start, end = 0, end-start
	}
	if end > n {
		start, end = max(0, start-(end-n)), n
	}
	start = min(start, from)
	var out []int
	for k := 0; k+1 < len(pg.bounds); k++ {
		lo, hi := pg.bounds[k], pg.bounds[k+1]
		at := lo <= cursor && (cursor < hi || k+2 == len(pg.bounds))
		if (at || lo < end && hi > start) && !pg.isShown(k) {
			out = append(out, k)
		}
	}
	return out
}

func (pg *paged) isShown(k int) bool {
	for _, s := range pg.shown {
		if s == k {
			return true
		}
	}
	return false
}

// bytes is the size of pages in the current text.
func (pg *paged) bytes(pages []int) int {
	n := 0
	for _, k := range pages {
		n += pg.bounds[k+1] - pg.bounds[k]
	}
	return n
}

// fits reports whether the layout can show what a request at cursor of
// doc needs without a reset: the shown pages and the missing ones within
// the room.
func (pg *paged) fits(doc *workspace.Snapshot, from, cursor, size int, above float64) bool {
	pg.follow(doc.Text())
	return pg.bytes(pg.shown)+pg.bytes(pg.missing(from, cursor, size, above)) <= roomFor(size)
}

// documents returns the pages to show for a request at in, the missing
// ones appended to the shown (fits said they fit), each a part of the
// active file, ordered after the related snippets (first) in the order
// they were first shown, each with its part of in's base when it has one.
func (pg *paged) documents(in promptInput, size int, above float64, related int) []cache.Document {
	text := in.doc.Text()
	pg.follow(text)
	pg.shown = append(pg.shown, pg.missing(in.changeStart(), in.cursor, size, above)...)
	var edits []patch.Edit
	if in.hasBase {
		edits = patch.LineEdits(in.base, text)
	}
	out := make([]cache.Document, 0, len(pg.shown))
	for i, k := range pg.shown {
		lo, hi := pg.bounds[k], pg.bounds[k+1]
		d := cache.Document{
			Path: in.path, Part: "page " + strconv.Itoa(k+1), Line: int(in.doc.OffsetPosition(lo, workspace.UTF8).Line) + 1,
			Language: in.language, Text: text[lo:hi], Version: in.doc.Version, LastEdited: int64(related + i),
		}
		if in.hasBase {
			d.Base, d.HasBase = in.base[mapBack(edits, lo, false):mapBack(edits, hi, true)], true
		}
		out = append(out, d)
	}
	return out
}

// pagedProject is the project block of a paged layout: the same for every
// layout of the file, as a reset starts a new session anyway.
func pagedProject(lead, name, path string) cache.Project {
	return cache.Project{Name: name, Conventions: fmt.Sprintf("%s %s. The file is shown in pages of %d lines, not all of them; "+
		"line numbers in the request are the file's.", lead, path, nextPageLines)}
}
