package patch

import "strings"

// indentStyle is how a file indents.
type indentStyle struct {
	tabs bool // indents with tabs
	unit int  // spaces per level when indenting with spaces; 0 if unknown
}

func detectStyle(lines []string) indentStyle {
	tabs, spaces := 0, 0
	var widths []int
	for _, l := range lines {
		if isBlank(l) {
			continue
		}
		switch l[0] {
		case '\t':
			tabs++
		case ' ':
			spaces++
			widths = append(widths, len(l)-len(strings.TrimLeft(l, " ")))
		}
	}
	if tabs > 0 && tabs >= spaces {
		return indentStyle{tabs: true}
	}
	if spaces == 0 {
		return indentStyle{}
	}
	for _, u := range []int{8, 4, 3, 2} {
		n := 0
		for _, w := range widths {
			if w%u == 0 {
				n++
			}
		}
		if n*10 >= len(widths)*9 {
			return indentStyle{unit: u}
		}
	}
	return indentStyle{unit: 1}
}

func leadingSpace(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

type reindentKind uint8

const (
	reAddPrefix reindentKind = iota
	reRemovePrefix
	reSpacesToTabs // the hunk wrote each of the file's tabs as unit spaces
	reTabsToSpaces // the hunk wrote each of the file's unit spaces as a tab
	reScale        // the hunk indented with hunit spaces a level, the file with unit
)

// reindent maps the indentation of a hunk's lines onto the file's.
type reindent struct {
	kind   reindentKind
	prefix string
	unit   int
	hunit  int // reScale: the hunk's spaces per level
	delta  int // file levels minus hunk levels
	// at holds, per hunk line index, the added lines rendered line by
	// line (see lineRender); render is the fallback for other lines.
	at map[int]string
}

// renderAt re-indents the added line k of the hunk.
func (re *reindent) renderAt(k int, text string) (string, bool) {
	if t, ok := re.at[k]; ok {
		return t, true
	}
	return re.render(text)
}

// tabsThenSpaces splits indentation made of tabs followed by spaces.
func tabsThenSpaces(ws string) (tabs, spaces int, ok bool) {
	t := strings.TrimLeft(ws, "\t")
	if strings.Contains(t, "\t") {
		return 0, 0, false
	}
	return len(ws) - len(t), len(t), true
}

// fileIndent computes the file indentation for a hunk indentation, for
// checking old lines (r is the file's residual alignment spaces, known for
// old lines) or rendering added lines (r < 0: derive it).
func (re *reindent) fileIndent(hws string, r int) (string, bool) {
	switch re.kind {
	case reAddPrefix:
		return re.prefix + hws, true
	case reRemovePrefix:
		if !strings.HasPrefix(hws, re.prefix) {
			return "", false
		}
		return hws[len(re.prefix):], true
	case reSpacesToTabs:
		if strings.Contains(hws, "\t") {
			return "", false
		}
		w := len(hws)
		if r < 0 {
			r = w % re.unit
		}
		if w < r || (w-r)%re.unit != 0 {
			return "", false
		}
		lv := (w-r)/re.unit + re.delta
		if lv < 0 {
			return "", false
		}
		return strings.Repeat("\t", lv) + strings.Repeat(" ", r), true
	case reTabsToSpaces:
		t, s, ok := tabsThenSpaces(hws)
		if !ok || t+re.delta < 0 {
			return "", false
		}
		return strings.Repeat(" ", re.unit*(t+re.delta)+s), true
	case reScale:
		if strings.Contains(hws, "\t") || len(hws)%re.hunit != 0 {
			return "", false
		}
		return strings.Repeat(" ", len(hws)/re.hunit*re.unit), true
	}
	return "", false
}

// render re-indents an added line; blank lines become empty.
func (re *reindent) render(text string) (string, bool) {
	if isBlank(text) {
		return "", true
	}
	ws := leadingSpace(text)
	fws, ok := re.fileIndent(ws, -1)
	if !ok {
		return "", false
	}
	return fws + text[len(ws):], true
}

// indentPair is the leading whitespace of a hunk line and of the file line
// it matched.
type indentPair struct{ h, f string }

// reindentFor finds the re-indentation that maps the hunk's old lines onto
// the file lines they were matched with, or nil if there is none or the
// candidates disagree about the added lines. When only the context lines
// drifted (re-indented consistently among themselves) while the removed and
// added lines are written as the file has them, the added lines are kept as
// written.
func (m *matcher) reindentFor(lines []Line, align []int) *reindent {
	var pairs, ctxPairs []indentPair
	hunkTabs, hunkSpaces := false, false
	for k, l := range lines {
		if !isBlank(l.Text) {
			ws := leadingSpace(l.Text)
			if strings.Contains(ws, "\t") {
				hunkTabs = true
			} else if ws != "" {
				hunkSpaces = true
			}
		}
		if l.Kind == Add || align[k] < 0 || isBlank(l.Text) {
			continue
		}
		p := indentPair{leadingSpace(l.Text), leadingSpace(m.f.lines[align[k]])}
		pairs = append(pairs, p)
		if l.Kind == Context {
			ctxPairs = append(ctxPairs, p)
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	var valid []*reindent
	var renders [][]string
cand:
	for _, c := range m.mappings(pairs, hunkTabs, hunkSpaces) {
		var out []string
		for k, l := range lines {
			if l.Kind != Add {
				continue
			}
			s, ok := m.lineRender(c, lines, align, k)
			if !ok {
				continue cand
			}
			out = append(out, s)
			if c.at == nil {
				c.at = map[int]string{}
			}
			c.at[k] = s
		}
		valid = append(valid, c)
		renders = append(renders, out)
	}
	if len(valid) == 0 {
		return m.contextDrift(lines, align, ctxPairs)
	}
	agree := true
	for _, r := range renders[1:] {
		if strings.Join(r, "\n") != strings.Join(renders[0], "\n") {
			agree = false
		}
	}
	if agree {
		return valid[0]
	}
	var zero []*reindent
	for _, c := range valid {
		if c.delta == 0 {
			zero = append(zero, c)
		}
	}
	if len(zero) == 1 {
		return zero[0]
	}
	return nil
}

// lineRender re-indents the added line k line by line: a file may mix tab
// and space indentation (a Go file holding an indented raw string), so the
// added line follows the mapping its neighbouring old lines (the one before
// it, and the one after) follow. Where the file-wide mapping c derives a
// neighbour's indentation by itself, the line is rendered with c; where the
// neighbour's file line is indented otherwise (spaces kept as written in a
// tab file), with the prefix change that neighbour shows. Two neighbours
// that disagree about the line refuse it.
func (m *matcher) lineRender(c *reindent, lines []Line, align []int, k int) (string, bool) {
	text := lines[k].Text
	if isBlank(text) {
		return "", true
	}
	by := func(j int) (string, bool) {
		hn, fn := leadingSpace(lines[j].Text), leadingSpace(m.f.lines[align[j]])
		if got, ok := c.fileIndent(hn, -1); ok && got == fn {
			return c.render(text)
		}
		ws := leadingSpace(text)
		switch {
		case strings.HasSuffix(fn, hn) && !strings.Contains(ws, "\t") == !strings.Contains(hn, "\t"):
			return fn[:len(fn)-len(hn)] + text, true
		case strings.HasSuffix(hn, fn) && strings.HasPrefix(ws, hn[:len(hn)-len(fn)]):
			return text[len(hn)-len(fn):], true
		}
		return "", false
	}
	// A neighbour without indentation on either side says nothing about
	// the style around it; the next one out does.
	neighbour := func(from, step int) int {
		for j := from; j >= 0 && j < len(lines); j += step {
			if lines[j].Kind != Add && align[j] >= 0 && !isBlank(lines[j].Text) &&
				(leadingSpace(lines[j].Text) != "" || leadingSpace(m.f.lines[align[j]]) != "") {
				return j
			}
		}
		return -1
	}
	prev, next := neighbour(k-1, -1), neighbour(k+1, 1)
	if prev < 0 && next < 0 {
		return c.render(text)
	}
	var got []string
	for _, j := range []int{prev, next} {
		if j < 0 {
			continue
		}
		s, ok := by(j)
		if !ok {
			return "", false
		}
		got = append(got, s)
	}
	if len(got) == 2 && got[0] != got[1] {
		return "", false
	}
	return got[0], true
}

// mappings returns the re-indentations that map every pair's hunk
// indentation onto its file indentation.
func (m *matcher) mappings(pairs []indentPair, hunkTabs, hunkSpaces bool) []*reindent {
	// Line by line: a line the file indents in the other style (spaces in
	// a raw string of a tab-indented file, tabs in a string of a
	// space-indented one) that the hunk wrote exactly as the file has it
	// needs no mapping, and says nothing about the one the rest needs.
	var own []indentPair
	for _, p := range pairs {
		if p.h == p.f && m.otherStyle(p.f) {
			continue
		}
		own = append(own, p)
	}
	if len(own) == 0 {
		return nil
	}
	if len(own) < len(pairs) {
		hunkTabs, hunkSpaces = false, false
		for _, p := range own {
			if strings.Contains(p.h, "\t") {
				hunkTabs = true
			} else if p.h != "" {
				hunkSpaces = true
			}
		}
	}
	pairs = own
	var cands []*reindent
	switch {
	case m.style.tabs && hunkSpaces && !hunkTabs:
		for _, u := range []int{4, 8, 2} {
			t, r, ok := tabsThenSpaces(pairs[0].f)
			if !ok {
				break
			}
			w := len(pairs[0].h)
			if w < r || (w-r)%u != 0 {
				continue
			}
			cands = append(cands, &reindent{kind: reSpacesToTabs, unit: u, delta: t - (w-r)/u})
		}
	case !m.style.tabs && m.style.unit > 0 && hunkTabs:
		t, s, ok := tabsThenSpaces(pairs[0].h)
		w := len(pairs[0].f)
		if ok && !strings.Contains(pairs[0].f, "\t") && w >= s && (w-s)%m.style.unit == 0 {
			cands = append(cands, &reindent{kind: reTabsToSpaces, unit: m.style.unit, delta: (w-s)/m.style.unit - t})
		}
	default:
		h, f := pairs[0].h, pairs[0].f
		switch {
		case strings.HasSuffix(f, h):
			cands = append(cands, &reindent{kind: reAddPrefix, prefix: f[:len(f)-len(h)]})
		case strings.HasSuffix(h, f):
			cands = append(cands, &reindent{kind: reRemovePrefix, prefix: h[:len(h)-len(f)]})
		}
		if !m.style.tabs && m.style.unit > 1 && !hunkTabs {
			for _, hu := range []int{2, 4, 8} {
				if hu != m.style.unit {
					cands = append(cands, &reindent{kind: reScale, unit: m.style.unit, hunit: hu})
				}
			}
		}
	}
	var valid []*reindent
cand:
	for _, c := range cands {
		for _, p := range pairs {
			r := -1
			if c.kind == reSpacesToTabs {
				_, r, _ = tabsThenSpaces(p.f)
			}
			got, ok := c.fileIndent(p.h, r)
			if !ok || got != p.f {
				continue cand
			}
		}
		valid = append(valid, c)
	}
	return valid
}

// otherStyle reports whether an indentation is in the other style than
// the file's: spaces only in a tab-indented file, or a tab in a file
// indented with spaces.
func (m *matcher) otherStyle(ws string) bool {
	if ws == "" {
		return false
	}
	if m.style.tabs {
		return !strings.Contains(ws, "\t")
	}
	return m.style.unit > 0 && strings.Contains(ws, "\t")
}

// contextDrift accepts a hunk whose context lines alone were re-indented
// (one consistent mapping fits them) while its removed lines have the
// file's indentation exactly and its added lines are in the file's style:
// the change itself was written in the file's frame, so the added lines are
// kept as written. It returns the identity re-indentation, or nil.
func (m *matcher) contextDrift(lines []Line, align []int, ctx []indentPair) *reindent {
	if len(ctx) == 0 {
		return nil
	}
	ctxTabs, ctxSpaces, drift := false, false, false
	for _, p := range ctx {
		if strings.Contains(p.h, "\t") {
			ctxTabs = true
		} else if p.h != "" {
			ctxSpaces = true
		}
		if p.h != p.f {
			drift = true
		}
	}
	if !drift || len(m.mappings(ctx, ctxTabs, ctxSpaces)) == 0 {
		return nil
	}
	for k, l := range lines {
		if isBlank(l.Text) {
			continue
		}
		ws := leadingSpace(l.Text)
		switch {
		case l.Kind == Delete && align[k] >= 0:
			if ws != leadingSpace(m.f.lines[align[k]]) {
				return nil
			}
		case l.Kind == Add:
			if m.style.tabs && strings.Trim(ws, "\t") != "" || !m.style.tabs && strings.Contains(ws, "\t") {
				return nil
			}
		}
	}
	return &reindent{kind: reAddPrefix}
}
