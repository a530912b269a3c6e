package corpus

// The rows of issue 33 item 22: a hunk whose thin context occurs twice,
// which the line its header names settles only when it names one place
// and the other lies 20 lines or more away (D84).

const (
	pThinFar     = "thin context, two places 30+ lines apart (header names one)"
	pThinNear    = "22 thin context, two places under 20 lines apart (header names one)"
	pThinBetween = "22 thin context, header between two places"
)

// shiftFrom moves the headers of the hunks whose old lines start at or
// after line at (0-based) down by n lines: n lines were inserted there in
// the file the diff is applied to, and the model read that file.
func (d *ddiff) shiftFrom(at, n int) {
	for _, h := range d.hunks {
		if h.oldStart-1 >= at {
			h.oldStart += n
			h.newStart += n
		}
	}
}

// thinTwice makes the cases where the header does not settle a tie: one
// hunk's leading context trimmed, what is left planted a second time near
// it, and its header naming the intended place with the copy under 20
// lines away (pThinNear), or naming the line halfway between the two, up
// to 60 lines apart (pThinBetween). It returns the file the diff is
// applied to and the one a correct second answer reaches.
func (g *gen) thinTwice(name string, d *ddiff, lines []string, ops []op) (before, intended string, ok bool) {
	h := d.hunks[g.r.IntN(len(d.hunks))]
	lead := h.leadCtx()
	h.lines = h.lines[lead:]
	if !h.hasDelete() && h.leadCtx() == 0 && h.trailCtx() == 0 {
		return "", "", false
	}
	h.oldStart += lead
	h.newStart += lead
	block := h.oldBlock()
	hs := h.oldStart - 1 // the intended place, 0-based, in lines
	lo, hi := max(len(block), 1), 19
	if name == pThinBetween {
		lo, hi = max(len(block), 2*hintSlackLines+2), 60
	}
	if lo > hi {
		return "", "", false
	}
	dist := lo + g.r.IntN(hi-lo+1)
	// The copy goes dist lines after the intended place's start, or
	// before it so that the intended place starts dist lines after it.
	at, intendedAt, copyAt := hs+dist, hs, hs+dist
	if g.r.IntN(2) == 0 {
		at = hs + len(block) - dist
		intendedAt, copyAt = hs+len(block), at
	}
	if at < 0 || at > len(lines) {
		return "", "", false
	}
	for _, o := range d.hunks {
		if s := o.oldStart - 1; at > s && at < s+len(o.oldBlock()) {
			return "", "", false // inside a hunk's lines
		}
	}
	for _, o := range ops {
		if at >= o.at && at <= o.at+o.del {
			return "", "", false // at an edit: the two would not be ordered
		}
	}
	add := make([]string, len(block))
	for i, b := range block {
		add[i] = b + "\n"
	}
	p := op{at: at, add: add}
	before = join(applyOps(lines, []op{p}))
	intended = join(applyOps(lines, append(append([]op(nil), ops...), p)))
	d.shiftFrom(at, len(block))
	named := intendedAt
	if name == pThinBetween {
		named = (intendedAt + copyAt) / 2
	}
	h.newStart += named + 1 - h.oldStart
	h.oldStart = named + 1
	h.recount()
	if clearReading(before, h) < 2 {
		return "", "", false
	}
	return before, intended, true
}

// hintSlackLines is the applier's hintSlack: a header naming a line within
// it of a place names that place.
const hintSlackLines = 3
