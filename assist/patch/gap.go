package patch

import (
	"fmt"
	"strings"
)

// isGap reports whether a hunk line stands for unchanged lines the model
// left out between two parts of a hunk: a context line (never a removed or
// added one) that is an elision placeholder ("...", "// ...",
// "# ... existing code ...", "/* ... */").
func isGap(l Line) bool { return l.Kind == Context && isPlaceholder(l.Text) }

// segment of a hunk between elided gaps: lines [from, to) of the hunk.
type hunkPart struct{ from, to int }

// gapParts splits a hunk at its gap lines. Leading and trailing gaps (which
// stand for nothing a hunk needs) are dropped. ok is false when the hunk has
// no inner gap, or when a part has no context or removed line to locate
// it (added lines right after a gap have no place of their own).
func gapParts(lines []Line) (parts []hunkPart, ok bool) {
	start := 0
	for k := 0; k <= len(lines); k++ {
		if k < len(lines) && !isGap(lines[k]) {
			continue
		}
		if k > start {
			parts = append(parts, hunkPart{start, k})
		}
		start = k + 1
	}
	if len(parts) < 2 {
		return nil, false
	}
	for _, p := range parts {
		if len(oldLines(lines[p.from:p.to])) == 0 {
			return nil, false
		}
	}
	return parts, true
}

// window returns a matcher over the file's lines from line from on, in
// the whole file's indentation style.
func (m *matcher) window(from int) *matcher {
	return &matcher{f: &fileText{lines: m.f.lines[from:]}, style: m.style}
}

// locateGapped places a hunk; when it does not match as written and it has
// elided gaps, it is placed part by part: the first part anywhere in the
// file, each next one at the one place after the part before it where it
// matches (the gap skips forward to there). A file line that really reads
// "..." at the spot is matched as written first: the exact reading wins.
func (m *matcher) locateGapped(lines []Line, hint, settle int) (*place, *locateError) {
	p, lerr := m.locate(lines, hint, settle)
	if lerr == nil {
		return p, nil
	}
	parts, ok := gapParts(lines)
	if !ok {
		return nil, lerr
	}
	out := &place{start: -1, align: fill(len(lines), -1), flush: fill(len(lines), -1),
		lines: append([]Line(nil), lines...), level: LevelGap}
	from := 0
	for i, part := range parts {
		seg := lines[part.from:part.to]
		w := m
		if i > 0 {
			w = m.window(from)
		}
		sp, serr := w.locate(seg, 0, 0)
		if serr != nil {
			if i == 0 {
				return nil, serr
			}
			e := &locateError{err: serr.err, level: LevelGap, detail: serr.detail}
			for _, s := range serr.places {
				e.places = append(e.places, s+from)
			}
			gap := strings.TrimSpace(lines[part.from-1].Text)
			if serr.err == ErrAmbiguous {
				e.detail = fmt.Sprintf("the line %q stands for lines left out, and the lines after it match more than one place after line %d; quote the lines in between instead", gap, from)
			} else {
				e.detail = fmt.Sprintf("the line %q stands for lines left out, and the lines after it match nowhere after line %d; quote the lines in between instead", gap, from)
			}
			return nil, e
		}
		off := 0
		if i > 0 {
			off = from
		}
		if i == 0 {
			out.start = sp.start
		} else {
			// Every gap line before this part emits the file's lines up
			// to where the part starts.
			for k := parts[i-1].to; k < part.from; k++ {
				out.flush[k] = sp.start + off
			}
		}
		// A level that trims outer context places a sub-slice of the part.
		at := part.from
		for a := range seg {
			if len(sp.lines) > 0 && &seg[a] == &sp.lines[0] {
				at = part.from + a
				break
			}
		}
		for k, l := range sp.lines {
			if sp.align[k] >= 0 {
				out.align[at+k] = sp.align[k] + off
			}
			if l.Kind == Add && sp.re != nil {
				t, _ := sp.re.renderAt(k, l.Text)
				out.lines[at+k].Text = t
			}
		}
		from = sp.end + off
	}
	out.end = from
	// Leading and trailing gaps stand for nothing: they keep no lines.
	return out, nil
}
