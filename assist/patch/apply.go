package patch

import (
	"fmt"
	"sort"
	"strings"
)

// variants returns the readings of a hunk's lines: unchanged when every
// line has a marker; otherwise unmarked lines read as context, and read as
// added lines.
func variants(lines []Line) [][]Line {
	has := false
	for _, l := range lines {
		if l.Kind == Unmarked {
			has = true
		}
	}
	if !has {
		return [][]Line{lines}
	}
	asCtx := make([]Line, len(lines))
	asAdd := make([]Line, len(lines))
	for i, l := range lines {
		asCtx[i], asAdd[i] = l, l
		if l.Kind == Unmarked {
			asCtx[i].Kind = Context
			asAdd[i].Kind = Add
		}
	}
	return [][]Line{asCtx, asAdd}
}

// placed is a located hunk with its replacement lines.
type placed struct {
	*place
	out []string // the lines replacing [start, end), without terminators
	idx int      // hunk index
}

// walk visits the lines replacing the place in order: each added line
// (re-indented) through add, each file line kept (context lines, blank
// lines skipped by drift, the lines an elided gap stands for) through keep.
func (p *place) walk(add func(text string), keep func(j int)) {
	j := p.start
	for k, l := range p.lines {
		if l.Kind == Add {
			t := l.Text
			if p.re != nil {
				t, _ = p.re.renderAt(k, t)
			}
			add(t)
			continue
		}
		if p.flush != nil && p.flush[k] >= 0 {
			for ; j < p.flush[k]; j++ {
				keep(j)
			}
			continue
		}
		a := p.align[k]
		if a < 0 {
			continue
		}
		for ; j < a; j++ {
			keep(j)
		}
		if l.Kind == Context {
			keep(a)
		}
		j = a + 1
	}
}

// output renders the lines that replace the place, keeping context lines
// and blank lines skipped by drift as the file has them.
func (p *place) output(f *fileText) []string {
	var out []string
	p.walk(func(t string) { out = append(out, t) }, func(j int) { out = append(out, f.lines[j]) })
	return out
}

// applyHunks applies hunks to text, all or none. name is the file as the
// model named it, for messages.
func applyHunks(name, text string, hunks []*Hunk) (string, []Match, []*ApplyError) {
	f := splitText(text)
	m := newMatcher(f)
	var ps []placed
	var probs []*ApplyError
	// offset is how far from their headers' lines the earlier hunks were
	// found: a header's line corrected by it breaks a tie (settledByHeader).
	offset := 0
	for i, h := range hunks {
		var found []placed
		var firstErr *locateError
		settle := 0
		if h.OldStart > 0 {
			settle = max(h.OldStart+offset, 1)
		}
		for _, lines := range variants(h.Lines) {
			p, lerr := m.locateGapped(lines, h.OldStart, settle)
			if lerr != nil {
				if firstErr == nil {
					firstErr = lerr
				}
				continue
			}
			found = append(found, placed{place: p, out: p.output(f), idx: i})
		}
		switch {
		case len(found) == 2 && (found[0].start != found[1].start || found[0].end != found[1].end ||
			strings.Join(found[0].out, "\n") != strings.Join(found[1].out, "\n")):
			probs = append(probs, &ApplyError{Path: name, Hunk: i + 1, Header: h.Header, Err: ErrAmbiguous,
				Level: max(found[0].level, found[1].level), Places: []int{found[0].start + 1, found[1].start + 1},
				Detail: "some lines have no diff marker and the hunk fits both as context and as added lines; prefix every line with \" \", \"-\" or \"+\""})
		case len(found) > 0:
			ps = append(ps, found[0])
			if h.OldStart > 0 {
				offset = found[0].start - (h.OldStart - 1)
			}
		default:
			e := &ApplyError{Path: name, Hunk: i + 1, Header: h.Header, Err: firstErr.err,
				Level: firstErr.level, Detail: firstErr.detail}
			for _, s := range firstErr.places {
				e.Places = append(e.Places, s+1)
			}
			lines := variants(h.Lines)[0]
			switch e.Err {
			case ErrNoMatch:
				if s, ok := nearest(f, lines); ok {
					n := len(oldLines(lines))
					e.Nearest = around(f, s, s+n, 2, n+4)
					e.Mismatches = mismatches(f, lines, s)
				}
			case ErrAmbiguous:
				n := len(oldLines(lines))
				for k, s := range firstErr.places {
					if k == 3 {
						break
					}
					e.PlaceLines = append(e.PlaceLines, around(f, s, s+n, 2, n+4))
				}
			}
			probs = append(probs, e)
		}
	}
	if len(probs) > 0 {
		return "", nil, probs
	}
	sort.SliceStable(ps, func(a, b int) bool { return ps[a].start < ps[b].start })
	for i := 1; i < len(ps); i++ {
		a, b := ps[i-1], ps[i]
		if b.start < a.end || (b.start == a.start && a.start == a.end) {
			probs = append(probs, &ApplyError{Path: name, Hunk: b.idx + 1, Header: hunks[b.idx].Header, Err: ErrOverlap,
				Detail: fmt.Sprintf("it claims lines %d-%d, which hunk %d (lines %d-%d) also claims", b.start+1, b.end, a.idx+1, a.start+1, a.end)})
		}
	}
	if len(probs) > 0 {
		return "", nil, probs
	}
	matches := make([]Match, len(ps))
	for i, p := range ps {
		matches[i] = Match{Path: name, Hunk: p.idx + 1, Level: p.level, Line: p.start + 1, ByHeader: p.byHeader}
	}
	sort.Slice(matches, func(a, b int) bool { return matches[a].Hunk < matches[b].Hunk })
	var lines, eols []string
	cur := 0
	emitFile := func(j int) {
		lines = append(lines, f.lines[j])
		eol := f.eols[j]
		if eol == "" {
			eol = f.eol
		}
		eols = append(eols, eol)
	}
	for _, p := range ps {
		for ; cur < p.start; cur++ {
			emitFile(cur)
		}
		// Context lines keep their own terminators; new lines take the
		// file's dominant one.
		p.walk(func(t string) {
			lines = append(lines, t)
			eols = append(eols, f.eol)
		}, emitFile)
		cur = p.end
	}
	for ; cur < len(f.lines); cur++ {
		emitFile(cur)
	}
	if len(eols) > 0 && !f.finalNewline() {
		if lines[len(lines)-1] == "" {
			// Without a final newline an empty last line cannot be
			// written: the text would end with a newline after all.
			return "", nil, []*ApplyError{{Path: name, Err: ErrFileState,
				Detail: "the file does not end with a newline and the edit would leave its last line empty; an edit keeps the file's final-newline state, so leave the end of the file as it is or end it with a non-empty line"}}
		}
		eols[len(eols)-1] = ""
	}
	return f.render(lines, eols), matches, nil
}

// Match records where and at which level a hunk was placed.
type Match struct {
	Path  string // as the model named the file
	Hunk  int    // 1-based
	Level Level
	Line  int // 1-based first line of the hunk's old lines in the file
	// ByHeader is set when the hunk matched several places far apart and
	// the line its header names chose one.
	ByHeader bool
}
