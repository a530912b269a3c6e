package patch

import (
	"fmt"
	"strings"
)

// Level names how far matching went to place a hunk. Levels are tried in
// order and the first one that finds exactly one place wins; a level that
// finds several places fails the hunk.
type Level uint8

const (
	// LevelHint: exact at the line the hunk header names.
	LevelHint Level = iota + 1
	// LevelExact: exact, anywhere in the file.
	LevelExact
	// LevelTrailingSpace: trailing whitespace ignored.
	LevelTrailingSpace
	// LevelBlankLines: blank context lines missing or extra between two
	// context lines, away from any change.
	LevelBlankLines
	// LevelIndent: every line shifted by one consistent indentation, the
	// added lines re-indented in the file's own style.
	LevelIndent
	// LevelTrimmed: up to two outer context lines dropped.
	LevelTrimmed
	// LevelGap: the hunk's parts placed one after the other across the
	// lines an elision line ("...", "// ...") stands for.
	LevelGap
)

var levelNames = [...]string{"", "hinted line", "exact", "trailing whitespace ignored",
	"blank-line drift", "indentation shift", "outer context trimmed", "elided gap skipped"}

// String returns a short description of the level for messages.
func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("level(%d)", l)
}

// tinyAnchor is the number of non-space bytes under which a hunk's old
// lines are too small to be located by content when they occur more than
// once.
const tinyAnchor = 10

// place is where a hunk applies.
type place struct {
	start, end int   // file lines [start, end) covered by the old lines
	align      []int // per hunk line: matched file line, -1 when unmatched (adds, dropped blanks)
	// flush, when set, holds per hunk line the file line up to which an
	// elided gap keeps the file's lines (-1 for other lines).
	flush []int
	lines []Line
	level Level
	re    *reindent
	// byHeader is set when the line the header names chose the place
	// among several (settledByHeader).
	byHeader bool
}

// locateError says why a hunk could not be placed.
type locateError struct {
	err    error // ErrNoMatch or ErrAmbiguous
	level  Level // the last level tried
	places []int // 0-based start lines when ambiguous
	detail string
}

// matcher locates hunks in one file.
type matcher struct {
	f     *fileText
	style indentStyle
}

func newMatcher(f *fileText) *matcher {
	return &matcher{f: f, style: detectStyle(f.lines)}
}

func oldLines(lines []Line) []Line {
	var out []Line
	for _, l := range lines {
		if l.Kind != Add {
			out = append(out, l)
		}
	}
	return out
}

// locate places one hunk (whose lines are Context, Delete or Add only).
// hint is the 1-based line its header names (0: none); settle is that line
// corrected by the offset the file's earlier hunks showed, the tie-breaker
// between places (settledByHeader; 0: none).
func (m *matcher) locate(lines []Line, hint, settle int) (*place, *locateError) {
	old := oldLines(lines)
	if len(old) == 0 {
		if len(m.f.lines) == 0 {
			return &place{start: 0, end: 0, align: fill(len(lines), -1), lines: lines, level: LevelExact}, nil
		}
		return nil, &locateError{err: ErrNoMatch, level: LevelHint,
			detail: "the hunk has no context or removed lines to locate it; include the lines around the change"}
	}
	n := 0
	for _, l := range old {
		n += nonSpaceLen(l.Text)
	}
	exact := m.scan(lines, eqExact)
	if n < tinyAnchor && len(exact) > 1 {
		return nil, &locateError{err: ErrAmbiguous, level: LevelExact, places: starts(exact),
			detail: fmt.Sprintf("its context and removed lines hold only %d non-space characters and occur %d times; include more context", n, len(exact))}
	}
	// The ladder decides by content; the header's line number (settle)
	// only breaks a tie between places far apart (settledByHeader).
	ps, lerr := m.ladder(lines, exact, settle)
	if lerr != nil {
		return nil, lerr
	}
	if len(ps) == 1 {
		if ps[0].level == LevelExact && hint > 0 && ps[0].start == hint-1 {
			ps[0].level = LevelHint
		}
		if hint > 0 && nonBlankOld(lines) == 1 && !nearHint(ps[0].start, hint) {
			return nil, &locateError{err: ErrAmbiguous, level: ps[0].level, places: []int{ps[0].start},
				detail: fmt.Sprintf("its one non-blank old line occurs only at line %d, far from the line its header names (%d): the line it was meant for may have changed since; include more context", ps[0].start+1, hint)}
		}
		if at, ok := m.changedAtHint(lines, hint, ps[0].start); ok {
			return nil, &locateError{err: ErrAmbiguous, level: ps[0].level, places: []int{ps[0].start, at},
				detail: fmt.Sprintf("it matches at line %d, but the line its header names (%d) holds all its lines but one as written, where the file may have changed since; copy the lines exactly from the place you mean", ps[0].start+1, hint)}
		}
		return ps[0], nil
	}
	// Trimmed outer context: one line, then two, in total.
	lead, trail := 0, 0
	for lead < len(lines) && lines[lead].Kind == Context {
		lead++
	}
	for trail < len(lines)-lead && lines[len(lines)-1-trail].Kind == Context {
		trail++
	}
	for total := 1; total <= 2; total++ {
		var found []*place
		for a := total; a >= 0; a-- {
			b := total - a
			if a > lead || b > trail {
				continue
			}
			sub := lines[a : len(lines)-b]
			if len(oldLines(sub)) == 0 || !m.madeUp(lines[:a]) || !m.madeUp(lines[len(lines)-b:]) {
				continue
			}
			ex := m.scan(sub, eqExact)
			sn := 0
			for _, l := range oldLines(sub) {
				sn += nonSpaceLen(l.Text)
			}
			if sn < tinyAnchor && len(ex) > 1 {
				return nil, &locateError{err: ErrAmbiguous, level: LevelTrimmed, places: starts(ex),
					detail: "with outer context trimmed, the rest is too small to be located"}
			}
			sps, serr := m.ladder(sub, ex, 0)
			if serr != nil {
				return nil, &locateError{err: serr.err, level: LevelTrimmed, places: serr.places, detail: serr.detail}
			}
			found = appendDistinct(found, sps...)
		}
		if len(found) == 1 {
			found[0].level = LevelTrimmed
			return found[0], nil
		}
		if len(found) > 1 {
			return nil, &locateError{err: ErrAmbiguous, level: LevelTrimmed, places: starts(found)}
		}
	}
	return nil, &locateError{err: ErrNoMatch, level: LevelTrimmed}
}

// madeUp reports whether trimmed context lines occur nowhere in the file
// (whitespace set aside): only lines the model made up may be trimmed. A
// context line that exists elsewhere is evidence of another place, and
// trimming it could move the hunk there.
func (m *matcher) madeUp(trimmed []Line) bool {
	for _, l := range trimmed {
		if isBlank(l.Text) {
			continue
		}
		t := strings.TrimSpace(l.Text)
		for _, fl := range m.f.lines {
			if strings.TrimSpace(fl) == t {
				return false
			}
		}
	}
	return true
}

// ladder runs the levels from exact to indentation. It returns the places
// of the first level that finds any (one place is a match), or an error for
// an ambiguous level; no places and no error means nothing matched.
//
// Whitespace drift is tolerated, so uniqueness is judged with it tolerated:
// a hunk found once exactly but twice with trailing whitespace ignored is
// ambiguous, and the indentation level counts every place whose lines agree
// once leading whitespace is set aside, before asking whether one
// consistent re-indentation fits. A level's several places are one when
// the header's corrected line settles them (settledByHeader).
func (m *matcher) ladder(lines []Line, exact []*place, settle int) ([]*place, *locateError) {
	trailing := m.scan(lines, eqTrailing)
	if len(exact) == 1 && len(trailing) > 1 {
		if p := m.settledByHeader(lines, trailing, settle); p != nil {
			if p.start == exact[0].start {
				p = exact[0]
				p.level = LevelExact
			} else {
				p.level = LevelTrailingSpace
			}
			p.byHeader = true
			return []*place{p}, nil
		}
		return nil, &locateError{err: ErrAmbiguous, level: LevelTrailingSpace, places: starts(trailing),
			detail: "it matches one place exactly and others once trailing whitespace is ignored"}
	}
	type level struct {
		l    Level
		find func() ([]*place, int)
	}
	levels := []level{
		{LevelExact, func() ([]*place, int) { return exact, len(exact) }},
		{LevelTrailingSpace, func() ([]*place, int) { return trailing, len(trailing) }},
		{LevelBlankLines, func() ([]*place, int) { ps := m.scanDrift(lines, eqTrailing); return ps, len(ps) }},
		{LevelIndent, func() ([]*place, int) { return m.scanIndent(lines) }},
	}
	for _, lv := range levels {
		ps, cands := lv.find()
		if p := m.settledByHeader(lines, ps, settle); cands > 1 && len(ps) == cands && p != nil {
			p.byHeader = true
			ps, cands = []*place{p}, 1
		}
		switch {
		case cands > 1:
			var at []int
			if len(ps) > 1 {
				at = starts(ps)
			}
			return nil, &locateError{err: ErrAmbiguous, level: lv.l, places: at,
				detail: fmt.Sprintf("%d places agree with it at this level", cands)}
		case len(ps) == 1:
			if lv.l == LevelIndent {
				if at, ok := m.nearlyAsWritten(lines, ps[0].start); ok {
					return nil, &locateError{err: ErrAmbiguous, level: lv.l, places: []int{ps[0].start, at},
						detail: fmt.Sprintf("it matches only re-indented at line %d, and all its lines but one as written at line %d, where the file may have changed since; copy the lines exactly from the place you mean", ps[0].start+1, at+1)}
				}
			}
			ps[0].level = lv.l
			return ps, nil
		}
	}
	return nil, nil
}

// hintSlack is how far from the line a hunk header names the hunk's old
// lines may start and still be taken for that place (a model that drops
// leading context keeps the header).
const hintSlack = 3

// headerFar is how far, at least, every other place a hunk matches must
// lie from the line its header names for that line to choose between them.
const headerFar = 20

// settledByHeader returns the one of ps, a level's places of the hunk
// lines, that the header's corrected line settle (1-based; 0: none) names,
// within hintSlack, when every other of ps lies headerFar lines or more
// from it, and so does every place where the lines agree with indentation
// set aside (a look-alike the level did not count); else nil. A header
// that points between two places, or near two, settles nothing: the hunk
// stays ambiguous.
func (m *matcher) settledByHeader(lines []Line, ps []*place, settle int) *place {
	if settle <= 0 || len(ps) < 2 {
		return nil
	}
	at := settle - 1
	dist := func(p *place) int {
		if d := p.start - at; d >= 0 {
			return d
		}
		return at - p.start
	}
	var near *place
	for _, p := range ps {
		switch d := dist(p); {
		case d <= hintSlack && near == nil:
			near = p
		case d < headerFar:
			return nil
		}
	}
	if near == nil {
		return nil
	}
	for _, p := range m.scan(lines, eqIndent) {
		if p.start != near.start && dist(p) < headerFar {
			return nil
		}
	}
	return near
}

// nonBlankOld counts the hunk's old lines that are not blank.
func nonBlankOld(lines []Line) int {
	n := 0
	for _, l := range oldLines(lines) {
		if !isBlank(l.Text) {
			n++
		}
	}
	return n
}

// nearHint reports whether a place starting at file line start (from 0)
// is within hintSlack of the line a header names (from 1).
func nearHint(start, hint int) bool {
	return start >= hint-1-hintSlack && start <= hint-1+hintSlack
}

// changedAtHint reports a place near the line the header names, away from
// the one the hunk was found at, where all the hunk's non-blank old lines
// but one agree with the file as written: the hunk's target, changed since
// the model read it, while a look-alike elsewhere matched. Here the
// header refuses a place; it chooses one only between places far apart
// (settledByHeader).
func (m *matcher) changedAtHint(lines []Line, hint, found int) (int, bool) {
	if hint <= 0 || found >= hint-1-hintSlack && found <= hint-1+hintSlack {
		return 0, false
	}
	for s := max(hint-1-hintSlack, 0); s <= hint-1+hintSlack; s++ {
		if m.nearlyAt(lines, s) && m.missOnRemoved(lines, s) {
			return s, true
		}
	}
	return 0, false
}

// missOnRemoved reports whether the one old line that disagrees with the
// file from line s on is a removed line: a change where the edit applies.
func (m *matcher) missOnRemoved(lines []Line, s int) bool {
	for i, l := range oldLines(lines) {
		if !isBlank(l.Text) && !eqTrailing(m.f.lines[s+i], l.Text) {
			return l.Kind == Delete
		}
	}
	return false
}

// nearlyAt reports whether, from file line s on, all the hunk's non-blank
// old lines but one agree with the file as written (trailing whitespace
// aside), for a hunk of at least three such lines.
func (m *matcher) nearlyAt(lines []Line, s int) bool {
	old := oldLines(lines)
	fl := m.f.lines
	if s < 0 || s+len(old) > len(fl) {
		return false
	}
	nb, miss := 0, 0
	for i, l := range old {
		if isBlank(l.Text) {
			continue
		}
		nb++
		if !eqTrailing(fl[s+i], l.Text) {
			miss++
		}
	}
	return nb >= 3 && miss <= 1
}

// nearlyAsWritten looks for a place other than the one at start where
// every non-blank old line of the hunk but one agrees with the file as
// written, indentation included (trailing whitespace aside). A hunk found
// only re-indented somewhere while it nearly matches as written elsewhere
// most likely targets the other place, changed since the model read it
// (a look-alike block at another depth must not take the edit).
func (m *matcher) nearlyAsWritten(lines []Line, start int) (int, bool) {
	for s := 0; s+len(oldLines(lines)) <= len(m.f.lines); s++ {
		if s != start && m.nearlyAt(lines, s) {
			return s, true
		}
	}
	return 0, false
}

func eqExact(a, b string) bool    { return a == b }
func eqTrailing(a, b string) bool { return trimRightSpace(a) == trimRightSpace(b) }

func fill(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func starts(ps []*place) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.start
	}
	return out
}

func appendDistinct(ps []*place, more ...*place) []*place {
outer:
	for _, q := range more {
		for _, p := range ps {
			if p.start == q.start && p.end == q.end {
				continue outer
			}
		}
		ps = append(ps, q)
	}
	return ps
}

// at matches the hunk's old lines one to one from file line start.
func (m *matcher) at(lines []Line, start int, eq func(a, b string) bool) *place {
	fl := m.f.lines
	if start < 0 {
		return nil
	}
	align := fill(len(lines), -1)
	j := start
	for k, l := range lines {
		if l.Kind == Add {
			continue
		}
		if j >= len(fl) || !eq(fl[j], l.Text) {
			return nil
		}
		align[k] = j
		j++
	}
	return &place{start: start, end: j, align: align, lines: lines}
}

func (m *matcher) scan(lines []Line, eq func(a, b string) bool) []*place {
	var out []*place
	n := len(oldLines(lines))
	for s := 0; s+n <= len(m.f.lines); s++ {
		if p := m.at(lines, s, eq); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// scanDrift matches with eq (trailing whitespace ignored, or all leading
// and trailing whitespace) and blank lines allowed to differ between two
// context lines that have no change between them, so that where added lines
// go never depends on the drift.
func (m *matcher) scanDrift(lines []Line, eq func(a, b string) bool) []*place {
	hasBlank := false
	for _, l := range lines {
		if l.Kind == Context && isBlank(l.Text) {
			hasBlank = true
		}
	}
	fl := m.f.lines
	var out []*place
	for s := 0; s < len(fl); s++ {
		if !hasBlank && isBlank(fl[s]) {
			continue
		}
		p := m.driftAt(lines, s, eq)
		if p == nil || p.start >= p.end {
			continue
		}
		// Places that differ only in where blank lines align are one
		// place: their non-blank lines sit on the same file lines.
		dup := false
		for _, q := range out {
			if sameAnchor(lines, p, q) {
				dup = true
				break
			}
		}
		if !dup {
			out = appendDistinct(out, p)
		}
	}
	// A drift place that is a plain trailing-space place was already
	// rejected by the previous level; keep only places that drift.
	return out
}

// sameAnchor reports whether two places put every non-blank old line of
// the hunk on the same file line (and the hunk has such a line).
func sameAnchor(lines []Line, p, q *place) bool {
	some := false
	for k, l := range lines {
		if l.Kind == Add || isBlank(l.Text) {
			continue
		}
		some = true
		if p.align[k] != q.align[k] {
			return false
		}
	}
	return some
}

func (m *matcher) driftAt(lines []Line, start int, eq func(a, b string) bool) *place {
	fl := m.f.lines
	align := fill(len(lines), -1)
	j := start
	prevOld := -1
	addsBetween := false
	ctx := func(k int) bool { return k < 0 || k >= len(lines) || lines[k].Kind == Context }
	first := -1
	for k, l := range lines {
		if l.Kind == Add {
			addsBetween = true
			continue
		}
		for {
			if j < len(fl) && eq(fl[j], l.Text) {
				align[k] = j
				if first < 0 {
					first = j
				}
				j++
				break
			}
			fileBlank := j < len(fl) && isBlank(fl[j])
			hunkBlank := isBlank(l.Text)
			if hunkBlank && !fileBlank && l.Kind == Context && prevOld >= 0 && ctx(k-1) && ctx(k+1) {
				break // a blank context line the file does not have
			}
			if fileBlank && !hunkBlank && prevOld >= 0 && lines[prevOld].Kind == Context &&
				l.Kind == Context && !addsBetween {
				j++ // a blank line the hunk left out
				continue
			}
			return nil
		}
		prevOld = k
		addsBetween = false
	}
	if first != start {
		return nil
	}
	return &place{start: start, end: j, align: align, lines: lines}
}

// eqIndent compares lines with leading and trailing whitespace set aside.
func eqIndent(a, b string) bool {
	return strings.TrimLeft(trimRightSpace(a), " \t") == strings.TrimLeft(trimRightSpace(b), " \t")
}

// scanIndent matches lines whose content agrees once leading whitespace is
// set aside (blank lines may drift as in scanDrift), when one consistent
// re-indentation maps the hunk's old lines onto the file's and can render
// the added lines. It returns those places and the number of places whose
// lines agree at all, which is what decides ambiguity.
func (m *matcher) scanIndent(lines []Line) ([]*place, int) {
	var out []*place
	cands := 0
	for _, p := range m.scanDrift(lines, eqIndent) {
		cands++
		re := m.reindentFor(lines, p.align)
		if re == nil {
			continue
		}
		p.re = re
		out = append(out, p)
	}
	return out, cands
}
