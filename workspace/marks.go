package workspace

import (
	"sync"

	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// Edit is one change of a document's text in byte offsets: [Start, End)
// of the text before it is replaced by Text.
type Edit struct {
	Start, End int
	Text       string
}

// DiffEdit is the one edit that turns old into new: the span between their
// common prefix and common suffix.
func DiffEdit(old, new string) Edit {
	p := 0
	for p < len(old) && p < len(new) && old[p] == new[p] {
		p++
	}
	s := 0
	for s < len(old)-p && s < len(new)-p && old[len(old)-1-s] == new[len(new)-1-s] {
		s++
	}
	return Edit{Start: p, End: len(old) - s, Text: new[p : len(new)-s]}
}

// maxDiffEditsCost bounds the line diff of DiffEdits: a larger change is
// the one span DiffEdit finds.
const maxDiffEditsCost = 1000

// DiffEdits are edits that turn old into new, one per run of changed lines
// (each the span that differs within its lines), in the order Marks.Apply
// takes them: the last first, so that each is in the text after the ones
// before it. Marks moved through them are dropped only where the text
// changed, not over the unchanged lines between two changes, as with
// DiffEdit's one span.
func DiffEdits(old, new string) []Edit {
	if old == new {
		return nil
	}
	a, b := linediff.SplitLines(old), linediff.SplitLines(new)
	pre, suf := 0, 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	changes := linediff.Changes(linediff.Diff(a[pre:len(a)-suf], b[pre:len(b)-suf], maxDiffEditsCost))
	for i := range changes {
		changes[i].OldStart += pre
		changes[i].NewStart += pre
	}
	// Byte offsets of the lines' starts, with the end as a last one.
	starts := func(lines []string) []int {
		out := make([]int, len(lines)+1)
		for i, l := range lines {
			out[i+1] = out[i] + len(l)
		}
		return out
	}
	oa, ob := starts(a), starts(b)
	edits := make([]Edit, 0, len(changes))
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		os, oe := oa[c.OldStart], oa[c.OldStart+c.OldCount]
		e := DiffEdit(old[os:oe], new[ob[c.NewStart]:ob[c.NewStart+c.NewCount]])
		edits = append(edits, Edit{Start: os + e.Start, End: os + e.End, Text: e.Text})
	}
	return edits
}

// Marks are ranges of one document's text kept in place as the text is
// edited: a mark before or after an edit moves with the text around it,
// and a mark the edit touches (overlaps, or borders: typing at a mark's
// first or last character is editing it) is dropped. Review findings are
// marks; so can be anything else anchored to lines the user may edit
// around (next-edit suggestions). Safe for concurrent use.
type Marks struct {
	mu    sync.Mutex
	next  int
	marks map[int]*markRange
}

type markRange struct{ start, end int }

// NewMarks returns an empty set.
func NewMarks() *Marks { return &Marks{marks: map[int]*markRange{}} }

// Add marks [start, end) and returns the mark's id.
func (m *Marks) Add(start, end int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	m.marks[m.next] = &markRange{start, end}
	return m.next
}

// Range returns the mark's current range; ok false once it was dropped or
// removed.
func (m *Marks) Range(id int) (start, end int, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.marks[id]
	if !ok {
		return 0, 0, false
	}
	return r.start, r.end, true
}

// Remove forgets a mark; it reports whether the mark was there.
func (m *Marks) Remove(id int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.marks[id]
	delete(m.marks, id)
	return ok
}

// Len is the number of marks kept.
func (m *Marks) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.marks)
}

// Apply moves the marks through edits, applied in order (each in the text
// after the previous ones, as ChangeEdits returns them), and returns the
// ids of the marks dropped because an edit touched them.
func (m *Marks) Apply(edits []Edit) (dropped []int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range edits {
		delta := len(e.Text) - (e.End - e.Start)
		for id, r := range m.marks {
			switch {
			case e.End < r.start:
				r.start += delta
				r.end += delta
			case e.Start > r.end:
			default:
				delete(m.marks, id)
				dropped = append(dropped, id)
			}
		}
	}
	return dropped
}
