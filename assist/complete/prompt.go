package complete

import (
	"fmt"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// System is the system message of every completion request: a constant, so
// that it is the start of every cached prefix.
const System = `You are the inline code completion engine of the kimi-lsp language server.
The first user message shows the project and the file being edited (sometimes only a part of it, as the project block says).
The second shows the edits made to that file since, as unified diff hunks, then the request, with <|cursor|> marking the cursor.
Answer with exactly the text to insert at the cursor and nothing else: no explanation, no Markdown fences, no repetition of the code before or after the cursor.
Complete the current line, and go on to the next lines only while the code naturally continues there, at most to the end of the enclosing block.
Follow the file's style and indentation. If nothing sensible should be inserted, answer with nothing.
`

// Prompt layout constants.
const (
	// tailLines is how many lines above and below the cursor the request
	// block repeats with the marker: enough to place it, few enough that
	// the volatile tail stays small (the instruction is in System for the
	// same reason).
	tailLines = 1
	// tailBytes bounds the request block's lines on each side of the
	// cursor (cache.Config.WindowBytes): a long line is cut there.
	tailBytes = 200
	// completionAbove is the share of a completion prompt's window of the
	// file above the cursor (chooseWindow).
	completionAbove = 0.75
	// tailReserve is the estimate of the request block, in tokens.
	tailReserve = 200
	// bytesPerToken converts token budgets to bytes of code (the cache
	// package's offline estimate).
	bytesPerToken = cache.DefaultCharsPerToken
	// contextBytes bounds the text before and after the cursor that a
	// suggestion is checked against (Around, type-ahead).
	aroundBefore = 8 << 10
	aroundAfter  = 16 << 10
)

// budget splits a prompt budget of total tokens: the system message, the
// request block, room for the edit log to grow, the related snippets (at
// most a quarter), and the active file's window (the rest).
type budget struct {
	// logTokens is the edit log's limit (cache.Config.MaxLogTokens).
	logTokens int
	// relatedTokens bounds the snippets of related files.
	relatedTokens int
	// windowTokens is what is left for the window and the related
	// snippets together.
	windowTokens int
}

func splitBudget(total int) budget {
	b := budget{logTokens: total / 4, relatedTokens: total / 4}
	system := len(System)*10/int(bytesPerToken*10) + 1
	b.windowTokens = total - system - tailReserve - b.logTokens
	return b
}

// windowBytes is the window's size when the related snippets take
// relatedBytes.
func (b budget) windowBytes(relatedBytes int) int {
	return max(int(float64(b.windowTokens)*bytesPerToken)-relatedBytes, 1024)
}

// window is the part of the active file a layout shows: the lines from lo
// to the end but the last hiFromEnd, so that typing inside it keeps both
// numbers and only the text changes. A line too long for the window (a
// minified file, a one-line JSON document) is cut: the window starts loCut
// bytes into line lo and ends hiCut bytes before the end of its last line,
// which typing inside the window keeps as well.
type window struct {
	lo, hiFromEnd int
	loCut, hiCut  int
}

// bounds returns the window's byte range in doc, at rune boundaries.
func (w window) bounds(doc *workspace.Snapshot) (start, end int) {
	n := doc.Len()
	start = min(doc.LineStart(w.lo)+w.loCut, n)
	end = n
	if w.hiFromEnd > 0 {
		end = doc.LineStart(doc.LineCount() - w.hiFromEnd)
	}
	end = max(start, end-w.hiCut)
	if w.loCut > 0 {
		s := doc.Slice(start, min(start+utf8.UTFMax, end))
		for i := 0; i < len(s) && !utf8.RuneStart(s[i]); i++ {
			start++
		}
	}
	if w.hiCut > 0 && end < n {
		s := doc.Slice(max(start, end-utf8.UTFMax), end+1)
		for i := len(s) - 1; i > 0 && !utf8.RuneStart(s[i]); i-- {
			end--
		}
	}
	return start, max(start, end)
}

// fits reports whether the window still suits a cursor at off: inside it,
// not within a tenth of its size of an edge the file goes on past, and not
// grown past 5/4 of size.
func (w window) fits(doc *workspace.Snapshot, off, size int) bool {
	if w.lo+w.hiFromEnd >= doc.LineCount() {
		return false
	}
	start, end := w.bounds(doc)
	margin := size / 10
	switch {
	case off < start || off > end:
		return false
	case (w.lo > 0 || w.loCut > 0) && off < start+margin:
		return false
	case (w.hiFromEnd > 0 || w.hiCut > 0) && off > end-margin:
		return false
	}
	return end-start <= size*5/4
}

// chooseWindow returns whole lines around off, about size bytes, the share
// above of them above the cursor (completion's three quarters: the code
// before the cursor says most about what comes next; next edits' a third:
// what follows an edit is mostly below it). A line that would take the
// window past its size is cut: the cursor's line when it is longer than the
// part above the cursor, and the last line when it ends more than a quarter
// of size past the window's end.
func chooseWindow(doc *workspace.Snapshot, off, size int, above float64) window {
	n := doc.Len()
	if n <= size {
		return window{}
	}
	up := int(float64(size) * above)
	start, end := off-up, off+size-up
	if start < 0 {
		end, start = end-start, 0
	}
	if end > n {
		start, end = max(0, start-(end-n)), n
	}
	line := int(doc.OffsetPosition(off, workspace.UTF8).Line)
	w := window{}
	if start > 0 {
		p := doc.OffsetPosition(start, workspace.UTF8)
		w.lo = int(p.Line)
		if p.Character > 0 {
			w.lo++ // whole lines only
		}
		w.lo = min(w.lo, line)
		if ls := doc.LineStart(w.lo); ls < start {
			w.loCut = start - ls // the cursor's line is longer than the part above it
		}
	}
	if end < n {
		last := max(int(doc.OffsetPosition(end, workspace.UTF8).Line), line)
		w.hiFromEnd = max(doc.LineCount()-last-1, 0)
		lineEnd := n
		if w.hiFromEnd > 0 {
			lineEnd = doc.LineStart(doc.LineCount() - w.hiFromEnd)
		}
		if lineEnd-end > size/4 {
			w.hiCut = lineEnd - end
		}
	}
	return w
}

// projectFor is the project block of a layout: it names the surface (lead:
// "Inline completion in") and the window, so that moving the window lays
// the whole prompt out afresh (nothing after the change could be served
// from the cache anyway).
func projectFor(lead, name, path string, w window) cache.Project {
	conv := fmt.Sprintf("%s %s. The file is shown from its line %d", lead, path, w.lo+1)
	if w.loCut > 0 {
		conv += " (from inside that line, which is too long to show whole)"
	}
	switch {
	case w.hiCut > 0:
		conv += " to inside a line too long to show whole; it goes on past what is shown"
	case w.hiFromEnd > 0:
		conv += " to near its end; it goes on below what is shown"
	default:
		conv += " to its end"
	}
	conv += "; line numbers in the request count from the first line shown."
	return cache.Project{Name: name, Conventions: conv}
}
