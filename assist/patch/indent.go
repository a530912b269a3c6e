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
)

// reindent maps the indentation of a hunk's lines onto the file's.
type reindent struct {
	kind   reindentKind
	prefix string
	unit   int
	delta  int // file levels minus hunk levels
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

// reindentFor finds the re-indentation that maps the hunk's old lines onto
// the file lines they were matched with, or nil if there is none or the
// candidates disagree about the added lines.
func (m *matcher) reindentFor(lines []Line, align []int) *reindent {
	type pair struct{ h, f string }
	var pairs []pair
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
		pairs = append(pairs, pair{leadingSpace(l.Text), leadingSpace(m.f.lines[align[k]])})
	}
	if len(pairs) == 0 {
		return nil
	}
	var cands []*reindent
	switch {
	case m.style.tabs && hunkSpaces && !hunkTabs:
		for _, u := range []int{4, 8, 2} {
			_, r, ok := tabsThenSpaces(pairs[0].f)
			if !ok {
				break
			}
			t, _, _ := tabsThenSpaces(pairs[0].f)
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
	}
	var valid []*reindent
	var renders [][]string
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
		var out []string
		for _, l := range lines {
			if l.Kind != Add {
				continue
			}
			s, ok := c.render(l.Text)
			if !ok {
				continue cand
			}
			out = append(out, s)
		}
		valid = append(valid, c)
		renders = append(renders, out)
	}
	if len(valid) == 0 {
		return nil
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
